// Several vectors at once (spmm_execute, spmv_options_t::vectors and layout): every k in
// {1, 2, 3, 8, 32, 33} x both layouts x int32/int64 x float/double against the long-double
// reference, vector by vector, on edge-case and generated matrices, with leading dimensions past
// the minimum (their padding must stay untouched), NaN-poisoned Y when beta == 0, alpha == 0; on
// the CPU and, tagged [cuda], on the GPU the tests run on. And the contract's refusals.
#include <catch2/catch.hpp>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "engine/formats/format.hpp"
#include "engine/gen/generators.hpp"
#include "engine/plan.hpp"
#include "engine/planner.hpp"
#include "engine/reference.hpp"
#include "engine/stats.hpp"
#include "runtime/device_buffer.hpp"
#include "spmvjit/spmvjit.hpp"
#include "tests/test_matrices.hpp"
#include "tests/test_support.hpp"

namespace {

using namespace spmvjit;
using Csr64 = HostCsr<int64_t, double>;

constexpr double kCanary = 12345.0;
const int kVectorCounts[] = {1, 2, 3, 8, 32, 33};

struct Named {
  std::string name;
  Csr64 a;
};

std::vector<Named> spmm_matrices() {
  std::vector<Named> m;
  m.push_back({"1x1", test::from_rows(1, 1, {{{0, 2.5}}})});
  m.push_back({"0 rows", test::from_rows(0, 5, {})});
  // Empty rows (first, middle, last) in a wide matrix (m != n).
  m.push_back({"empty rows 5x9", test::from_rows(5, 9, {{}, {{0, 1.0}, {8, -2.0}}, {}, {{3, 0.5}}, {}})});
  // One long row among short ones, tall (m != n).
  test::RowLists rows(300);
  for (int64_t c = 0; c < 200; ++c) rows[7].push_back({c, 1.0 / double(c + 1)});
  for (int64_t i = 0; i < 300; ++i)
    if (i != 7)
      for (int64_t k = 0; k < i % 4; ++k)
        rows[size_t(i)].push_back({(i * 37 + k * 53) % 200, double(k) - 1.5});
  for (auto& r : rows) std::sort(r.begin(), r.end());
  m.push_back({"huge row 300x200", test::from_rows(300, 200, rows)});
  m.push_back({"poisson2d:20", generate_matrix("poisson2d:20")});
  // Rows past a GPU chunk (256 to 8192 nonzeros as k falls): 9,000 and 600 entries among short
  // rows and an empty one, wide (m != n): the chunk step's atomics after the row step's beta.
  test::RowLists long_rows(40);
  for (int64_t c = 0; c < 9000; ++c) long_rows[3].push_back({c, double((c * 7) % 13) - 6.0});
  for (int64_t c = 0; c < 600; ++c) long_rows[20].push_back({(c * 15) % 9001, 0.25 * double(c % 9) - 1.0});
  for (int64_t i = 0; i < 40; ++i)
    if (i != 3 && i != 20 && i != 30) long_rows[size_t(i)].push_back({(i * 211) % 9001, 1.0 + double(i)});
  for (auto& r : long_rows) std::sort(r.begin(), r.end());
  m.push_back({"long rows 40x9001", test::from_rows(40, 9001, long_rows)});
  return m;
}

// X (cols x k) and Y (rows x k) in the layout with leading dimensions past the minimum; spmm on
// `backend` (device buffers when it is a GPU); each vector checked against reference_spmv, the
// padding against its canary. "" or what went wrong. X's leading dimension is odd, even, and even
// with X's base one value past an aligned address in turn: GPU row-major kernels load a lane's
// neighbouring values as one 16-byte vector only where both allow it.
// exec(alpha, X, ldx, beta, Y, ldy): the multiply, "" or what failed.
template <class I, class V, class Exec>
std::string check_spmm(Exec exec, Backend* device, const HostCsr<I, V>& a, int k, bool row_major,
                       uint64_t seed) {
  // One row-major vector is read contiguous by the single-vector formats (ld 1; more is refused).
  const int64_t pad = row_major && k == 1 ? 0 : 1;
  const int64_t ldy = (row_major ? k : a.rows) + 2 * pad, y_len = (row_major ? a.rows : k) * ldy;
  auto at = [&](int64_t i, int64_t j, int64_t ld) { return row_major ? i * ld + j : j * ld + i; };
  const double alphas[] = {1.0, -1.75, 0.5, 0.0};
  const double betas[] = {0.0, 0.5, -1.25, 2.0};
  for (int c = 0; c < 4; ++c) {
    const V al = V(alphas[c]), be = V(betas[c]);
    const int64_t ldx = (row_major ? k : a.cols) + pad * (c % 3 == 0 ? 3 : 4);
    const int64_t shift = pad && c == 2 ? 1 : 0;  // X's first value at x[shift]
    const int64_t x_len = (row_major ? a.cols : k) * ldx + shift;
    std::vector<V> x(static_cast<size_t>(x_len), static_cast<V>(kCanary));
    std::vector<V> y(static_cast<size_t>(y_len), static_cast<V>(kCanary));
    const auto xr = random_vector<V>(a.cols * k, seed * 8 + 2 * c),
               yr = random_vector<V>(a.rows * k, seed * 8 + 2 * c + 1);
    for (int64_t j = 0; j < k; ++j) {
      for (int64_t i = 0; i < a.cols; ++i) x[size_t(shift + at(i, j, ldx))] = xr[size_t(j * a.cols + i)];
      for (int64_t i = 0; i < a.rows; ++i)
        y[size_t(at(i, j, ldy))] = be == 0 ? std::numeric_limits<V>::quiet_NaN() : yr[size_t(j * a.rows + i)];
    }
    const auto y0 = y;
    const std::string what = "k " + std::to_string(k) + (row_major ? " row-major" : " column-major") +
                             ", ldx " + std::to_string(ldx) + (shift ? " (X shifted)" : "") + ", alpha " +
                             std::to_string(alphas[c]) + ", beta " + std::to_string(betas[c]) + ": ";
    std::string failed;
    if (device) {
      DeviceBuffer dx(*device, x.size() * sizeof(V)), dy(*device, y.size() * sizeof(V));
      device->upload(dx.get(), x.data(), x.size() * sizeof(V));
      device->upload(dy.get(), y.data(), y.size() * sizeof(V));
      failed = exec(&al, static_cast<V*>(dx.get()) + shift, ldx, &be, dy.get(), ldy);
      device->synchronize(nullptr);
      device->download(y.data(), dy.get(), y.size() * sizeof(V));
    } else {
      failed = exec(&al, x.data() + shift, ldx, &be, y.data(), ldy);
    }
    if (!failed.empty()) return what + "the multiply failed: " + failed;
    const std::string bad = check_vectors(a, k, row_major, double(al), x.data() + shift, ldx, double(be),
                                          y0.data(), y.data(), ldy);
    if (!bad.empty()) return what + bad;
    // Padding past each leading dimension's rows (or k) stays as it was.
    for (size_t e = 0; e < y.size(); ++e) {
      const int64_t major = int64_t(e) / ldy, minor = int64_t(e) % ldy;
      const bool inside = row_major ? minor < k : minor < a.rows;
      (void)major;
      if (!inside && y[e] != V(kCanary)) return what + "wrote into Y's padding at " + std::to_string(e);
    }
  }
  return "";
}

template <class I, class V>
void check_all(spmv_backend_t api, Backend* device) {
  int plans = 0;
  for (const Named& m : spmm_matrices()) {
    const HostCsr<I, V> a = m.a.template cast<I, V>();
    const spmv_csr_t desc = csr_view<I, V>(a.rows, a.cols, a.nnz(), a.row_ptr.data(),
                                           a.col_idx.empty() ? nullptr : a.col_idx.data(),
                                           a.val.empty() ? nullptr : a.val.data());
    for (int k : kVectorCounts)
      for (bool row_major : {false, true}) {
        Options o;
        o.backend = api;
        o.threads = 2;
        o.vectors = k;
        o.layout = row_major ? SPMV_LAYOUT_ROW_MAJOR : SPMV_LAYOUT_COL_MAJOR;
        INFO(m.name << ", k " << k << (row_major ? " row-major" : " column-major"));
        spmv_plan_t plan = nullptr;
        REQUIRE(spmv_plan(&plan, &desc, &o) == SPMV_STATUS_SUCCESS);
        auto exec = [&](const V* al, const void* x, int64_t ldx, const V* be, void* y, int64_t ldy) {
          return spmm_execute(plan, al, x, ldx, be, y, ldy, nullptr) == SPMV_STATUS_SUCCESS
                     ? std::string()
                     : spmv_last_error();
        };
        const std::string bad = check_spmm<I, V>(exec, device, a, k, row_major, uint64_t(plans) + 1);
        CHECK(bad == "");
        spmv_plan_info_t info = SPMV_PLAN_INFO_INIT;
        REQUIRE(spmv_plan_info(plan, &info) == SPMV_STATUS_SUCCESS);
        CHECK(info.vectors == k);
        CHECK(info.layout == o.layout);
        if (k > 1) {
          const char* json = nullptr;
          REQUIRE(spmv_plan_describe(plan, &json) == SPMV_STATUS_SUCCESS);
          CHECK(test::json_string_field(json, "format") == "csr_mm");
        }
        spmv_plan_destroy(plan);
        ++plans;
      }
  }
  CHECK(plans == 6 * 6 * 2);
}

}  // namespace

