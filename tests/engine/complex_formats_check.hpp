// Shared by the complex format tests (tests/engine/test_kernels_complex.cpp: general matrices, A^T
// and A^H; tests/engine/test_symmetric_complex.cpp: complex symmetric and Hermitian matrices): the
// test matrices (edge cases, generated, base one, one value everywhere) with complex values, the
// complex (alpha, beta) pairs, one check of a plan with fresh x and y, NaN-poisoned y where
// beta == 0 and canaries past y, and the run of every format plus the planner's choice.
#pragma once

#include <algorithm>
#include <catch2/catch.hpp>
#include <complex>
#include <limits>
#include <map>
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

namespace spmvjit::test::complex_formats {

using test::from_rows;
using Csr64 = HostCsr<int64_t, double>;
using Cplx = HostCsr<int64_t, std::complex<double>>;

// The real test matrix with an imaginary part on most entries (tests/engine/spmm_complex_check.hpp).
using test::spmm_complex::complexify;

// One row of `long_len` entries (row `at`) among rows of 0..3 entries.
inline Csr64 huge_row_matrix(int64_t rows, int64_t at, int64_t long_len) {
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

inline Csr64 unsorted(Csr64 a) {
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

inline const std::vector<TestMatrix>& test_matrices() {
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
                             "blocks:97:2:3", "random:20000:0:12", "blockfem:4:3"})
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

inline std::string describe(spmv_plan_t p) {
  const char* json = nullptr;
  if (spmv_plan_describe(p, &json) != SPMV_STATUS_SUCCESS || !json) return "";
  return json;
}

inline spmv_options_t cpu_options(const char* format) {
  spmv_options_t o;
  spmv_options_init(&o);
  o.backend = SPMV_BACKEND_CPU;
  o.format = format;
  o.threads = 3;
  return o;
}

// The CPU, or the GPU backend of the device tests (CUDA, or HIP with SPMVJIT_TEST_GPU=hip).
inline spmv_options_t backend_options(BackendKind b, const char* format) {
  spmv_options_t o = cpu_options(format);
  if (b != BackendKind::cpu) o.backend = test::gpu_api();
  return o;
}

using C = std::complex<double>;
// (alpha, beta) pairs: every epilogue, and the values a kernel that looks at real parts only would
// take for another epilogue: alpha 1 + 0.5i is not one, beta -0.75i is not zero, alpha 0 (y = beta y).
inline const std::vector<std::pair<C, C>>& scalars() {
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

inline std::vector<const Format*> complex_formats(BackendKind b) {
  std::vector<const Format*> out;
  for (const Format* f : all_formats())
    if (f->supports(b) && f->supports_value(ValueType::c32)) out.push_back(f);
  return out;
}

// What the plans are told the matrix is (spmv_options_t::matrix_type, fill_mode).
struct Declared {
  spmv_matrix_type_t type = SPMV_MATRIX_GENERAL;
  spmv_fill_mode_t fill = SPMV_FILL_LOWER;
  bool general() const { return type == SPMV_MATRIX_GENERAL; }
};

// The matrix a plan of `a` computes with: a itself, or the full matrix of its declared triangle
// (conjugated mirrors when Hermitian); then op(.) of it, transposed and for A^H conjugated.
template <class I, class V>
HostCsr<I, V> judged_matrix(const HostCsr<I, V>& a, spmv_operation_t op, Declared as) {
  const HostCsr<I, V> m = as.general() ? a
                                       : reference_symmetric_full(a, as.fill == SPMV_FILL_UPPER,
                                                                  as.type == SPMV_MATRIX_HERMITIAN);
  if (op == SPMV_OPERATION_NON_TRANSPOSE) return m;
  return reference_transpose(m, op == SPMV_OPERATION_CONJUGATE_TRANSPOSE);
}

// Every format that takes complex values, and the planner's own choice, on every test matrix
// (the square ones when declared symmetric or Hermitian); a format refused is UNSUPPORTED with a
// reason. Every format runs on some matrix; formats that store one triangle only when declared.
template <class I, class V>
void run_complex_formats(spmv_operation_t op = SPMV_OPERATION_NON_TRANSPOSE, BackendKind b = BackendKind::cpu,
                         Declared as = {}) {
  if (b == BackendKind::cpu && !test::require_cpu_backend()) return;
  if (b != BackendKind::cpu && !test::gpu_available()) {
    SPMVJIT_SKIP("no GPU of the backend under test");
  }
  const auto formats = complex_formats(b);
  REQUIRE(formats.size() >= 4);  // csr, csr_vector, ell, sell
  uint64_t seed = 2000;
  std::map<std::string, int> ran;  // plans checked per format: none would be a test that cannot fail
  for (const TestMatrix& m : test_matrices()) {
    if (!as.general() && m.a.rows != m.a.cols) continue;
    Typed<I, V> t(m);
    const HostCsr<I, V> judged = judged_matrix(t.a, op, as);
    for (const Format* f : all_formats()) {
      if (!f->supports(b)) continue;
      t.reset();
      INFO("format " << f->name() << ", matrix " << m.name << " (" << m.a.rows << " x " << m.a.cols
                     << ", nnz " << m.a.nnz() << ", base " << m.base << ")");
      const std::string name = f->name();
      spmv_options_t o = backend_options(b, name.c_str());
      o.operation = op;
      o.matrix_type = as.type;
      o.fill_mode = as.fill;
      PlanGuard g;
      const spmv_status_t st = spmv_plan(&g.p, &t.desc, &o);
      if (!f->supports_value(value_type_of<V>())) {
        CHECK(st == SPMV_STATUS_UNSUPPORTED);
        CHECK(g.p == nullptr);
        CHECK_THAT(spmv_last_error(), Catch::Contains("does not support complex"));
        continue;
      }
      // Too much padding (ell on the huge row), not banded (sym_diag), not declared symmetric.
      if (st == SPMV_STATUS_UNSUPPORTED) {
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
      ++ran[name];
    }
    INFO("auto planner, matrix " << m.name);
    spmv_options_t o = backend_options(b, nullptr);
    o.operation = op;
    o.matrix_type = as.type;
    o.fill_mode = as.fill;
    PlanGuard g;
    t.reset();
    REQUIRE(spmv_plan(&g.p, &t.desc, &o) == SPMV_STATUS_SUCCESS);
    t.scribble();
    const std::string d = describe(g.p);
    CHECK(test::json_error(d) == "");
    const Format* chosen = find_format(test::json_string_field(d, "format"));
    REQUIRE(chosen != nullptr);
    CHECK(chosen->supports_value(value_type_of<V>()));
    CHECK(check_plan(g.p, judged, ++seed, b) == "");
    ++ran["auto: " + chosen->name()];
  }
  for (const Format* f : formats) {
    if (f->stores_one_triangle() && as.general()) continue;  // refused above, as it must be
    INFO("format " << f->name() << " ran on no test matrix");
    CHECK(ran[f->name()] > 0);
  }
  // A banded matrix declared symmetric gets one triangle from the CPU planner (poisson2d:12; the
  // GPU's choice on matrices this small is left to its cost model, sym_diag runs forced above).
  if (!as.general() && b == BackendKind::cpu) CHECK(ran["auto: sym_diag"] > 0);
}

}  // namespace spmvjit::test::complex_formats
