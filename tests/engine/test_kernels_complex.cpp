// Complex values (complex float and complex double) x {int32, int64}: every format that takes them
// on the CPU, through the C API, against the std::complex<long double> reference, with complex
// alpha and beta; the planner's refusals, A^T, update_values, the typed C API and the C++ layer.
#include <algorithm>
#include <catch2/catch.hpp>
#include <complex>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "engine/formats/format.hpp"
#include "engine/gen/generators.hpp"
#include "engine/reference.hpp"
#include "runtime/device_buffer.hpp"
#include "spmvjit/spmvjit.hpp"
#include "tests/engine/spmm_complex_check.hpp"
#include "tests/test_matrices.hpp"
#include "tests/test_support.hpp"

namespace {

using namespace spmvjit;
using test::from_rows;
using Csr64 = HostCsr<int64_t, double>;
using Cplx = HostCsr<int64_t, std::complex<double>>;

// The real test matrix with an imaginary part on most entries (tests/engine/spmm_complex_check.hpp).
using test::spmm_complex::complexify;

// One row of `long_len` entries (row `at`) among rows of 0..3 entries.
Csr64 huge_row_matrix(int64_t rows, int64_t at, int64_t long_len) {
  test::RowLists r(static_cast<size_t>(rows));
  const auto vals = random_vector<double>(long_len + 4 * rows, 77);
  size_t vi = 0;
  for (int64_t i = 0; i < rows; ++i) {
    if (i == at) {
      for (int64_t c = 0; c < long_len; ++c) r[size_t(i)].push_back({c, vals[vi++]});
    } else {
      for (int64_t k = 0; k < i % 4; ++k)
        r[size_t(i)].push_back({(i * 7919 + k * 104729) % long_len, vals[vi++]});
      std::sort(r[size_t(i)].begin(), r[size_t(i)].end());
    }
  }
  return from_rows(rows, long_len, r);
}

Csr64 unsorted(Csr64 a) {
  for (int64_t i = 0; i < a.rows; ++i) {
    const auto b = a.row_ptr[size_t(i)], e = a.row_ptr[size_t(i) + 1];
    std::reverse(a.col_idx.begin() + b, a.col_idx.begin() + e);
    std::reverse(a.val.begin() + b, a.val.begin() + e);
  }
  return a;
}

struct TestMatrix {
  std::string name;
  Cplx a;
  int base = 0;
};

const std::vector<TestMatrix>& test_matrices() {
  static const std::vector<TestMatrix> all = [] {
    std::vector<std::pair<std::string, Csr64>> real;
    real.push_back({"empty_rows", from_rows(7, 6, {{}, {{0, 1.5}, {5, -2}}, {}, {}, {{3, 0.25}}, {}, {}})});
    real.push_back({"huge_row", huge_row_matrix(41, 17, 200000)});
    real.push_back({"1x1", from_rows(1, 1, {{{0, 2.5}}})});
    real.push_back({"0x0", from_rows(0, 0, {})});
    real.push_back({"0x5", from_rows(0, 5, {})});
    real.push_back({"5x0", from_rows(5, 0, {})});
    real.push_back({"all_empty_5x5", from_rows(5, 5, {})});
    real.push_back({"wide_7x400", generate_matrix("random:7:0:30:400", 3)});
    real.push_back({"tall_300x9", generate_matrix("random:300:0:6:9", 4)});
    real.push_back({"unsorted", unsorted(generate_matrix("random:90:2:20:70", 7))});
    for (const char* spec : {"poisson2d:12", "powerlaw:500", "denserows:200:3:8", "short:300",
                             "blocks:97:2:3", "random:20000:0:12"})
      real.push_back({spec, generate_matrix(spec, 9)});
    std::vector<TestMatrix> m;
    uint64_t seed = 500;
    for (auto& [name, a] : real) m.push_back({name, complexify(a, ++seed)});
    m.push_back({"base1", complexify(generate_matrix("random:60:0:9:45", 5), 600), 1});
    // One value everywhere: a real matrix like it would be stored compressed (uniform); complex
    // values stay plain in stage 1 (the describe check below).
    Cplx ones = complexify(generate_matrix("powerlaw:500", 12), 1);
    for (auto& v : ones.val) v = {1.0, -0.5};
    m.push_back({"ones_powerlaw", ones});
    return m;
  }();
  return all;
}

template <class I, class V>
struct Typed {
  HostCsr<I, V> a;
  std::vector<I> rp, ci;
  std::vector<V> val;
  spmv_csr_t desc{};
  int base = 0;
  explicit Typed(const TestMatrix& m) : a(m.a.template cast<I, V>()), base(m.base) { reset(); }
  void reset() {
    rp = a.row_ptr;
    ci = a.col_idx;
    val = a.val;
    for (auto& v : rp) v = I(v + base);
    for (auto& v : ci) v = I(v + base);
    desc = csr_view<I, V>(a.rows, a.cols, a.nnz(), rp.data(), ci.empty() ? nullptr : ci.data(),
                          val.empty() ? nullptr : val.data(), base);
  }
  // The plan must own what it needs: the caller's arrays are garbage from here on.
  void scribble() {
    std::fill(rp.begin(), rp.end(), I(-7));
    std::fill(ci.begin(), ci.end(), I(-7));
    std::fill(val.begin(), val.end(), V(std::numeric_limits<typename V::value_type>::quiet_NaN()));
  }
};

struct PlanGuard {
  spmv_plan_t p = nullptr;
  ~PlanGuard() {
    if (p) spmv_plan_destroy(p);
  }
};

std::string describe(spmv_plan_t p) {
  const char* json = nullptr;
  if (spmv_plan_describe(p, &json) != SPMV_STATUS_SUCCESS || !json) return "";
  return json;
}

spmv_options_t cpu_options(const char* format) {
  spmv_options_t o;
  spmv_options_init(&o);
  o.backend = SPMV_BACKEND_CPU;
  o.format = format;
  o.threads = 3;
  return o;
}

// The CPU, or the GPU backend of the device tests (CUDA, or HIP with SPMVJIT_TEST_GPU=hip).
spmv_options_t backend_options(BackendKind b, const char* format) {
  spmv_options_t o = cpu_options(format);
  if (b != BackendKind::cpu) o.backend = test::gpu_api();
  return o;
}

using C = std::complex<double>;
// (alpha, beta) pairs: every epilogue, and the values a kernel that looks at real parts only would
// take for another epilogue: alpha 1 + 0.5i is not one, beta -0.75i is not zero, alpha 0 (y = beta y).
const std::vector<std::pair<C, C>>& scalars() {
  static const std::vector<std::pair<C, C>> s = {
      {{1, 0}, {0, 0}},   {{-1.75, 0.5}, {0, 0}}, {{1, 0}, {0.5, -0.25}}, {{0.3, -1.1}, {-1.25, 0.75}},
      {{1, 0.5}, {0, 0}}, {{1, 0}, {0, -0.75}},   {{0, 0}, {0.5, 2}},     {{0, 0}, {0, 0}},
      {{0, 1}, {1, 0}}};
  return s;
}

constexpr int kCanaries = 8;

// SpMVs with every (alpha, beta) of scalars(), fresh x and y each (y NaN where beta == 0).
// GPU plans (b != cpu) take x and y in device memory: they go up before and y comes back after.
template <class I, class V>
std::string check_plan(spmv_plan_t plan, const HostCsr<I, V>& a, uint64_t seed,
                       BackendKind b = BackendKind::cpu) {
  using R = typename V::value_type;
  const V canary(R(12345), R(-6789));
  int c = 0;
  for (const auto& [alpha, beta] : scalars()) {
    ++c;
    const V al(R(alpha.real()), R(alpha.imag())), be(R(beta.real()), R(beta.imag()));
    const auto x = random_vector<V>(a.cols, seed * 16 + 2 * c);
    std::vector<V> y = random_vector<V>(a.rows + kCanaries, seed * 16 + 2 * c + 1);
    const R nan = std::numeric_limits<R>::quiet_NaN();
    if (be == V(0)) std::fill(y.begin(), y.begin() + a.rows, V(nan, nan));
    std::fill(y.begin() + a.rows, y.end(), canary);
    const auto y0 = y;
    std::ostringstream what;
    what << "alpha " << alpha << ", beta " << beta << ": ";
    const void* xp = a.cols ? x.data() : nullptr;
    void* yp = a.rows ? y.data() : nullptr;
    Backend* dev = b == BackendKind::cpu ? nullptr : &test::gpu_backend();
    DeviceBuffer dx, dy;
    if (dev) {
      dx = DeviceBuffer(*dev, x.size() * sizeof(V));
      dy = DeviceBuffer(*dev, y.size() * sizeof(V));
      dev->upload(dx.get(), x.data(), x.size() * sizeof(V));
      dev->upload(dy.get(), y.data(), y.size() * sizeof(V));
      xp = a.cols ? dx.get() : nullptr;
      yp = a.rows ? dy.get() : nullptr;
    }
    if (spmv_execute(plan, &al, xp, &be, yp, nullptr) != SPMV_STATUS_SUCCESS)
      return what.str() + "execute failed: " + spmv_last_error();
    if (dev) {
      dev->synchronize(nullptr);
      dev->download(y.data(), dy.get(), y.size() * sizeof(V));
    }
    const std::string bad = check_spmv_complex(
        a, reference_spmv_complex(a, C(al.real(), al.imag()), x.data(), C(be.real(), be.imag()), y0.data()),
        y.data());
    if (!bad.empty()) return what.str() + bad;
    for (int k = 0; k < kCanaries; ++k)
      if (y[size_t(a.rows + k)] != canary) return what.str() + "wrote past the end of y";
  }
  return "";
}

std::vector<const Format*> complex_formats(BackendKind b) {
  std::vector<const Format*> out;
  for (const Format* f : all_formats())
    if (f->supports(b) && f->supports_value(ValueType::c32)) out.push_back(f);
  return out;
}

// Every format that takes complex values, and the planner's own choice, on every test matrix;
// every other format is refused with UNSUPPORTED naming the value type.
template <class I, class V>
void run_complex_formats(spmv_operation_t op = SPMV_OPERATION_NON_TRANSPOSE,
                         BackendKind b = BackendKind::cpu) {
  if (b == BackendKind::cpu && !test::require_cpu_backend()) return;
  if (b != BackendKind::cpu && !test::gpu_available()) {
    SPMVJIT_SKIP("no GPU of the backend under test");
  }
  const auto formats = complex_formats(b);
  REQUIRE(formats.size() >= 4);  // csr, csr_vector, ell, sell
  uint64_t seed = 2000;
  for (const TestMatrix& m : test_matrices()) {
    Typed<I, V> t(m);
    const HostCsr<I, V> judged = op == SPMV_OPERATION_NON_TRANSPOSE
                                     ? t.a
                                     : reference_transpose(t.a, op == SPMV_OPERATION_CONJUGATE_TRANSPOSE);
    for (const Format* f : all_formats()) {
      if (!f->supports(b)) continue;
      t.reset();
      INFO("format " << f->name() << ", matrix " << m.name << " (" << m.a.rows << " x " << m.a.cols
                     << ", nnz " << m.a.nnz() << ", base " << m.base << ")");
      const std::string name = f->name();
      spmv_options_t o = backend_options(b, name.c_str());
      o.operation = op;
      PlanGuard g;
      const spmv_status_t st = spmv_plan(&g.p, &t.desc, &o);
      if (!f->supports_value(value_type_of<V>())) {
        CHECK(st == SPMV_STATUS_UNSUPPORTED);
        CHECK(g.p == nullptr);
        CHECK_THAT(spmv_last_error(), Catch::Contains("does not support complex"));
        continue;
      }
      if (st == SPMV_STATUS_UNSUPPORTED) {  // too much padding (ell on the huge row)
        CHECK(g.p == nullptr);
        CHECK(std::string(spmv_last_error()) != "");
        continue;
      }
      REQUIRE(st == SPMV_STATUS_SUCCESS);
      t.scribble();
      const std::string d = describe(g.p);
      CHECK(test::json_error(d) == "");
      CHECK(test::json_string_field(d, "format") == name);
      CHECK(test::json_string_field(d, "value") == to_string(value_type_of<V>()));
      CHECK(test::json_string_field(d, "codec") == "plain");
      CHECK(check_plan(g.p, judged, ++seed, b) == "");
    }
    INFO("auto planner, matrix " << m.name);
    spmv_options_t o = backend_options(b, nullptr);
    o.operation = op;
    PlanGuard g;
    t.reset();
    REQUIRE(spmv_plan(&g.p, &t.desc, &o) == SPMV_STATUS_SUCCESS);
    t.scribble();
    const std::string d = describe(g.p);
    CHECK(test::json_error(d) == "");
    const Format* chosen = find_format(test::json_string_field(d, "format"));
    REQUIRE(chosen != nullptr);
    CHECK(chosen->supports_value(value_type_of<V>()));
    // The others are listed as not applicable, with the reason.
    CHECK_THAT(d, Catch::Contains(std::string("no ") + to_string(value_type_of<V>()) + " values"));
    CHECK(check_plan(g.p, judged, ++seed, b) == "");
  }
}

}  // namespace