TEST_CASE("spmm: k vectors in both layouts match the reference on the CPU, int32 float", "[spmm]") {
  if (!test::require_cpu_backend()) return;
  check_all<int32_t, float>(SPMV_BACKEND_CPU, nullptr);
}
TEST_CASE("spmm: k vectors in both layouts match the reference on the CPU, int64 double", "[spmm]") {
  if (!test::require_cpu_backend()) return;
  check_all<int64_t, double>(SPMV_BACKEND_CPU, nullptr);
}
TEST_CASE("spmm: k vectors in both layouts match the reference on the CPU, int32 double", "[spmm]") {
  if (!test::require_cpu_backend()) return;
  check_all<int32_t, double>(SPMV_BACKEND_CPU, nullptr);
}
TEST_CASE("spmm: k vectors in both layouts match the reference on the CPU, int64 float", "[spmm]") {
  if (!test::require_cpu_backend()) return;
  check_all<int64_t, float>(SPMV_BACKEND_CPU, nullptr);
}

// Column-major X staged row-major by the CPU's first step (forced on every matrix, every k the
// staged plan takes, two and three parts of columns), Y written column-major with its padding.
TEST_CASE("spmm: X staged on the CPU matches the reference", "[spmm]") {
  if (!test::require_cpu_backend()) return;
  int plans = 0;
  std::vector<Named> matrices = spmm_matrices();
  // Large enough for several parts of columns (tiny matrices run on one thread).
  matrices.push_back({"random:30000:0:12", generate_matrix("random:30000:0:12", 4)});
  for (const Named& m : matrices) {
    const HostCsr<int32_t, double> a = m.a.cast<int32_t, double>();
    const spmv_csr_t desc = csr_view<int32_t, double>(a.rows, a.cols, a.nnz(), a.row_ptr.data(),
                                                      a.col_idx.empty() ? nullptr : a.col_idx.data(),
                                                      a.val.empty() ? nullptr : a.val.data());
    for (int k : {2, 3, 8, 32})
      for (int threads : {2, 3}) {
        Options o;
        o.backend = SPMV_BACKEND_CPU;
        o.threads = threads;
        o.vectors = k;
        o.layout = SPMV_LAYOUT_COL_MAJOR;
        o.format = "csr_mm";
        FormatParams params{{"LAYOUT", 0}, {"VECTORS", baked_vectors(k)}, {"STAGE_X", 1}};
        INFO(m.name << ", k " << k << ", " << threads << " threads");
        Plan plan(desc, o, nullptr, &params);
        auto exec = [&](const double* al, const void* x, int64_t ldx, const double* be, void* y,
                        int64_t ldy) {
          try {
            plan.execute_many(al, x, ldx, be, y, ldy, nullptr);
            return std::string();
          } catch (const std::exception& e) {
            return std::string(e.what());
          }
        };
        CHECK(check_spmm<int32_t, double>(exec, nullptr, a, k, false, uint64_t(plans) + 300) == "");
        const Json d = plan.describe_json();
        CHECK(d.dump().find("\"x_staged_bytes\"") != std::string::npos);
        if (m.name.rfind("random", 0) == 0) CHECK(d["parts"].as_int() > 1);
        ++plans;
      }
  }
  CHECK(plans == 7 * 4 * 2);
}

