// CUDA backend tests: every GPU kernel spec compiles through NVRTC without a device (CI);
// with a device, every format matches the long-double reference on device-resident x/y.
#ifdef SPMVJIT_WITH_CUDA
#include <dirent.h>
#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <thread>
#include <tuple>

#include "engine/device_plan.hpp"
#include "engine/formats/format.hpp"
#include "engine/gen/generators.hpp"
#include "engine/io/matrix_market.hpp"
#include "engine/reference.hpp"
#include "engine/stats.hpp"
#include "engine/value_codec.hpp"
#include "runtime/backend.hpp"
#include "runtime/cache/kernel_cache.hpp"
#include "runtime/cuda/cuda_backend.hpp"
#include "runtime/device_buffer.hpp"
#include "spmvjit/spmvjit.h"
#include "tests/runtime/cuda_test_support.hpp"

using namespace spmvjit;
using namespace spmvjit::cuda_test;

namespace {

bool have_nvrtc() { return cuda_nvrtc_loaded(); }

template <class F>
spmv_status_t status_of(F&& f, std::string* message = nullptr) {
  try {
    f();
  } catch (const Error& e) {
    if (message) *message = e.what();
    return e.status();
  }
  return SPMV_STATUS_SUCCESS;
}

std::vector<const Format*> gpu_formats() {
  std::vector<const Format*> out;
  for (const Format* f : all_formats())
    if (f->supports(test::gpu_kind())) out.push_back(f);
  return out;
}

struct CompileJob {
  KernelSpec spec;
  std::string error;
  size_t bytes = 0;
  bool elf = false;
  double seconds = 0;
};

// The (format, value, index, variant) specs for `arch` (a share of `share`: test::compile_share),
// compiled into the disk cache `dir` on all cores (NVRTC is thread-safe for distinct programs).
// Of the specs that differ only in a baked count, the representatives (test::compile_test_takes).
// `value`: the specs of that value type; unset, every real one (the complex test compiles the others).
std::vector<CompileJob> compile_all(const std::string& arch, const std::string& dir, unsigned share,
                                    std::optional<ValueType> value = std::nullopt) {
  Backend& b = cuda_compiler(arch);
  std::vector<CompileJob> jobs;
  const auto wanted = [&](const KernelSpec& s) { return value ? s.value == *value : !is_complex(s.value); };
  for (const KernelSpec& s :
       test::compile_test_specs(all_kernel_specs(b.target()), arch, test::compile_share(share), wanted))
    jobs.push_back({s});
  std::atomic<size_t> next{0};
  auto worker = [&] {
    for (size_t k; (k = next++) < jobs.size();) {
      CompileJob& j = jobs[k];
      const auto t0 = std::chrono::steady_clock::now();
      try {
        CacheOutcome o;
        ensure_cached(b, j.spec, dir, &o);
        std::vector<char> bin;
        std::string why;
        if (!read_cache_entry(cache_entry_path(dir, o.key), o.key, &bin, &why))
          j.error = "cache entry: " + why;
        j.bytes = bin.size();
        // A cubin is an ELF image (PTX only for devices newer than this NVRTC).
        j.elf = bin.size() > 4 && bin[0] == 0x7f && bin[1] == 'E' && bin[2] == 'L' && bin[3] == 'F';
      } catch (const std::exception& e) {
        j.error = e.what();
      }
      j.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    }
  };
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < std::max(1u, std::thread::hardware_concurrency()); ++t) pool.emplace_back(worker);
  for (auto& t : pool) t.join();
  return jobs;
}

}  // namespace