TEST_CASE("complex formats, int32 complex float", "[kernels][complex]") {
  run_complex_formats<int32_t, std::complex<float>>();
}
TEST_CASE("complex formats, int32 complex double", "[kernels][complex]") {
  run_complex_formats<int32_t, std::complex<double>>();
}
TEST_CASE("complex formats, int64 complex float", "[kernels][complex]") {
  run_complex_formats<int64_t, std::complex<float>>();
}
TEST_CASE("complex formats, int64 complex double", "[kernels][complex]") {
  run_complex_formats<int64_t, std::complex<double>>();
}
// A^T of complex values: transposed, not conjugated; A^H: conjugated too (the reference's
// transpose conjugates, so a plan that conjugated A^T, or not A^H, fails).
TEST_CASE("complex formats of A^T", "[kernels][complex][transpose]") {
  run_complex_formats<int32_t, std::complex<double>>(SPMV_OPERATION_TRANSPOSE);
  run_complex_formats<int64_t, std::complex<float>>(SPMV_OPERATION_TRANSPOSE);
}
TEST_CASE("complex formats of A^H", "[kernels][complex][transpose]") {
  run_complex_formats<int32_t, std::complex<float>>(SPMV_OPERATION_CONJUGATE_TRANSPOSE);
  run_complex_formats<int64_t, std::complex<double>>(SPMV_OPERATION_CONJUGATE_TRANSPOSE);
}