TEST_CASE("spmm device: k vectors in both layouts match the reference on the GPU", "[cuda][spmm]") {
  if (!test::gpu_available()) {
    SPMVJIT_SKIP("no GPU device");
  }
  Backend& b = test::gpu_backend();
  check_all<int32_t, double>(test::gpu_api(), &b);
  check_all<int64_t, float>(test::gpu_api(), &b);
  check_all<int32_t, float>(test::gpu_api(), &b);
  check_all<int64_t, double>(test::gpu_api(), &b);
}

// Every lane shape the GPU planner may pick (WIDE 0 and 1, where they differ) on every matrix,
// forced through the plan's parameters: the estimate picks one per matrix, the tests take both.
template <class I, class V>
void check_lane_shapes(Backend& device) {
  int plans = 0;
  for (const Named& m : spmm_matrices()) {
    const HostCsr<I, V> a = m.a.template cast<I, V>();
    const spmv_csr_t desc = csr_view<I, V>(a.rows, a.cols, a.nnz(), a.row_ptr.data(),
                                           a.col_idx.empty() ? nullptr : a.col_idx.data(),
                                           a.val.empty() ? nullptr : a.val.data());
    for (int k : kVectorCounts)
      for (bool row_major : {false, true})
        for (int wide : {0, 1})
          for (int staged : {0, 1}) {
            // One warp-wide group already (past 16 vectors of 16-byte values, one per lane: the
            // same kernel). X staged: column-major X, k up to 32.
            if (wide && (row_major || staged) && k > 16 && sizeof(V) >= 16) continue;
            if (staged && (row_major || k > 32)) continue;
            Options o;
            o.backend = test::gpu_api();
            o.vectors = k;
            o.layout = row_major ? SPMV_LAYOUT_ROW_MAJOR : SPMV_LAYOUT_COL_MAJOR;
            o.format = "csr_mm";
            FormatParams params{{"LAYOUT", row_major ? 1 : 0}, {"VECTORS", baked_vectors(k)}, {"WIDE", wide}};
            if (staged) params["STAGE_X"] = 1;
            INFO(m.name << ", k " << k << (row_major ? " row-major" : " column-major") << ", WIDE " << wide
                        << ", X staged " << staged);
            Plan plan(desc, o, nullptr, &params);
            auto exec = [&](const V* al, const void* x, int64_t ldx, const V* be, void* y, int64_t ldy) {
              try {
                plan.execute_many(al, x, ldx, be, y, ldy, nullptr);
                return std::string();
              } catch (const std::exception& e) {
                return std::string(e.what());
              }
            };
            CHECK(check_spmm<I, V>(exec, &device, a, k, row_major, uint64_t(plans) + 100) == "");
            CHECK((plan.describe_json().dump().find("\"x_staged_bytes\"") != std::string::npos) ==
                  bool(staged));
            ++plans;
          }
  }
  // Per matrix: 6 k x 2 layouts x 2 shapes; staged (column-major, k up to 32): 5 k x 2 shapes
  // (both row-major shapes differ past 16 vectors: a lane takes 2 doubles or 4 floats).
  CHECK(plans == 6 * (6 * 2 * 2 + 5 * 2));
}