// Complex values' specs are left to the next test (sm_90), which CI would otherwise compile twice
// more: warmup finds stand-ins for them.
TEST_CASE(
    "cuda: every GPU kernel spec compiles through NVRTC for sm_90 (a share for sm_80) and warmup finds them",
    "[cuda]") {
  if (!have_nvrtc()) {
    SPMVJIT_SKIP("NVRTC not found");
  }
  REQUIRE(!gpu_formats().empty());
  const auto dir =
      std::filesystem::temp_directory_path() / ("spmvjit_cuda_compile_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  const auto t0 = std::chrono::steady_clock::now();
  std::map<std::string, std::pair<int, double>> per_format;  // specs, seconds
  std::map<std::string, int> per_arch;
  double slowest = 0;
  for (const char* arch : {"sm_80", "sm_90"}) {
    // sm_80: a share of the specs (test::compile_share), sm_90 every one.
    for (const CompileJob& j : compile_all(arch, dir.string(), std::string(arch) == "sm_80" ? 6 : 1)) {
      INFO(j.spec.serialize() << "\n" << j.error);
      CHECK(j.error == "");
      CHECK(j.elf);
      auto& pf = per_format[j.spec.format];
      ++pf.first;
      pf.second += j.seconds;
      slowest = std::max(slowest, j.seconds);
      ++per_arch[arch];
    }
  }
  const int n = per_arch["sm_80"] + per_arch["sm_90"];
  const double total = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf(
      "cuda: %d kernel specs compiled for sm_80 + sm_90 in %.2f s wall on %u threads (slowest %.0f ms)\n", n,
      total, std::max(1u, std::thread::hardware_concurrency()), 1e3 * slowest);
  for (const auto& [f, c] : per_format)
    std::printf("  %-12s %3d specs, %5.0f ms each\n", f.c_str(), c.first, 1e3 * c.second / c.first);
  CHECK(per_arch["sm_90"] > per_arch["sm_80"]);
  CHECK(n >= 2 * 2 * 2 * int(gpu_formats().size()));
  int files = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir)) files += e.path().extension() == ".bin";
  CHECK(files == n);
  // The specs not compiled (other baked counts, complex values) get stand-in entries under their keys.
  Backend& sm90 = cuda_compiler("sm_90");
  const std::vector<KernelSpec> all = all_kernel_specs(sm90.target());
  for (const KernelSpec& s : all)
    if (!test::compile_test_takes(s) || is_complex(s.value)) {
      const std::string key = cache_key(s, generate_source_for(sm90, s), sm90.compiler_version());
      write_cache_entry(cache_entry_path(dir.string(), key), key, s.serialize(), {'c', 'u'});
      ++files;
    }
  // spmv_warmup for a named sm_XY needs no device and enumerates exactly these specs: every one
  // is found on disk (no new file), and a malformed target is refused.
  int count = -1;
  REQUIRE(spmv_warmup(SPMV_BACKEND_CUDA, "sm_90", dir.c_str(), &count) == SPMV_STATUS_SUCCESS);
  CHECK(count == int(all.size()));
  CHECK(count > per_arch["sm_90"]);  // sym_diag's DIAGS 3 to 15
  int after = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir)) after += e.path().extension() == ".bin";
  CHECK(after == files);
  CHECK(spmv_warmup(SPMV_BACKEND_CUDA, "sm_xx", dir.c_str(), &count) == SPMV_STATUS_INVALID_VALUE);
  std::filesystem::remove_all(dir);
}