// The same on the GPU (the device tests: CUDA, or HIP through SPMVJIT_TEST_GPU=hip).
TEST_CASE("cuda device: complex formats int32 complex double (A and A^T and A^H)", "[cuda][complex]") {
  run_complex_formats<int32_t, std::complex<double>>(SPMV_OPERATION_NON_TRANSPOSE, test::gpu_kind());
  run_complex_formats<int32_t, std::complex<double>>(SPMV_OPERATION_TRANSPOSE, test::gpu_kind());
  run_complex_formats<int32_t, std::complex<double>>(SPMV_OPERATION_CONJUGATE_TRANSPOSE, test::gpu_kind());
}
TEST_CASE("cuda device: complex formats int32 complex float", "[cuda][complex]") {
  run_complex_formats<int32_t, std::complex<float>>(SPMV_OPERATION_NON_TRANSPOSE, test::gpu_kind());
}
TEST_CASE("cuda device: complex formats int64 complex float and double", "[cuda][complex]") {
  run_complex_formats<int64_t, std::complex<float>>(SPMV_OPERATION_NON_TRANSPOSE, test::gpu_kind());
  run_complex_formats<int64_t, std::complex<double>>(SPMV_OPERATION_NON_TRANSPOSE, test::gpu_kind());
}

// The check above can fail: results of the mistakes a complex kernel could make (conjugating A,
// dropping alpha's or beta's imaginary part, treating alpha = 1 + 0.5i as one) are refused.
TEST_CASE("the complex reference catches wrong kernels", "[kernels][complex]") {
  const Cplx a = complexify(generate_matrix("random:50:1:8:40", 3), 9);
  const auto x = random_vector<C>(a.cols, 1);
  const auto y0 = random_vector<C>(a.rows, 2);
  const C alpha(1, 0.5), beta(-0.25, 0.75);
  auto compute = [&](bool conj_a, bool real_alpha, bool real_beta) {
    std::vector<C> y(size_t(a.rows));
    for (int64_t i = 0; i < a.rows; ++i) {
      C s = 0;
      for (int64_t k = a.row_ptr[size_t(i)]; k < a.row_ptr[size_t(i) + 1]; ++k)
        s += (conj_a ? std::conj(a.val[size_t(k)]) : a.val[size_t(k)]) * x[size_t(a.col_idx[size_t(k)])];
      y[size_t(i)] =
          (real_alpha ? C(alpha.real()) : alpha) * s + (real_beta ? C(beta.real()) : beta) * y0[size_t(i)];
    }
    return y;
  };
  const ComplexReferenceResult ref = reference_spmv_complex(a, alpha, x.data(), beta, y0.data());
  CHECK(check_spmv_complex(a, ref, compute(false, false, false).data()) == "");
  CHECK(check_spmv_complex(a, ref, compute(true, false, false).data()) != "");
  CHECK(check_spmv_complex(a, ref, compute(false, true, false).data()) != "");
  CHECK(check_spmv_complex(a, ref, compute(false, false, true).data()) != "");
  // One part wrong by a little more than rounding: refused too.
  std::vector<C> y = compute(false, false, false);
  y[3] += C(0, 1e-9);
  CHECK_THAT(check_spmv_complex(a, ref, y.data()), Catch::Contains("imaginary part"));
}

