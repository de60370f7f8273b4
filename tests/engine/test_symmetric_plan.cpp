// Plans of a matrix declared symmetric (spmv_options_t::matrix_type): what they report (info,
// describe), refusals, sym_diag chosen on banded matrices, update_values in the input's order,
// measure mode, k vectors, and GPU plans from host and device memory. Every CPU format on every
// test matrix: test_kernels_all.cpp; the full matrix built from a triangle: test_symmetric.cpp.
#include <catch2/catch.hpp>
#include <complex>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "engine/formats/format.hpp"
#include "engine/gen/generators.hpp"
#include "engine/plan.hpp"
#include "engine/reference.hpp"
#include "engine/stats.hpp"
#include "runtime/device_buffer.hpp"
#include "spmvjit/spmvjit.hpp"
#include "tests/test_support.hpp"

namespace {

using namespace spmvjit;
using Csr64 = HostCsr<int64_t, double>;

spmv_csr_t view(const Csr64& a) {
  return csr_view<int64_t, double>(a.rows, a.cols, a.nnz(), a.row_ptr.data(),
                                   a.col_idx.empty() ? nullptr : a.col_idx.data(),
                                   a.val.empty() ? nullptr : a.val.data());
}

// A matrix (`spec`'s pattern, seed 1) whose two triangles differ: only the declared one may count.
Csr64 lopsided(const std::string& spec, uint64_t seed) {
  Csr64 a = generate_matrix(spec, 1);
  const auto r = random_vector<double>(a.nnz(), seed + 7);
  for (int64_t i = 0; i < a.rows; ++i)
    for (int64_t k = a.row_ptr[size_t(i)]; k < a.row_ptr[size_t(i) + 1]; ++k)
      a.val[size_t(k)] = a.col_idx[size_t(k)] > i ? 100 + r[size_t(k)] : r[size_t(k)];
  return a;
}

spmvjit::Options symmetric_options(spmv_backend_t backend, spmv_fill_mode_t fill,
                                   const char* format = nullptr) {
  spmvjit::Options o;
  o.backend = backend;
  o.matrix_type = SPMV_MATRIX_SYMMETRIC;
  o.fill_mode = fill;
  o.format = format;
  return o;
}

// y = alpha * S x + beta * y for k vectors (column-major) through `plan`, S the full matrix of
// `a`'s `fill` triangle; x and y on `device` when given. "" or what is wrong.
std::string check_symmetric(spmv_plan_t plan, const Csr64& a, bool upper, Backend* device, uint64_t seed,
                            int64_t k = 1) {
  const Csr64 s = reference_symmetric_full(a, upper);
  for (double beta : {0.0, -0.5}) {
    const auto x = random_vector<double>(a.rows * k, seed);
    std::vector<double> y = random_vector<double>(a.rows * k, seed + 1);
    if (beta == 0) std::fill(y.begin(), y.end(), std::numeric_limits<double>::quiet_NaN());
    const auto y0 = y;
    const double alpha = 1.5;
    const size_t bytes = x.size() * 8;
    DeviceBuffer dx, dy;
    const double* px = x.data();
    double* py = y.data();
    if (device && bytes) {
      dx = DeviceBuffer(*device, bytes), dy = DeviceBuffer(*device, bytes);
      device->upload(dx.get(), x.data(), bytes);
      device->upload(dy.get(), y.data(), bytes);
      px = dx.as<const double>(), py = dy.as<double>();
    }
    const spmv_status_t st = k == 1 ? spmv_execute(plan, &alpha, px, &beta, py, nullptr)
                                    : spmm_execute(plan, &alpha, px, a.rows, &beta, py, a.rows, nullptr);
    if (st != SPMV_STATUS_SUCCESS) return spmv_last_error();
    if (device && bytes) {
      device->synchronize(nullptr);
      device->download(y.data(), dy.get(), bytes);
    }
    const std::string bad =
        check_vectors(s, k, false, alpha, x.data(), a.rows, beta, y0.data(), y.data(), a.rows);
    if (!bad.empty()) return "beta " + std::to_string(beta) + ": " + bad;
  }
  return "";
}

}  // namespace