// The complex specs (the test above leaves them out): every format that takes complex values, both
// index types, complex double into cubins, and a share of the complex float ones
// (test::compile_share).
TEST_CASE(
    "cuda: every complex double kernel spec (a share of the complex float ones) compiles through NVRTC for "
    "sm_90",
    "[cuda][complex]") {
  if (!have_nvrtc()) {
    SPMVJIT_SKIP("NVRTC not found");
  }
  const test::TempDir dir;
  std::set<std::string> formats;
  int n = 0;
  for (const auto& [value, share] : {std::pair{ValueType::c64, 1u}, std::pair{ValueType::c32, 3u}})
    for (const CompileJob& j : compile_all("sm_90", dir.path(), share, value)) {
      INFO(j.spec.serialize() << "\n" << j.error);
      CHECK(j.error == "");
      CHECK(j.elf);
      CHECK(j.spec.constants.count(kValueCodecParam) == 0);
      formats.insert(j.spec.format);
      ++n;
    }
  // csr_mm's (index, value, LAYOUT, VECTORS, WIDE) among the specs: k vectors of complex values.
  std::set<std::tuple<int, int, int64_t, int64_t, int64_t>> mm;
  for (const KernelSpec& s : all_kernel_specs(cuda_compiler("sm_90").target()))
    if (s.format == "csr_mm" && is_complex(s.value)) {
      const auto& c = s.constants;
      mm.insert(
          {int(s.index), int(s.value), c.at("LAYOUT"), c.at("VECTORS"), c.count("WIDE") ? c.at("WIDE") : 0});
    }
  // Both layouts (row-major is also staged X's kernel), k exact up to 8, the bounds 16 and 32 and
  // any k (0), a thread (WIDE 0) and 8 lanes (WIDE 1) per row column-major, a group and a warp
  // row-major (WIDE 1 only where it differs: a group is a whole warp past 16 vectors of complex
  // doubles, one a lane, while complex floats go two a lane), for both index types and c32/c64.
  for (IndexType i : {IndexType::i32, IndexType::i64})
    for (ValueType v : {ValueType::c32, ValueType::c64})
      for (int64_t layout : {0, 1})
        for (int64_t k : {1, 2, 3, 4, 5, 6, 7, 8, 16, 32, 0})
          for (int64_t wide : {0, 1}) {
            const bool same_as_narrow = layout == 1 && wide == 1 && (k == 0 || k > 16) && v == ValueType::c64;
            INFO("csr_mm " << to_string(i) << " " << to_string(v) << " LAYOUT " << layout << " VECTORS " << k
                           << " WIDE " << wide);
            CHECK(mm.count({int(i), int(v), layout, k, wide}) == (same_as_narrow ? 0u : 1u));
          }
  CHECK(mm.size() == 2 * ((2 * 11 * 2 - 2) + 2 * 11 * 2));
  std::set<std::string> expected;
  for (const Format* f : gpu_formats())
    if (f->supports_value(ValueType::c64)) expected.insert(f->name());
  CHECK(formats == expected);
  CHECK(expected.size() >= 4);
  std::printf("cuda: %d complex kernel specs compiled for sm_90\n", n);
}

TEST_CASE("cuda: compiler-only backend facts and failures", "[cuda]") {
  if (!have_nvrtc()) {
    SPMVJIT_SKIP("NVRTC not found");
  }
  Backend& b = cuda_compiler("sm_90");
  CHECK(&b == &cuda_compiler("sm_90"));
  CHECK(b.kind() == BackendKind::cuda);
  CHECK(b.target().target == "sm_90");
  CHECK(b.compiler_version().find("nvrtc") != std::string::npos);
  CHECK(b.compiler_version().find("sm_90") != std::string::npos);
  CHECK(b.compiler_version() != cuda_compiler("sm_80").compiler_version());
  const auto opts = b.compile_options(KernelSpec{});
  CHECK(std::find(opts.begin(), opts.end(), "--gpu-architecture=sm_90") != opts.end());
  for (const auto& o : opts) CHECK(o.find("fast") == std::string::npos);
  CHECK(status_of([] { cuda_compiler("gfx90a"); }) == SPMV_STATUS_INVALID_VALUE);
  CHECK(status_of([] { cuda_compiler("sm_"); }) == SPMV_STATUS_INVALID_VALUE);
  CHECK(parse_cuda_arch("sm_120") == 120);
  // The compile log travels with the error.
  KernelSource bad{"bad.cu", "extern \"C\" __global__ void k() { undeclared_thing += 1; }\n",
                   b.compile_options(KernelSpec{})};
  std::string msg;
  CHECK(status_of([&] { b.compile(bad); }, &msg) == SPMV_STATUS_COMPILE_FAILED);
  CHECK(msg.find("undeclared_thing") != std::string::npos);
  // No device behind it.
  CHECK(status_of([&] { DeviceBuffer d(b, 16); }, &msg) == SPMV_STATUS_NO_DEVICE);
  CHECK(status_of([&] { b.load({'x'}, "k"); }) == SPMV_STATUS_NO_DEVICE);
}

