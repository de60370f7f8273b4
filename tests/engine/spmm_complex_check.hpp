// Shared by the complex SpMM tests (tests/engine/test_spmm_complex.cpp on the CPU,
// tests/runtime/test_cuda_spmm_complex.cpp on the GPU): the matrices, the complex (alpha, beta)
// pairs, and one check of k vectors in a layout with padded leading dimensions, NaN-poisoned X
// padding and Y (where beta == 0) and canaries around and inside Y, judged vector by vector
// against the std::complex<long double> reference (engine/reference_complex.hpp).
#pragma once

#include <algorithm>
#include <complex>
#include <cstdint>
#include <limits>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "engine/formats/format.hpp"
#include "engine/gen/generators.hpp"
#include "engine/plan.hpp"
#include "engine/reference.hpp"
#include "engine/reference_complex.hpp"
#include "runtime/device_buffer.hpp"
#include "spmvjit/spmvjit.hpp"
#include "tests/test_matrices.hpp"
#include "tests/test_support.hpp"

namespace spmvjit::test::spmm_complex {

using Cplx = HostCsr<int64_t, std::complex<double>>;
using C = std::complex<double>;

const int kVectorCounts[] = {1, 2, 3, 8, 32, 33};
constexpr int kCanaries = 8;  // Y elements before and after Y (and its padding) that must stay as they are

// The real matrix with an imaginary part on most entries (every fifth entry keeps none).
inline Cplx complexify(const HostCsr<int64_t, double>& a, uint64_t seed) {
  Cplx c;
  c.rows = a.rows;
  c.cols = a.cols;
  c.row_ptr = a.row_ptr;
  c.col_idx = a.col_idx;
  const auto im = random_vector<double>(a.nnz(), seed);
  for (size_t k = 0; k < a.val.size(); ++k) c.val.emplace_back(a.val[k], k % 5 == 4 ? 0.0 : im[k]);
  return c;
}

struct Named {
  std::string name;
  Cplx a;
};

// Edge cases and generated matrices; m != n for most. "huge row" and "long rows" have rows past a
// GPU chunk (8,192 products per warp: 256 to 8,192 nonzeros as k falls), so the GPU's chunk step
// (beta in the row step, then atomics) runs for every k.
inline std::vector<Named> matrices() {
  std::vector<std::pair<std::string, HostCsr<int64_t, double>>> real;
  real.push_back({"1x1", test::from_rows(1, 1, {{{0, 2.5}}})});
  real.push_back({"0 rows 0x5", test::from_rows(0, 5, {})});
  real.push_back({"0 columns 4x0", test::from_rows(4, 0, {{}, {}, {}, {}})});
  real.push_back({"empty rows 5x9", test::from_rows(5, 9, {{}, {{0, 1.0}, {8, -2.0}}, {}, {{3, 0.5}}, {}})});
  // One huge row (20,000 entries) among rows of 0-3 entries, one of them empty.
  test::RowLists huge(500);
  for (int64_t c = 0; c < 20000; ++c) huge[37].push_back({c, double((c * 7) % 13) / 6.0 - 1.0});
  for (int64_t i = 0; i < 500; ++i)
    if (i != 37)
      for (int64_t k = 0; k < i % 4; ++k)
        huge[size_t(i)].push_back({(i * 7919 + k * 104729) % 20001, 1.5 - k});
  for (auto& r : huge) std::sort(r.begin(), r.end());
  real.push_back({"huge row 500x20001", test::from_rows(500, 20001, huge)});
  // Two long rows (9,000 and 600 entries) among short rows and an empty one, wide.
  test::RowLists long_rows(40);
  for (int64_t c = 0; c < 9000; ++c) long_rows[3].push_back({c, double((c * 7) % 13) - 6.0});
  for (int64_t c = 0; c < 600; ++c) long_rows[20].push_back({(c * 15) % 9001, 0.25 * double(c % 9) - 1.0});
  for (int64_t i = 0; i < 40; ++i)
    if (i != 3 && i != 20 && i != 30) long_rows[size_t(i)].push_back({(i * 211) % 9001, 1.0 + double(i)});
  for (auto& r : long_rows) std::sort(r.begin(), r.end());
  real.push_back({"long rows 40x9001", test::from_rows(40, 9001, long_rows)});
  real.push_back({"poisson2d:20", generate_matrix("poisson2d:20", 3)});
  real.push_back({"tall 700x60", generate_matrix("random:700:0:9:60", 5)});
  std::vector<Named> m;
  uint64_t seed = 900;
  for (auto& [name, a] : real) m.push_back({name, complexify(a, ++seed)});
  return m;
}

// (alpha, beta): every epilogue, and values a kernel reading real parts only would take for
// another epilogue (alpha 1 + 0.5i is not one, beta -0.75i is not zero), alpha 0 (Y = beta Y),
// purely imaginary ones.
inline const std::vector<std::pair<C, C>>& scalars() {
  static const std::vector<std::pair<C, C>> s = {
      {{1, 0}, {0, 0}},   {{-1.75, 0.5}, {0, 0}}, {{1, 0}, {0.5, -0.25}}, {{0.3, -1.1}, {-1.25, 0.75}},
      {{1, 0.5}, {0, 0}}, {{1, 0}, {0, -0.75}},   {{0, 0}, {0.5, 2}},     {{0, 1}, {1, 0}},
      {{0, 0}, {0, 0}}};
  return s;
}

template <class V>
V nan_value() {
  const auto n = std::numeric_limits<typename V::value_type>::quiet_NaN();
  return V(n, n);
}

// X (cols x k) and Y (rows x k) of `a` (op(A), the matrix judged) in the layout, with leading
// dimensions past the minimum: X's padding NaN (a kernel reading it makes NaN), Y's padding and
// kCanaries elements before and after Y a canary that must come back unchanged. For every pair
// of scalars(): fresh X and Y (Y NaN where beta == 0), exec, then each vector judged by
// check_vectors_complex. `device`: X and Y go through device memory (GPU plans take device
// pointers). exec(alpha, X, ldx, beta, Y, ldy): "" or what failed. Returns "" or what is wrong.
template <class I, class V, class Exec>
std::string check_spmm(Exec exec, Backend* device, const HostCsr<I, V>& a, int64_t k, bool row_major,
                       uint64_t seed) {
  using R = typename V::value_type;
  // One row-major vector is read contiguous by the single-vector formats (ld 1; more is refused).
  const int64_t pad = row_major && k == 1 ? 0 : 1;
  const int64_t ldy = std::max<int64_t>(row_major ? k : a.rows, 1) + 2 * pad;
  const int64_t y_len = (row_major ? a.rows : k) * ldy;
  auto at = [&](int64_t i, int64_t j, int64_t ld) { return size_t(row_major ? i * ld + j : j * ld + i); };
  const V canary(R(12345), R(-6789));
  int c = 0;
  for (const auto& [alpha, beta] : scalars()) {
    ++c;
    const V al(R(alpha.real()), R(alpha.imag())), be(R(beta.real()), R(beta.imag()));
    // Odd and even leading dimensions of X, and X's base one value off a 16-byte boundary (GPU
    // row-major kernels load two complex floats as one vector only where both allow it).
    const int64_t ldx = std::max<int64_t>(row_major ? k : a.cols, 1) + pad * (c % 3 == 0 ? 3 : 4);
    const int64_t shift = pad && c % 3 == 2 ? 1 : 0;  // X's first value at x[shift]
    const int64_t x_len = (row_major ? a.cols : k) * ldx + shift;
    std::vector<V> x(size_t(x_len), nan_value<V>());
    std::vector<V> yb(size_t(y_len + 2 * kCanaries), canary);  // canaries, Y, canaries
    V* y = yb.data() + kCanaries;
    const auto xr = random_vector<V>(a.cols * k, seed * 32 + 2 * c),
               yr = random_vector<V>(a.rows * k, seed * 32 + 2 * c + 1);
    for (int64_t j = 0; j < k; ++j) {
      for (int64_t i = 0; i < a.cols; ++i) x[size_t(shift) + at(i, j, ldx)] = xr[size_t(j * a.cols + i)];
      for (int64_t i = 0; i < a.rows; ++i)
        y[at(i, j, ldy)] = be == V(0) ? nan_value<V>() : yr[size_t(j * a.rows + i)];
    }
    const std::vector<V> y0(y, y + y_len);
    std::ostringstream what;
    what << "k " << k << (row_major ? " row-major" : " column-major") << ", ldx " << ldx
         << (shift ? " (X shifted)" : "") << ", ldy " << ldy << ", alpha " << alpha << ", beta " << beta
         << ": ";
    std::string failed;
    if (device) {
      DeviceBuffer dx(*device, x.size() * sizeof(V)), dy(*device, yb.size() * sizeof(V));
      device->upload(dx.get(), x.data(), x.size() * sizeof(V));
      device->upload(dy.get(), yb.data(), yb.size() * sizeof(V));
      failed =
          exec(&al, static_cast<V*>(dx.get()) + shift, ldx, &be, static_cast<V*>(dy.get()) + kCanaries, ldy);
      device->synchronize(nullptr);
      device->download(yb.data(), dy.get(), yb.size() * sizeof(V));
    } else {
      failed = exec(&al, x.data() + shift, ldx, &be, y, ldy);
    }
    if (!failed.empty()) return what.str() + "the multiply failed: " + failed;
    const std::string bad =
        check_vectors_complex(a, k, row_major, alpha, x.data() + shift, ldx, beta, y0.data(), y, ldy);
    if (!bad.empty()) return what.str() + bad;
    for (int e = 0; e < kCanaries; ++e)
      if (yb[size_t(e)] != canary || yb[size_t(kCanaries + y_len + e)] != canary)
        return what.str() + "wrote outside Y";
    for (int64_t e = 0; e < y_len; ++e) {
      const int64_t minor = e % ldy;
      if (minor >= (row_major ? k : a.rows) && y[e] != canary)
        return what.str() + "wrote into Y's padding at " + std::to_string(e);
    }
  }
  return "";
}

// Runs a Plan's execute_many, "" or the error.
template <class V>
auto plan_exec(Plan& plan) {
  return [&plan](const V* al, const void* x, int64_t ldx, const V* be, void* y, int64_t ldy) {
    try {
      plan.execute_many(al, x, ldx, be, y, ldy, nullptr);
      return std::string();
    } catch (const std::exception& e) {
      return std::string(e.what());
    }
  };
}

template <class I, class V>
spmv_csr_t view(const HostCsr<I, V>& a) {
  return csr_view<I, V>(a.rows, a.cols, a.nnz(), a.row_ptr.data(),
                        a.col_idx.empty() ? nullptr : a.col_idx.data(),
                        a.val.empty() ? nullptr : a.val.data());
}

// The planner's plans for every k of kVectorCounts in both layouts of op(A) (A, A^T or A^H) on every
// matrix, through the C API: k > 1 takes csr_mm (describe says so), k = 1 a single-vector format.
// api: SPMV_BACKEND_CPU (device null) or the GPU's (device its backend).
template <class I, class V>
void check_planner(spmv_backend_t api, Backend* device, spmv_operation_t op) {
  int plans = 0;
  for (const Named& m : matrices()) {
    const HostCsr<I, V> a = m.a.template cast<I, V>();
    const HostCsr<I, V> judged = op == SPMV_OPERATION_NON_TRANSPOSE
                                     ? a
                                     : reference_transpose(a, op == SPMV_OPERATION_CONJUGATE_TRANSPOSE);
    const spmv_csr_t desc = view(a);
    for (int k : kVectorCounts)
      for (bool row_major : {false, true}) {
        Options o;
        o.backend = api;
        o.threads = 2;
        o.vectors = k;
        o.operation = op;
        o.layout = row_major ? SPMV_LAYOUT_ROW_MAJOR : SPMV_LAYOUT_COL_MAJOR;
        INFO(m.name << ", k " << k << (row_major ? " row-major" : " column-major")
                    << (op == SPMV_OPERATION_NON_TRANSPOSE ? ""
                        : op == SPMV_OPERATION_TRANSPOSE   ? ", A^T"
                                                           : ", A^H"));
        spmv_plan_t plan = nullptr;
        REQUIRE(spmv_plan(&plan, &desc, &o) == SPMV_STATUS_SUCCESS);
        auto exec = [&](const V* al, const void* x, int64_t ldx, const V* be, void* y, int64_t ldy) {
          return spmm_execute(plan, al, x, ldx, be, y, ldy, nullptr) == SPMV_STATUS_SUCCESS
                     ? std::string()
                     : spmv_last_error();
        };
        CHECK(check_spmm<I, V>(exec, device, judged, k, row_major, uint64_t(plans) + 1) == "");
        spmv_plan_info_t info = SPMV_PLAN_INFO_INIT;
        REQUIRE(spmv_plan_info(plan, &info) == SPMV_STATUS_SUCCESS);
        CHECK(info.vectors == k);
        CHECK(int(info.value_type) ==
              (sizeof(V) == 8 ? SPMV_VALUE_COMPLEX_FLOAT : SPMV_VALUE_COMPLEX_DOUBLE));
        const char* json = nullptr;
        REQUIRE(spmv_plan_describe(plan, &json) == SPMV_STATUS_SUCCESS);
        if (k > 1) CHECK(test::json_string_field(json, "format") == "csr_mm");
        CHECK(test::json_string_field(json, "value") == to_string(value_type_of<V>()));
        spmv_plan_destroy(plan);
        ++plans;
      }
  }
  CHECK(plans == int(matrices().size()) * 6 * 2);
}

}  // namespace spmvjit::test::spmm_complex