TEST_CASE("symmetric: a banded matrix gets sym_diag, one triangle stored, and says so", "[symmetric]") {
  if (!test::require_cpu_backend()) return;
  const Csr64 a = lopsided("poisson2d:100", 1);
  const spmv_csr_t desc = view(a);
  for (spmv_fill_mode_t fill : {SPMV_FILL_LOWER, SPMV_FILL_UPPER}) {
    INFO("fill " << int(fill));
    spmvjit::SpmvPlan plan(desc, symmetric_options(SPMV_BACKEND_CPU, fill));
    const Plan& p = plan_impl(plan.get());
    const Json d = p.describe_json();
    CHECK(d["format"] == Json("sym_diag"));
    CHECK(d["symmetric"]["storage"] == Json("one triangle"));
    CHECK(d["symmetric"]["fill"] == Json(fill == SPMV_FILL_UPPER ? "upper" : "lower"));
    CHECK(d["symmetric"]["input_nnz"].as_int() == a.nnz());
    CHECK(d["symmetric"]["full_nnz"].as_int() == reference_symmetric_full(a, fill == SPMV_FILL_UPPER).nnz());
    CHECK(d["stats"]["symmetric"] == Json(true));
    CHECK(d["facts"]["diagonals"].as_int() == 3);  // offsets 0, 1 and the grid's width
    CHECK(d["bytes"]["matrix"].as_int() < d["bytes"]["csr_equivalent"].as_int() / 2);
    spmv_plan_info_t info = SPMV_PLAN_INFO_INIT;
    REQUIRE(spmv_plan_info(plan.get(), &info) == SPMV_STATUS_SUCCESS);
    CHECK(info.matrix_type == SPMV_MATRIX_SYMMETRIC);
    CHECK(info.fill_mode == fill);
    CHECK(info.nnz == a.nnz());  // the input's count
    CHECK(check_symmetric(plan.get(), a, fill == SPMV_FILL_UPPER, nullptr, 3) == "");
  }
  // The same matrix planned as a general one never sees sym_diag: forcing it says why.
  spmvjit::Options o;
  o.backend = SPMV_BACKEND_CPU;
  spmvjit::SpmvPlan general(desc, o);
  CHECK(plan_impl(general.get()).describe_json()["symmetric"].is_null());
  o.format = "sym_diag";
  spmv_plan_t plan = nullptr;
  CHECK(spmv_plan(&plan, &desc, &o) == SPMV_STATUS_UNSUPPORTED);
  CHECK(std::string(spmv_last_error()).find("not declared symmetric") != std::string::npos);
}

TEST_CASE("symmetric: sym_diag bakes its diagonal count into GPU kernels of real values", "[symmetric]") {
  const Format* f = find_format("sym_diag");
  REQUIRE(f);
  TargetInfo gpu;
  gpu.backend = BackendKind::cuda, gpu.target = "sm_90", gpu.sm_count = 132;
  TargetInfo cpu;
  cpu.target = "x86_64-test", cpu.threads = 2;
  CHECK(f->kernel_variants(gpu, ValueType::f64).size() == 16);  // run-time count, DIAGS 2 to 16
  CHECK(f->kernel_variants(gpu, ValueType::f32).back() == FormatParams{{"DIAGS", 16}});
  CHECK(f->kernel_variants(cpu, ValueType::f64).size() == 1);
  CHECK(f->kernel_variants(gpu, ValueType::c64).size() == 2);  // symmetric and Hermitian
  struct Case {
    const char* spec;
    int64_t diagonals;  // kept upper ones, the main one included
  };
  for (const Case& c :
       {Case{"stencil27:8", 14}, Case{"poisson2d:30", 3}, Case{"diag:400:41", 21}, Case{"diag:50:1", 1}}) {
    const Csr64 a = generate_matrix(c.spec, 1);
    std::vector<std::complex<double>> cv(a.val.begin(), a.val.end());
    CsrRef complex_ref = a.ref();
    complex_ref.value = ValueType::c64, complex_ref.val = cv.data();
    const bool bakes = c.diagonals >= 2 && c.diagonals <= 16;
    for (const CsrRef& ref : {a.ref(), complex_ref})
      for (const TargetInfo& t : {gpu, cpu}) {
        const bool real = !is_complex(ref.value), baked = bakes && real && t.gpu();
        INFO(c.spec << (real ? " real" : " complex") << " on " << (t.gpu() ? "sm_90" : "the CPU"));
        MatrixStats s = compute_stats(ref);
        s.symmetric = true;
        const std::vector<FormatParams> cands = f->candidates(ref, s, t);
        REQUIRE(cands.size() == 1);
        // The planner's guess from the row sample (these small matrices' samples hold every row but
        // the band's), then the converter's count from the whole matrix, whatever it was given.
        if (c.diagonals != 21) CHECK(cands[0].count("DIAGS") == size_t(baked));
        if (baked && c.diagonals != 21) CHECK(cands[0].at("DIAGS") == c.diagonals);
        for (int64_t guess : {int64_t(0), int64_t(7), int64_t(40)}) {
          FormatParams p = cands[0];
          if (guess) p["DIAGS"] = guess;
          const FormatData d = f->convert(ref, p, t);
          CHECK(d.facts["diagonals"].as_int() == c.diagonals);
          CHECK(d.params.count("DIAGS") == size_t(baked));
          if (baked) CHECK(d.params.at("DIAGS") == c.diagonals);
          CHECK(d.params.at("SYMMETRIC") == 1);
        }
      }
  }
}