TEST_CASE("complex plans: what stage 1 refuses", "[plan][complex]") {
  if (!test::require_cpu_backend()) return;
  const auto a = complexify(generate_matrix("poisson2d:6", 1), 3).cast<int32_t, std::complex<float>>();
  const spmv_csr_t d = csr_view(a.rows, a.cols, a.nnz(), a.row_ptr.data(), a.col_idx.data(), a.val.data());
  PlanGuard g;
  SECTION("a forced format without complex kernels") {
    spmv_options_t o = cpu_options("bsr");
    CHECK(spmv_plan(&g.p, &d, &o) == SPMV_STATUS_UNSUPPORTED);
    CHECK_THAT(spmv_last_error(), Catch::Contains("format 'bsr' does not support complex_float values"));
    CHECK_THAT(spmv_last_error(), Catch::Contains("csr"));
  }
  SECTION("symmetric (Hermitian comes in stage 2)") {
    spmv_options_t o = cpu_options(nullptr);
    o.matrix_type = SPMV_MATRIX_SYMMETRIC;
    CHECK(spmv_plan(&g.p, &d, &o) == SPMV_STATUS_UNSUPPORTED);
    CHECK_THAT(spmv_last_error(), Catch::Contains("Hermitian"));
  }
  SECTION("a real-only path reached with complex values is an internal error, not a wrong product") {
    try {
      dispatch_types(IndexType::i32, ValueType::c32, []<class I, class V>() {});
      FAIL("dispatch_types ran a real path for complex values");
    } catch (const Error& e) {
      CHECK(e.status() == SPMV_STATUS_INTERNAL_ERROR);
      CHECK_THAT(e.what(), Catch::Contains("a real-valued path reached with complex_float values"));
    }
  }
  SECTION("an unknown value type") {
    spmv_csr_t bad = d;
    bad.value_type = spmv_value_type_t(4);
    spmv_options_t o = cpu_options(nullptr);
    CHECK(spmv_plan(&g.p, &bad, &o) == SPMV_STATUS_INVALID_VALUE);
  }
  CHECK(g.p == nullptr);
}