TEST_CASE("spmm device: both lane shapes and chunked long rows match the reference", "[cuda][spmm]") {
  if (!test::gpu_available()) {
    SPMVJIT_SKIP("no GPU device");
  }
  Backend& b = test::gpu_backend();
  check_lane_shapes<int32_t, double>(b);
  check_lane_shapes<int64_t, float>(b);
}

// The planner (GPU and CPU) stages column-major X where rows gather scattered columns (a random
// matrix), not where neighbouring rows read neighbouring x (a stencil), nor for row-major X, nor
// on a CPU whose caches hold X (random:20000, 1.3 and 5.1 MB of X); no device needed.
TEST_CASE("spmm: the planner stages column-major X for scattered columns only", "[spmm]") {
  TargetInfo gpu;
  gpu.backend = BackendKind::cuda;
  gpu.target = "sm_90";
  gpu.sm_count = 132;
  TargetInfo cpu;
  cpu.backend = BackendKind::cpu;
  cpu.threads = 4;
  cpu.simd_bytes = 32;
  for (const TargetInfo& t : {gpu, cpu})
    for (const char* spec : {"random:400000:1:40", "random:20000:1:40", "poisson2d:300", "dense:600",
                             "blockfem:12:3", "varband:30000"})
      for (bool row_major : {false, true})
        for (int k : {8, 32}) {
          const Csr64 a = generate_matrix(spec, 1);
          INFO(to_string(t.backend) << ": " << spec << ", k " << k
                                    << (row_major ? " row-major" : " column-major"));
          ChoiceOptions o;
          o.vectors = k;
          o.row_major = row_major;
          const PlanChoice c = choose_format(a.ref(), compute_stats(a.ref()), t, nullptr, o);
          REQUIRE(c.format->name() == "csr_mm");
          const bool staged = c.params.count("STAGE_X") && c.params.at("STAGE_X") == 1;
          const bool random = std::string(spec).rfind("random", 0) == 0;
          CHECK(staged == (!row_major && random && (t.gpu() || a.cols > 20000)));
          // A preference of the planner, not a limit: staging forced by a caller applies anywhere
          // column-major (spmm device tests force it on every matrix).
          FormatParams forced{{"LAYOUT", row_major ? 1 : 0}, {"VECTORS", k}, {"STAGE_X", 1}};
          if (t.gpu()) forced["WIDE"] = 0;
          if (!row_major)
            for (bool device_input : {false, true}) {
              ChoiceOptions f = o;
              f.only = &forced;
              f.device_input = device_input;
              const PlanChoice fc = choose_format(a.ref(), compute_stats(a.ref()), t, c.format, f);
              CHECK(fc.params == forced);
            }
        }
}