TEST_CASE("cuda: without a device, plans report NO_DEVICE clearly", "[cuda]") {
  if (cuda_driver_loaded()) {
    WARN("a CUDA driver is present: the no-device path is not exercised here");
    return;
  }
  CHECK_FALSE(cuda_available(0));
  CHECK_FALSE(backend_available(BackendKind::cuda, 0));
  const auto a = generate_matrix("poisson2d:10");
  spmv_csr_t d{a.rows,
               a.cols,
               a.nnz(),
               a.row_ptr.data(),
               a.col_idx.data(),
               a.val.data(),
               SPMV_INDEX_INT64,
               SPMV_VALUE_DOUBLE,
               0,
               SPMV_MEMORY_HOST};
  spmv_options_t o;
  spmv_options_init(&o);
  o.backend = SPMV_BACKEND_CUDA;
  spmv_plan_t p = reinterpret_cast<spmv_plan_t>(&o);
  CHECK(spmv_plan(&p, &d, &o) == SPMV_STATUS_NO_DEVICE);
  CHECK(p == nullptr);
  CHECK(std::string(spmv_last_error()).find("no CUDA device/driver") != std::string::npos);
  // AUTO falls back to the CPU when this build has it.
  std::string msg;
  CHECK(status_of([] { cuda_backend(0); }, &msg) == SPMV_STATUS_NO_DEVICE);
  CHECK(msg.find("no CUDA device/driver") != std::string::npos);
}

TEST_CASE("cuda: one-thread-per-row formats charge the longest row on the GPU", "[cuda]") {
  TargetInfo gpu;
  gpu.backend = BackendKind::cuda;
  gpu.target = "sm_90";
  gpu.sm_count = 132;
  for (const char* name : {"csr", "sell"}) {
    const Format* f = find_format(name);
    REQUIRE(f != nullptr);
    const auto regular = generate_matrix("poisson2d:300", 1).cast<int32_t, double>();
    const auto skewed = generate_matrix("powerlaw:200000:1.8:50000", 1).cast<int32_t, double>();
    const CsrRef r = regular.ref(), k = skewed.ref();
    const MatrixStats sr = compute_stats(r), sk = compute_stats(k);
    INFO(name << ": longest row " << sk.row_max);
    for (const FormatParams& p : f->candidates(r, sr, gpu)) CHECK(f->estimate(r, sr, p, gpu).imbalance < 1.1);
    for (const FormatParams& p : f->candidates(k, sk, gpu))
      CHECK(f->estimate(k, sk, p, gpu).imbalance > 10.0);
  }
}

// ---- with a device ----
namespace {

template <class I, class V>
void run_all_formats_on_device() {
  if (!test::gpu_available()) {
    SPMVJIT_SKIP("no GPU of the backend under test");
  }
  uint64_t seed = 500;
  int planned = 0, refused = 0;
  for (const TestMatrix& m : test_matrices()) {
    const HostCsr<I, V> a = m.a.template cast<I, V>();
    const spmv_csr_t desc = view(a);
    std::vector<std::string> names = {"auto"};
    for (const Format* f : gpu_formats()) names.push_back(f->name());
    for (const std::string& name : names) {
      INFO("format " << name << ", matrix " << m.name << " (" << a.rows << " x " << a.cols << ", nnz "
                     << a.nnz() << ")");
      spmv_options_t o;
      spmv_options_init(&o);
      o.backend = test::gpu_api();
      o.format = name.c_str();
      spmv_plan_t p = nullptr;
      const spmv_status_t st = spmv_plan(&p, &desc, &o);
      if (st == SPMV_STATUS_UNSUPPORTED && name != "auto") {
        CHECK(p == nullptr);
        ++refused;
        continue;
      }
      INFO(spmv_last_error());
      REQUIRE(st == SPMV_STATUS_SUCCESS);
      ++planned;
      if (m.name.find('@') != std::string::npos) {  // few values: every format compresses them
        const char* json = nullptr;
        REQUIRE(spmv_plan_describe(p, &json) == SPMV_STATUS_SUCCESS);
        const std::string codec = test::json_string_field(json, "codec");
        CHECK((codec == "uniform" || codec == "code8"));
      }
      const std::string bad = check_plan(p, a, ++seed);
      spmv_plan_destroy(p);
      CHECK(bad == "");
    }
  }
  std::printf("cuda device check: %d plans verified, %d refused as unsupported\n", planned, refused);
}

}  // namespace