TEST_CASE("complex plans: typed execute, plan info, update_values, measure mode", "[plan][complex]") {
  if (!test::require_cpu_backend()) return;
  using V = std::complex<double>;
  const Cplx a = complexify(generate_matrix("random:400:0:12", 4), 5);
  const spmv_csr_t d = csr_view(a.rows, a.cols, a.nnz(), a.row_ptr.data(), a.col_idx.data(), a.val.data());
  for (const char* format : {"csr", "ell", "sell", "csr_vector"}) {
    INFO(format);
    spmv_options_t o = cpu_options(format);
    PlanGuard g;
    REQUIRE(spmv_plan(&g.p, &d, &o) == SPMV_STATUS_SUCCESS);
    spmv_plan_info_t info = SPMV_PLAN_INFO_INIT;
    REQUIRE(spmv_plan_info(g.p, &info) == SPMV_STATUS_SUCCESS);
    CHECK(info.value_type == SPMV_VALUE_COMPLEX_DOUBLE);
    const auto x = random_vector<V>(a.cols, 1);
    std::vector<V> y(size_t(a.rows), V(3, 4));
    const double one = 1, zero = 0;
    CHECK(spmv_execute_typed(g.p, SPMV_VALUE_DOUBLE, &one, x.data(), &zero, y.data(), nullptr) ==
          SPMV_STATUS_INVALID_VALUE);
    CHECK_THAT(spmv_last_error(), Catch::Contains("complex double"));
    CHECK(y[0] == V(3, 4));  // untouched
    const V al(0.5, -2), be(0, 0);
    REQUIRE(spmv_execute_typed(g.p, SPMV_VALUE_COMPLEX_DOUBLE, &al, x.data(), &be, y.data(), nullptr) ==
            SPMV_STATUS_SUCCESS);
    CHECK(check_spmv_complex(a, reference_spmv_complex(a, al, x.data(), be, y.data()), y.data()) == "");
    // New values, same pattern: the plan reconverts (no value map for complex values).
    Cplx b = a;
    for (auto& v : b.val) v = V(v.imag(), -2 * v.real());
    REQUIRE(spmv_plan_update_values(g.p, b.val.data(), SPMV_MEMORY_HOST) == SPMV_STATUS_SUCCESS);
    for (int round = 0; round < 2; ++round) {
      std::vector<V> y2 = random_vector<V>(a.rows, 7 + round);
      const auto y0 = y2;
      const V be2(0.25, 1);
      REQUIRE(spmv_execute(g.p, &al, x.data(), &be2, y2.data(), nullptr) == SPMV_STATUS_SUCCESS);
      CHECK(check_spmv_complex(b, reference_spmv_complex(b, al, x.data(), be2, y0.data()), y2.data()) == "");
      if (round == 0)
        REQUIRE(spmv_plan_update_values(g.p, b.val.data(), SPMV_MEMORY_HOST) == SPMV_STATUS_SUCCESS);
    }
    CHECK(test::json_string_field(describe(g.p), "update_values") == "reconversion");
  }
  SECTION("measure mode times complex candidates") {
    test::TempDir dir;
    spmv_options_t o = cpu_options(nullptr);
    o.planning = SPMV_PLANNING_MEASURE;
    o.cache_dir = dir.path().c_str();
    PlanGuard g;
    REQUIRE(spmv_plan(&g.p, &d, &o) == SPMV_STATUS_SUCCESS);
    const auto x = random_vector<V>(a.cols, 3);
    std::vector<V> y(size_t(a.rows));
    const V al(1, 1), be(0, 0);
    REQUIRE(spmv_execute(g.p, &al, x.data(), &be, y.data(), nullptr) == SPMV_STATUS_SUCCESS);
    CHECK(check_spmv_complex(a, reference_spmv_complex(a, al, x.data(), be, y.data()), y.data()) == "");
  }
}