// op(A) = A^T for k vectors: the plan of A^T (built at plan time) judged against the reference's
// own transpose of A, x of A's rows and y of A's columns.
template <class I, class V>
void check_transposed(spmv_backend_t api, Backend* device) {
  int plans = 0;
  for (const Named& m : spmm_matrices()) {
    const HostCsr<I, V> a = m.a.template cast<I, V>();
    const HostCsr<I, V> at = reference_transpose(a);
    const spmv_csr_t desc = csr_view<I, V>(a.rows, a.cols, a.nnz(), a.row_ptr.data(),
                                           a.col_idx.empty() ? nullptr : a.col_idx.data(),
                                           a.val.empty() ? nullptr : a.val.data());
    for (int k : {1, 3, 8, 33})
      for (bool row_major : {false, true}) {
        Options o;
        o.backend = api;
        o.threads = 2;
        o.vectors = k;
        o.layout = row_major ? SPMV_LAYOUT_ROW_MAJOR : SPMV_LAYOUT_COL_MAJOR;
        o.operation = SPMV_OPERATION_TRANSPOSE;
        INFO(m.name << " transposed, k " << k << (row_major ? " row-major" : " column-major"));
        spmv_plan_t plan = nullptr;
        REQUIRE(spmv_plan(&plan, &desc, &o) == SPMV_STATUS_SUCCESS);
        auto exec = [&](const V* al, const void* x, int64_t ldx, const V* be, void* y, int64_t ldy) {
          return spmm_execute(plan, al, x, ldx, be, y, ldy, nullptr) == SPMV_STATUS_SUCCESS
                     ? std::string()
                     : spmv_last_error();
        };
        CHECK(check_spmm<I, V>(exec, device, at, k, row_major, uint64_t(plans) + 200) == "");
        spmv_plan_destroy(plan);
        ++plans;
      }
  }
  CHECK(plans == 6 * 4 * 2);
}

TEST_CASE("spmm: k vectors of A^T match the reference on the CPU", "[spmm][transpose]") {
  if (!test::require_cpu_backend()) return;
  check_transposed<int32_t, double>(SPMV_BACKEND_CPU, nullptr);
  check_transposed<int64_t, float>(SPMV_BACKEND_CPU, nullptr);
}

TEST_CASE("spmm device: k vectors of A^T match the reference on the GPU", "[cuda][spmm][transpose]") {
  if (!test::gpu_available()) {
    SPMVJIT_SKIP("no GPU device");
  }
  check_transposed<int32_t, float>(test::gpu_api(), &test::gpu_backend());
  check_transposed<int64_t, double>(test::gpu_api(), &test::gpu_backend());
}