TEST_CASE("symmetric: unknown matrix types and fill modes, non-square matrices are refused", "[symmetric]") {
  if (!test::require_cpu_backend()) return;
  const Csr64 a = generate_matrix("random:40:1:5", 2);
  const spmv_csr_t desc = view(a);
  spmv_options_t o;
  spmv_options_init(&o);
  o.backend = SPMV_BACKEND_CPU;
  spmv_plan_t plan = nullptr;
  const int bad = 3;  // past HERMITIAN
  std::memcpy(&o.matrix_type, &bad, sizeof bad);
  CHECK(spmv_plan(&plan, &desc, &o) == SPMV_STATUS_INVALID_VALUE);
  CHECK(std::string(spmv_last_error()).find("matrix type") != std::string::npos);
  o.matrix_type = SPMV_MATRIX_SYMMETRIC;
  std::memcpy(&o.fill_mode, &bad, sizeof bad);
  CHECK(spmv_plan(&plan, &desc, &o) == SPMV_STATUS_INVALID_VALUE);
  CHECK(std::string(spmv_last_error()).find("fill mode") != std::string::npos);
  o.fill_mode = SPMV_FILL_UPPER;
  const Csr64 wide = generate_matrix("random:40:1:5:41", 2);
  const spmv_csr_t wdesc = view(wide);
  CHECK(spmv_plan(&plan, &wdesc, &o) == SPMV_STATUS_INVALID_VALUE);
  CHECK(std::string(spmv_last_error()).find("square") != std::string::npos);
  CHECK(plan == nullptr);
  // An invalid entry anywhere (the ignored triangle included) is still an invalid CSR.
  Csr64 broken = a;
  broken.col_idx[3] = -1;
  const spmv_csr_t bdesc = view(broken);
  CHECK(spmv_plan(&plan, &bdesc, &o) == SPMV_STATUS_INVALID_MATRIX);
  CHECK(plan == nullptr);
}

TEST_CASE("symmetric: update_values takes the input's order, the ignored triangle's too", "[symmetric]") {
  if (!test::require_cpu_backend()) return;
  for (const char* spec : {"poisson3d:12", "random:3000:0:9"})
    for (const char* format : {"sym_diag", "csr", "sell_diag", "ell"})
      for (spmv_fill_mode_t fill : {SPMV_FILL_LOWER, SPMV_FILL_UPPER}) {
        INFO(spec << ", " << format << ", fill " << int(fill));
        const bool upper = fill == SPMV_FILL_UPPER;
        const Csr64 a = lopsided(spec, 4);
        const spmv_csr_t desc = view(a);
        spmv_plan_t plan = nullptr;
        const spmvjit::Options o = symmetric_options(SPMV_BACKEND_CPU, fill, format);
        const spmv_status_t st = spmv_plan(&plan, &desc, &o);
        if (st == SPMV_STATUS_UNSUPPORTED) continue;  // sym_diag on the random one
        REQUIRE(st == SPMV_STATUS_SUCCESS);
        const std::unique_ptr<spmv_plan_s, decltype(&spmv_plan_destroy)> guard(plan, &spmv_plan_destroy);
        REQUIRE(check_symmetric(plan, a, upper, nullptr, 5) == "");
        const Csr64 fresh = lopsided(spec, 6);
        REQUIRE(spmv_plan_update_values(plan, fresh.val.data(), SPMV_MEMORY_HOST) == SPMV_STATUS_SUCCESS);
        CHECK(check_symmetric(plan, fresh, upper, nullptr, 7) == "");
        REQUIRE(spmv_plan_update_values(plan, a.val.data(), SPMV_MEMORY_HOST) == SPMV_STATUS_SUCCESS);
        CHECK(check_symmetric(plan, a, upper, nullptr, 8) == "");
        CHECK(plan_impl(plan).values_update().starts_with("gather through a value map"));
      }
}