// A^H's values are conjugated when the plan is made and again by update_values (host and device
// values for GPU plans), and describe says which operation and layout the plan has.
static void check_conjugate_transpose_updates(BackendKind kind) {
  using V = std::complex<double>;
  const Cplx a = complexify(generate_matrix("lpwide:60:3:1:9", 4), 6);  // 60 x 180
  const spmv_csr_t d = csr_view(a.rows, a.cols, a.nnz(), a.row_ptr.data(), a.col_idx.data(), a.val.data());
  Cplx b = a;
  for (auto& v : b.val) v = V(v.imag() - 1, 2 * v.real());
  const Cplx ah = reference_transpose(a, true), bh = reference_transpose(b, true);
  REQUIRE(ah.rows == 180);
  for (const char* format : {"csr", "sell", "coo"}) {
    INFO(format << (kind == BackendKind::cpu ? " (CPU)" : " (GPU)"));
    spmv_options_t o = backend_options(kind, format);
    o.operation = SPMV_OPERATION_CONJUGATE_TRANSPOSE;
    PlanGuard g;
    REQUIRE(spmv_plan(&g.p, &d, &o) == SPMV_STATUS_SUCCESS);
    const std::string desc = describe(g.p);
    CHECK(test::json_string_field(desc, "operation") == "A^H");
    CHECK_THAT(desc, Catch::Contains("A^H's layout (A^T's, values conjugated)"));
    spmv_plan_info_t info = SPMV_PLAN_INFO_INIT;
    REQUIRE(spmv_plan_info(g.p, &info) == SPMV_STATUS_SUCCESS);
    CHECK(info.rows == a.rows);  // A's sizes, as given
    CHECK(info.operation == SPMV_OPERATION_CONJUGATE_TRANSPOSE);
    CHECK(check_plan(g.p, ah, 300, kind) == "");
    // New values from host memory, then from device memory on the GPU.
    REQUIRE(spmv_plan_update_values(g.p, b.val.data(), SPMV_MEMORY_HOST) == SPMV_STATUS_SUCCESS);
    CHECK(check_plan(g.p, bh, 301, kind) == "");
    if (kind != BackendKind::cpu) {
      Backend& dev = test::gpu_backend();
      DeviceBuffer dv(dev, a.val.size() * sizeof(V));
      dev.upload(dv.get(), a.val.data(), dv.bytes());
      REQUIRE(spmv_plan_update_values(g.p, dv.get(), SPMV_MEMORY_DEVICE) == SPMV_STATUS_SUCCESS);
      CHECK(check_plan(g.p, ah, 302, kind) == "");
    }
  }
}
TEST_CASE("complex plans of A^H: update_values conjugates too", "[plan][complex][transpose]") {
  if (test::require_cpu_backend()) check_conjugate_transpose_updates(BackendKind::cpu);
}
TEST_CASE("cuda device: complex A^H update_values conjugates too", "[cuda][complex]") {
  if (!test::gpu_available()) SPMVJIT_SKIP("no GPU of the backend under test");
  check_conjugate_transpose_updates(test::gpu_kind());
}

