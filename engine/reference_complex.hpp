// Reference for k complex vectors (spmm_execute of c32/c64 plans): one row at a time in
// std::complex<long double>, judged part by part as check_spmv_complex judges one vector.
#pragma once

#include <algorithm>
#include <complex>
#include <cstdint>
#include <string>
#include <vector>

#include "engine/reference.hpp"

namespace spmvjit {

// Row i of alpha * A * x + beta * y_i in std::complex<long double>, x read through x_at(column),
// and its rounding yardstick |alpha| sum |a_ij| |x_j| + |beta| |y_i| (moduli). beta == 0 ignores
// y_i entirely (it may be NaN), as the engine must.
struct ComplexRowReference {
  std::complex<long double> y;
  long double scale;
};
template <class I, class R, class XAt>
ComplexRowReference complex_reference_row(const HostCsr<I, std::complex<R>>& a, int64_t i,
                                          std::complex<double> alpha, XAt&& x_at, std::complex<double> beta,
                                          std::complex<R> y_i) {
  using C = std::complex<long double>;
  const C al(alpha.real(), alpha.imag()), be(beta.real(), beta.imag());
  C s = 0;
  long double mag = 0;
  for (int64_t k = a.row_ptr[size_t(i)]; k < a.row_ptr[size_t(i) + 1]; ++k) {
    const std::complex<R> v = a.val[size_t(k)], xr = x_at(int64_t(a.col_idx[size_t(k)]));
    const C vv(v.real(), v.imag()), xv(xr.real(), xr.imag());
    s += vv * xv;
    mag += std::abs(vv) * std::abs(xv);
  }
  ComplexRowReference r{al * s, std::abs(al) * mag};
  if (beta != std::complex<double>(0)) {
    const C yv(y_i.real(), y_i.imag());
    r.y += be * yv;
    r.scale += std::abs(be) * std::abs(yv);
  }
  return r;
}

// k complex vectors: "" when both parts of each element of each vector j of y agree with the
// reference of alpha * A * x_j + beta * y0_j (check_value, a row of len entries counting as
// 2 len + 2 roundings, as check_spmv_complex), else a message naming the first bad vector, row
// and part. Element (i, j) lies at i * ld + j (row-major) or j * ld + i (column-major).
// max_work > 0: when nnz * k exceeds it, a sample of rows is judged (the first and last 64 and
// evenly spaced ones), as check_vectors does; tests leave it 0 (every row). One row at a time
// with x and y read in place (no per-vector buffers); the vectors checked side by side.
template <class I, class R>
std::string check_vectors_complex(const HostCsr<I, std::complex<R>>& a, int64_t k, bool row_major,
                                  std::complex<double> alpha, const std::complex<R>* x, int64_t ldx,
                                  std::complex<double> beta, const std::complex<R>* y0,
                                  const std::complex<R>* y, int64_t ldy, int64_t max_work = 0) {
  auto at = [&](int64_t i, int64_t j, int64_t ld) { return size_t(row_major ? i * ld + j : j * ld + i); };
  const int64_t work = std::max<int64_t>(a.nnz(), a.rows) * k;
  const bool sampled = max_work > 0 && work > max_work && a.rows > 128;
  const bool read_y0 = beta != std::complex<double>(0);
  auto check_one = [&](int64_t j) -> std::string {
    const std::string vec = k > 1 ? "vector " + std::to_string(j) + ", " : std::string();
    const int64_t step = sampled ? std::max<int64_t>(1, work / max_work) : 1;
    for (int64_t i = 0; i < a.rows;
         i = (i < 64 || i >= a.rows - 65) ? i + 1 : std::min(i + step, a.rows - 64)) {
      const ComplexRowReference r = complex_reference_row(
          a, i, alpha, [&](int64_t c) { return x[at(c, j, ldx)]; }, beta,
          read_y0 ? y0[at(i, j, ldy)] : std::complex<R>(0));
      const int64_t len = 2 * int64_t(a.row_ptr[size_t(i) + 1] - a.row_ptr[size_t(i)]) + 2;
      const std::complex<R> got = y[at(i, j, ldy)];
      const std::string where = vec + "row " + std::to_string(i) + (sampled ? " (sampled)" : "");
      std::string bad = check_value<R>((long double)got.real(), r.y.real(), r.scale, len);
      if (!bad.empty()) return where + ", real part: " + bad;
      bad = check_value<R>((long double)got.imag(), r.y.imag(), r.scale, len);
      if (!bad.empty()) return where + ", imaginary part: " + bad;
    }
    return "";
  };
  std::vector<std::string> bad(static_cast<size_t>(std::max<int64_t>(k, 0)));
  parallel_for(k, int(std::min<int64_t>({k, int64_t(process_threads()), 8})),
               [&](int64_t j0, int64_t j1, int) {
                 for (int64_t j = j0; j < j1; ++j) bad[size_t(j)] = check_one(j);
               });
  for (const std::string& b : bad)
    if (!b.empty()) return b;
  return "";
}

}  // namespace spmvjit