TEST_CASE("spmm: the contract's refusals change nothing", "[spmm]") {
  if (!test::require_cpu_backend()) return;
  const Csr64 a = generate_matrix("poisson2d:8");
  const spmv_csr_t desc =
      csr_view<int64_t, double>(a.rows, a.cols, a.nnz(), a.row_ptr.data(), a.col_idx.data(), a.val.data());
  Options o;
  o.backend = SPMV_BACKEND_CPU;
  spmv_plan_t plan = nullptr;
  // Bad options: no plan.
  o.vectors = -1;
  CHECK(spmv_plan(&plan, &desc, &o) == SPMV_STATUS_INVALID_VALUE);
  CHECK(plan == nullptr);
  o.vectors = 4;
  o.layout = static_cast<spmv_layout_t>(7);
  CHECK(spmv_plan(&plan, &desc, &o) == SPMV_STATUS_INVALID_VALUE);
  CHECK(std::string(spmv_last_error()).find("layout") != std::string::npos);
  o.layout = SPMV_LAYOUT_ROW_MAJOR;
  // A format that multiplies one vector is refused for four, saying which one would do.
  o.format = "sell";
  CHECK(spmv_plan(&plan, &desc, &o) == SPMV_STATUS_UNSUPPORTED);
  CHECK(std::string(spmv_last_error()).find("csr_mm") != std::string::npos);
  o.format = nullptr;
  REQUIRE(spmv_plan(&plan, &desc, &o) == SPMV_STATUS_SUCCESS);
  std::vector<double> x(size_t(a.cols * 4), 1.0), y(size_t(a.rows * 4), 7.0);
  const auto y0 = y;
  const double one = 1, zero = 0;
  // spmv_execute multiplies one vector: refused on a plan for four.
  CHECK(spmv_execute(plan, &one, x.data(), &zero, y.data(), nullptr) == SPMV_STATUS_INVALID_VALUE);
  CHECK(std::string(spmv_last_error()).find("spmm_execute") != std::string::npos);
  // Leading dimensions below k (row-major), null pointers.
  CHECK(spmm_execute(plan, &one, x.data(), 3, &zero, y.data(), 4, nullptr) == SPMV_STATUS_INVALID_VALUE);
  CHECK(spmm_execute(plan, &one, x.data(), 4, &zero, y.data(), 0, nullptr) == SPMV_STATUS_INVALID_VALUE);
  CHECK(spmm_execute(plan, &one, nullptr, 4, &zero, y.data(), 4, nullptr) == SPMV_STATUS_INVALID_VALUE);
  CHECK(spmm_execute(plan, nullptr, x.data(), 4, &zero, y.data(), 4, nullptr) == SPMV_STATUS_INVALID_VALUE);
  CHECK(y == y0);
  CHECK(spmm_execute(plan, &one, x.data(), 4, &zero, y.data(), 4, nullptr) == SPMV_STATUS_SUCCESS);
  CHECK(y != y0);
  // The C++ layer checks the value type first.
  spmv_plan_destroy(plan);
  SpmvPlan p(desc, o);
  float fx = 1, fy = 0;
  CHECK_THROWS_AS(p.execute_many<float>(1.f, &fx, 4, 0.f, &fy, 4), ApiError);
  p.execute_many<double>(2.0, x.data(), 4, 0.0, y.data(), 4);
  // A plan for one vector takes spmm_execute with k = 1 (column-major by default: ld >= rows).
  Options one_vector;
  one_vector.backend = SPMV_BACKEND_CPU;
  SpmvPlan q(desc, one_vector);
  CHECK(q.info().vectors == 1);
  std::vector<double> y1(size_t(a.rows), 0.0), y2(size_t(a.rows), 0.0);
  q.execute_many<double>(1.0, x.data(), a.cols, 0.0, y1.data(), a.rows);
  q.execute<double>(1.0, x.data(), 0.0, y2.data());
  CHECK(y1 == y2);
  CHECK_THROWS_AS(q.execute_many<double>(1.0, x.data(), a.cols - 1, 0.0, y1.data(), a.rows), ApiError);
  // One row-major vector: contiguous only.
  one_vector.layout = SPMV_LAYOUT_ROW_MAJOR;
  SpmvPlan r(desc, one_vector);
  CHECK_THROWS_AS(r.execute_many<double>(1.0, x.data(), 2, 0.0, y1.data(), 1), ApiError);
  r.execute_many<double>(1.0, x.data(), 1, 0.0, y1.data(), 1);
  CHECK(y1 == y2);
}

TEST_CASE("spmm: update_values renews the values of a plan for several vectors", "[spmm]") {
  if (!test::require_cpu_backend()) return;
  Csr64 a = generate_matrix("poisson2d:12");
  const spmv_csr_t desc =
      csr_view<int64_t, double>(a.rows, a.cols, a.nnz(), a.row_ptr.data(), a.col_idx.data(), a.val.data());
  Options o;
  o.backend = SPMV_BACKEND_CPU;
  o.vectors = 8;
  SpmvPlan p(desc, o);
  for (double& v : a.val) v = v * 3 - 1;
  p.update_values(a.val.data());
  auto exec = [&](const double* al, const void* x, int64_t ldx, const double* be, void* y, int64_t ldy) {
    return spmm_execute(p.get(), al, x, ldx, be, y, ldy, nullptr) == SPMV_STATUS_SUCCESS ? std::string()
                                                                                         : spmv_last_error();
  };
  CHECK(check_spmm<int64_t, double>(exec, nullptr, a, 8, false, 99) == "");
}