TEST_CASE("complex plans through the C++ layer", "[api][complex]") {
  if (!test::require_cpu_backend()) return;
  using V = std::complex<float>;
  const auto a = complexify(generate_matrix("poisson2d:9", 2), 8).cast<int32_t, V>();
  spmvjit::Options o;
  o.backend = SPMV_BACKEND_CPU;
  spmvjit::SpmvPlan plan(
      spmvjit::csr_view(a.rows, a.cols, a.nnz(), a.row_ptr.data(), a.col_idx.data(), a.val.data()), o);
  CHECK(plan.value_type() == SPMV_VALUE_COMPLEX_FLOAT);
  const auto x = random_vector<V>(a.cols, 4);
  std::vector<V> y = random_vector<V>(a.rows, 5);
  const auto y0 = y;
  const V al(-0.5f, 1.5f), be(2.0f, -0.5f);
  plan.execute(al, x.data(), be, y.data());
  CHECK(check_spmv_complex(a, reference_spmv_complex(a, C(al), x.data(), C(be), y0.data()), y.data()) == "");
  // Scalars of another type are refused before the library reads anything.
  std::vector<float> xf(size_t(a.cols)), yf(size_t(a.rows), 7.0f);
  try {
    plan.execute(1.0f, xf.data(), 0.0f, yf.data());
    FAIL("execute<float> ran on a complex float plan");
  } catch (const spmvjit::ApiError& e) {
    CHECK(e.status() == SPMV_STATUS_INVALID_VALUE);
    CHECK_THAT(e.what(), Catch::Contains("complex float"));
  }
  CHECK(yf[0] == 7.0f);
  std::vector<std::complex<double>> xd(size_t(a.cols)), yd(size_t(a.rows));
  CHECK_THROWS_AS(plan.execute(std::complex<double>(1), xd.data(), std::complex<double>(0), yd.data()),
                  spmvjit::ApiError);
}