TEST_CASE("cuda device: every format int32 double", "[cuda]") {
  run_all_formats_on_device<int32_t, double>();
}
TEST_CASE("cuda device: every format int32 float", "[cuda]") { run_all_formats_on_device<int32_t, float>(); }
TEST_CASE("cuda device: every format int64 double", "[cuda]") {
  run_all_formats_on_device<int64_t, double>();
}
TEST_CASE("cuda device: every format int64 float", "[cuda]") { run_all_formats_on_device<int64_t, float>(); }

TEST_CASE("cuda device: matrix arrays in device memory then OOM and bad binaries", "[cuda]") {
  if (!test::gpu_available()) {
    SPMVJIT_SKIP("no GPU of the backend under test");
  }
  Backend& b = test::gpu_backend();
  CHECK(b.target().target.rfind("sm_", 0) == 0);
  CHECK(b.target().sm_count > 0);
  const HostCsr<int32_t, double> a = generate_matrix("powerlaw:4000", 9).cast<int32_t, double>();
  const DeviceBuffer rp(b, a.row_ptr.size() * 4), ci(b, a.col_idx.size() * 4), va(b, a.val.size() * 8);
  b.upload(rp.get(), a.row_ptr.data(), a.row_ptr.size() * 4);
  b.upload(ci.get(), a.col_idx.data(), a.col_idx.size() * 4);
  b.upload(va.get(), a.val.data(), a.val.size() * 8);
  spmv_csr_t d = view(a);
  d.row_ptr = rp.get(), d.col_idx = ci.get(), d.values = va.get(), d.memory = SPMV_MEMORY_DEVICE;
  spmv_options_t o;
  spmv_options_init(&o);
  o.backend = test::gpu_api();
  spmv_plan_t p = nullptr;
  REQUIRE(spmv_plan(&p, &d, &o) == SPMV_STATUS_SUCCESS);
  CHECK(check_plan(p, a, 3) == "");
  // New values from device memory.
  HostCsr<int32_t, double> a2 = a;
  a2.val = random_vector<double>(a.nnz(), 4);
  b.upload(va.get(), a2.val.data(), a2.val.size() * 8);
  REQUIRE(spmv_plan_update_values(p, va.get(), SPMV_MEMORY_DEVICE) == SPMV_STATUS_SUCCESS);
  CHECK(check_plan(p, a2, 5) == "");
  const char* json = nullptr;
  REQUIRE(spmv_plan_describe(p, &json) == SPMV_STATUS_SUCCESS);
  CHECK(std::string(json).find("\"device\":0") == std::string::npos);
  spmv_plan_destroy(p);

  // DeviceBuffer passes the backend's out-of-memory error through unchanged.
  std::string msg;
  CHECK(status_of([&] { DeviceBuffer huge(b, size_t(1) << 52); }, &msg) == SPMV_STATUS_OUT_OF_MEMORY);
  CHECK(msg.find(std::to_string(size_t(1) << 52)) != std::string::npos);
  // A binary the driver rejects throws (the cache then recompiles); it is never "loaded".
  CHECK(status_of([&] {
          b.load({'n', 'o', 't', ' ', 'a', ' ', 'c', 'u', 'b', 'i', 'n', '\0'}, "bad");
        }) == SPMV_STATUS_COMPILE_FAILED);
}

#endif  // SPMVJIT_WITH_CUDA