TEST_CASE("symmetric: measure mode and k vectors", "[symmetric]") {
  if (!test::require_cpu_backend()) return;
  const Csr64 a = lopsided("poisson2d:60", 9);
  const spmv_csr_t desc = view(a);
  spmvjit::Options o = symmetric_options(SPMV_BACKEND_CPU, SPMV_FILL_LOWER);
  o.cache_dir = "";  // no wisdom: measured here
  o.planning = SPMV_PLANNING_MEASURE;
  spmvjit::SpmvPlan measured(desc, o);
  const Json d = plan_impl(measured.get()).describe_json();
  CHECK(d["planner"]["measured"].size() >= 1);
  CHECK(check_symmetric(measured.get(), a, false, nullptr, 10) == "");
  for (int k : {3, 8}) {
    spmvjit::Options m = symmetric_options(SPMV_BACKEND_CPU, SPMV_FILL_UPPER);
    m.vectors = k;
    spmvjit::SpmvPlan many(desc, m);
    CHECK(check_symmetric(many.get(), a, true, nullptr, 11, k) == "");
  }
}

TEST_CASE("symmetric device: plans from host and device memory, every device format", "[cuda][symmetric]") {
  if (!test::gpu_available()) {
    SPMVJIT_SKIP("no GPU device");
  }
  Backend& b = test::gpu_backend();
  uint64_t seed = 70;
  // diag:400:41 keeps 21 diagonals, past what sym_diag's GPU kernels bake (DIAGS): its loop counts at run
  // time.
  for (const char* spec : {"poisson2d:60", "stencil27:9", "random:3000:0:9", "diag:50", "diag:400:41"}) {
    const Csr64 a = lopsided(spec, 12);
    const spmv_csr_t host = view(a);
    DeviceBuffer d[3];
    const void* src[3] = {a.row_ptr.data(), a.col_idx.data(), a.val.data()};
    const size_t bytes[3] = {a.row_ptr.size() * 8, a.col_idx.size() * 8, a.val.size() * 8};
    for (int i = 0; i < 3; ++i) {
      d[i] = DeviceBuffer(b, bytes[i]);
      b.upload(d[i].get(), src[i], bytes[i]);
    }
    spmv_csr_t dev = host;
    dev.row_ptr = d[0].get(), dev.col_idx = d[1].get(), dev.values = d[2].get();
    dev.memory = SPMV_MEMORY_DEVICE;
    std::vector<std::string> formats = {""};
    for (const Format* f : all_formats())
      if (f->supports(b.kind()) && !f->multi_vector()) formats.push_back(f->name());
    int one_triangle = 0;
    for (const spmv_csr_t* desc : {&host, static_cast<const spmv_csr_t*>(&dev)})
      for (const std::string& f : formats) {
        const bool on_device = desc == &dev, upper = on_device;
        INFO(spec << ", format " << (f.empty() ? "auto" : f) << ", " << (on_device ? "device" : "host")
                  << " memory");
        spmvjit::Options o = symmetric_options(test::gpu_api(), upper ? SPMV_FILL_UPPER : SPMV_FILL_LOWER,
                                               f.empty() ? nullptr : f.c_str());
        spmv_plan_t plan = nullptr;
        const spmv_status_t st = spmv_plan(&plan, desc, &o);
        if (st == SPMV_STATUS_UNSUPPORTED) continue;
        REQUIRE(st == SPMV_STATUS_SUCCESS);
        const FormatData& data = plan_impl(plan).data();
        if (data.format == "sym_diag") {  // the kernel's baked count is the arrays'
          ++one_triangle;
          const int64_t k = data.facts["diagonals"].as_int();
          CHECK(data.params.count("DIAGS") == size_t(k >= 2 && k <= 16));
          if (data.params.count("DIAGS")) CHECK(data.params.at("DIAGS") == k);
          const std::string kernel = plan_impl(plan).describe_json()["kernel"]["spec"].as_string();
          CHECK((kernel.find(";DIAGS=" + std::to_string(k)) != std::string::npos) == (k >= 2 && k <= 16));
        }
        CHECK(check_symmetric(plan, a, upper, &b, ++seed) == "");
        const Csr64 fresh = lopsided(spec, seed);
        DeviceBuffer dv(b, fresh.val.size() * 8);
        b.upload(dv.get(), fresh.val.data(), fresh.val.size() * 8);
        REQUIRE(spmv_plan_update_values(plan, on_device ? dv.get() : fresh.val.data(),
                                        on_device ? SPMV_MEMORY_DEVICE : SPMV_MEMORY_HOST) ==
                SPMV_STATUS_SUCCESS);
        CHECK(check_symmetric(plan, fresh, upper, &b, ++seed) == "");
        spmv_plan_destroy(plan);
      }
    // Forced on both memories, and auto's choice on the banded ones.
    if (std::string(spec).rfind("random", 0) != 0) CHECK(one_triangle >= 2);
  }
}