// Converters of complex values store both parts: each format's arrays give the matrix back.
TEST_CASE("complex converters round-trip", "[formats][complex]") {
  for (const char* spec : {"powerlaw:300", "random:200:0:9:150", "short:100"}) {
    const auto a = complexify(generate_matrix(spec, 6), 11).cast<int32_t, std::complex<float>>();
    const CsrRef ref = a.ref();
    TargetInfo t;
    t.backend = BackendKind::cpu;
    t.threads = 3;
    t.simd_bytes = 32;
    const MatrixStats s = compute_stats(ref);
    for (const Format* f : complex_formats(BackendKind::cpu))
      for (const FormatParams& p : f->candidates(ref, s, t)) {
        INFO(f->name() << " " << params_json(p).dump() << " on " << spec);
        if (!f->estimate(ref, s, p, t).applicable) continue;
        const FormatData d = f->convert(ref, p, t);
        CHECK(d.value == ValueType::c32);
        std::vector<Triplet> got;
        f->to_triplets(d, ref, got);
        test::sort_triplets(got);
        CHECK(got == test::triplets_of(a));
      }
  }
}

// The planner's byte counts take a complex value as 8 or 16 bytes (the cost model compares formats
// on the bytes one SpMV moves).
TEST_CASE("complex plans count 8 and 16 bytes per value", "[plan][complex]") {
  if (!test::require_cpu_backend()) return;
  const Csr64 real = generate_matrix("random:300:0:9", 2);
  const int64_t rows = real.rows, cols = real.cols, nnz = real.nnz();
  auto bytes = [&](auto value_tag) {
    using V = decltype(value_tag);
    const auto a = complexify(real, 1).cast<int32_t, V>();
    spmv_options_t o = cpu_options("csr");
    PlanGuard g;
    const spmv_csr_t d = csr_view(a.rows, a.cols, a.nnz(), a.row_ptr.data(), a.col_idx.data(), a.val.data());
    REQUIRE(spmv_plan(&g.p, &d, &o) == SPMV_STATUS_SUCCESS);
    return Json::parse(describe(g.p))["bytes"];
  };
  for (const auto& [b, vs] : {std::pair{bytes(std::complex<float>()), int64_t(8)},
                              std::pair{bytes(std::complex<double>()), int64_t(16)}}) {
    INFO(vs << "-byte values");
    CHECK(b["matrix"].as_int() == 4 * (rows + 1) + (4 + vs) * nnz);
    // x, then y read and written (beta != 0).
    CHECK(b["per_spmv"].as_int() == b["matrix"].as_int() + vs * cols + 2 * vs * rows);
  }
}
