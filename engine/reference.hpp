// Reference SpMV in long double and the error check every kernel is judged by.
#pragma once

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <string>
#include <vector>

#include "core/cpu_count.hpp"
#include "core/parallel.hpp"
#include "engine/csr.hpp"

namespace spmvjit {

struct ReferenceResult {
  std::vector<long double> y;      // alpha*A*x + beta*y_in, in long double
  std::vector<long double> scale;  // |alpha|*sum|a_ij x_j| + |beta y_i|: the rounding yardstick
  // How far above and below zero a partial sum of the row may go, whatever the summation order
  // (products of one sign summed first, then scaled by alpha, plus beta*y_i): a kernel's partial
  // sum can overflow to +inf only when `up` exceeds the value type's range, to -inf only when
  // `down` does. Empty when not computed (a hand-made ReferenceResult): then no overflow is
  // excused.
  std::vector<long double> up, down;
};

// Row i of alpha * A * x + beta * y_i in long double, x read through x_at(column): the value, the
// rounding yardstick and how far partial sums may reach (ReferenceResult's fields for one row).
struct RowReference {
  long double y, scale, up, down;
};
// beta == 0 ignores y_i entirely (it may be NaN), as the engine must.
template <class I, class V, class XAt>
RowReference reference_row(const HostCsr<I, V>& a, int64_t i, double alpha, XAt&& x_at, double beta, V y_i) {
  const long double al = alpha, abs_al = std::fabs(al);
  long double s = 0, pos = 0, neg = 0;
  for (int64_t k = a.row_ptr[size_t(i)]; k < a.row_ptr[size_t(i) + 1]; ++k) {
    const long double p = (long double)a.val[size_t(k)] * (long double)x_at(int64_t(a.col_idx[size_t(k)]));
    s += p;
    if (p > 0) pos += p;
    if (p < 0) neg -= p;
  }
  RowReference r{al * s, abs_al * (pos + neg), 0, 0};
  // The raw sum reaches pos and -neg; alpha scales (and may flip) it afterwards.
  r.up = std::fmax(al >= 0 ? pos : neg, abs_al * (al >= 0 ? pos : neg));
  r.down = std::fmax(al >= 0 ? neg : pos, abs_al * (al >= 0 ? neg : pos));
  if (beta != 0) {
    const long double t = (long double)beta * (long double)y_i;
    r.y += t;
    r.scale += std::fabs(t);
    if (t > 0) r.up += t;
    if (t < 0) r.down -= t;
  }
  return r;
}

// beta == 0 ignores y_in entirely (it may hold NaN), as the engine must.
template <class I, class V>
ReferenceResult reference_spmv(const HostCsr<I, V>& a, double alpha, const V* x, double beta, const V* y_in) {
  ReferenceResult r;
  r.y.resize(size_t(a.rows));
  r.scale.resize(size_t(a.rows));
  r.up.resize(size_t(a.rows));
  r.down.resize(size_t(a.rows));
  for (int64_t i = 0; i < a.rows; ++i) {
    const RowReference row = reference_row(
        a, i, alpha, [x](int64_t c) { return x[c]; }, beta, beta != 0 ? y_in[i] : V(0));
    r.y[size_t(i)] = row.y;
    r.scale[size_t(i)] = row.scale;
    r.up[size_t(i)] = row.up;
    r.down[size_t(i)] = row.down;
  }
  return r;
}

namespace detail {

// A value with the digits that tell V's neighbours apart ("0.000000" hid subnormals).
template <class V>
std::string show(long double v) {
  if (std::isnan(v)) return "nan";  // whatever its sign bit: inf - inf is -nan on x86
  char b[64];
  std::snprintf(b, sizeof b, "%.*Lg", std::numeric_limits<V>::max_digits10, v);
  return b;
}

}  // namespace detail

// Judges one computed value against the reference of its row of `len` entries; returns "" when
// it agrees, else why not.
//  - Finite results: |y - ref| <= 2 (len + 4) eps(V) scale + 2 (len + 4) min(V): the classic
//    dot-product bound, doubled, and an absolute floor for results below V's normal range, where
//    each of the (len + 4) roundings may lose up to min(V) (a subnormal result has fewer
//    significant bits than eps promises; a flush to zero loses it all).
//  - NaN agrees with NaN (inf - inf and 0 * inf in the inputs make both NaN).
//  - An infinity agrees with the same infinity, and with a finite reference whose partial sums
//    may pass V's largest value in that direction (ReferenceResult::up/down, tolerance included):
//    the reference is exact in long double, so a value just above V's range rounds to that
//    infinity, and a kernel that sums in another order may overflow on the way even when the
//    exact sum is finite (1e308 + 1e308 - 1e308). NaN from a finite reference is excused only
//    when the partial sums may overflow both ways (+inf + -inf).
// So a wrong finite value, inf for -inf, NaN for a number and a number for NaN or inf all fail.
template <class V>
std::string check_value(long double got, long double ref, long double scale, int64_t len, long double up = 0,
                        long double down = 0) {
  const long double eps = std::numeric_limits<V>::epsilon();
  const long double ops = 2 * ((long double)len + 4);
  const long double tol = ops * eps * scale + ops * std::numeric_limits<V>::min();
  auto why = [&](const std::string& what) {
    return "got " + detail::show<V>(got) + ", expected " + detail::show<V>(ref) + " (" + what + ")";
  };
  // Whether a partial sum reaching `reach` may round to infinity in V: from V's largest value
  // plus half an ulp on, round-to-nearest gives infinity (compared in long double, since
  // converting a value beyond V's range is undefined behaviour).
  const long double overflow_at = (long double)std::numeric_limits<V>::max() * (1 + eps / 2);
  // Each partial sum is within a relative (ops * eps) of its exact value; the row's tolerance would
  // be infinite beside an infinite input.
  auto may_overflow = [&](long double reach) { return !(reach * (1 + ops * eps) < overflow_at); };
  if (std::isnan(ref)) return std::isnan(got) ? "" : why("NaN expected");
  const bool over_up = std::isinf(ref) ? ref > 0 || may_overflow(up) : may_overflow(up);
  const bool over_down = std::isinf(ref) ? ref < 0 || may_overflow(down) : may_overflow(down);
  if (std::isnan(got))
    return over_up && over_down ? "" : why("NaN where no partial sum can overflow both ways");
  if (std::isinf(ref)) {
    if (got == ref) return "";
    return why(std::isinf(got) ? "the opposite infinity" : "a finite value for an infinity");
  }
  if (std::isinf(got)) {
    if (got > 0 ? over_up : over_down) return "";
    return why("overflow where the sum stays within the range of the value type");
  }
  const long double err = std::fabs(got - ref);
  if (err <= tol) return "";
  return why("error " + detail::show<V>(err) + " > tolerance " + detail::show<V>(tol));
}

// Returns "" when every y[i] agrees with the reference by check_value, else a message naming the
// first bad row.
template <class I, class V>
std::string check_spmv(const HostCsr<I, V>& a, const ReferenceResult& ref, const V* y) {
  const bool reach = ref.up.size() == ref.y.size() && ref.down.size() == ref.y.size();
  for (int64_t i = 0; i < a.rows; ++i) {
    const size_t r = size_t(i);
    const std::string bad =
        check_value<V>((long double)y[i], ref.y[r], ref.scale[r], int64_t(a.row_ptr[i + 1] - a.row_ptr[i]),
                       reach ? ref.up[r] : 0, reach ? ref.down[r] : 0);
    if (!bad.empty()) return "row " + std::to_string(i) + ": " + bad;
  }
  return "";
}

// k vectors (spmm_execute's X and Y): "" when each vector j of y agrees with the reference of
// alpha * A * x_j + beta * y0_j, else a message naming the first bad vector and row. Element (i, j)
// lies at i * ld + j (row-major) or j * ld + i (column-major). max_work > 0: when nnz * k exceeds
// it, only a sample of rows is judged (the first and last 64 and evenly spaced ones, about
// max_work products in all): for benchmarks of matrices whose full long-double check would take
// longer than the timing; tests leave it 0 (every row).
template <class I, class V>
std::string check_vectors(const HostCsr<I, V>& a, int64_t k, bool row_major, double alpha, const V* x,
                          int64_t ldx, double beta, const V* y0, const V* y, int64_t ldy,
                          int64_t max_work = 0) {
  auto at = [&](int64_t i, int64_t j, int64_t ld) { return size_t(row_major ? i * ld + j : j * ld + i); };
  const int64_t work = std::max<int64_t>(a.nnz(), a.rows) * k;
  const bool sampled = max_work > 0 && work > max_work && a.rows > 128;
  // Vector j alone: "" or what is wrong with it.
  auto check_one = [&](int64_t j) -> std::string {
    const std::string vec = k > 1 ? "vector " + std::to_string(j) + ", " : std::string();
    // One row at a time, x_j and y0_j read in place: no allocation (the vectors of a large
    // matrix, or millions of sampled rows, would page in gigabytes of buffers).
    const int64_t step = sampled ? std::max<int64_t>(1, work / max_work) : 1;
    for (int64_t i = 0; i < a.rows;
         i = (i < 64 || i >= a.rows - 65) ? i + 1 : std::min(i + step, a.rows - 64)) {
      const RowReference r = reference_row(
          a, i, alpha, [&](int64_t c) { return x[at(c, j, ldx)]; }, beta,
          beta != 0 ? y0[at(i, j, ldy)] : V(0));
      const int64_t len = int64_t(a.row_ptr[size_t(i) + 1] - a.row_ptr[size_t(i)]);
      const std::string bad = check_value<V>((long double)y[at(i, j, ldy)], r.y, r.scale, len, r.up, r.down);
      if (!bad.empty()) return vec + "row " + std::to_string(i) + (sampled ? " (sampled): " : ": ") + bad;
    }
    return "";
  };
  // The vectors side by side (a benchmark's 8 or 32 long-double checks of a large matrix took
  // most of its time on one thread); the first bad one in order is the answer.
  std::vector<std::string> bad(static_cast<size_t>(std::max<int64_t>(k, 0)));
  parallel_for(k, int(std::min<int64_t>({k, int64_t(process_threads()), 8})),
               [&](int64_t j0, int64_t j1, int) {
                 for (int64_t j = j0; j < j1; ++j) bad[size_t(j)] = check_one(j);
               });
  for (const std::string& b : bad)
    if (!b.empty()) return b;
  return "";
}

// Complex values (V = std::complex<R>): the reference in std::complex<long double>, with the
// yardstick |alpha| sum |a_ij| |x_j| + |beta| |y_i| (moduli) for both parts.
struct ComplexReferenceResult {
  std::vector<std::complex<long double>> y;
  std::vector<long double> scale;
};

template <class I, class R>
ComplexReferenceResult reference_spmv_complex(const HostCsr<I, std::complex<R>>& a,
                                              std::complex<double> alpha, const std::complex<R>* x,
                                              std::complex<double> beta, const std::complex<R>* y_in) {
  using C = std::complex<long double>;
  ComplexReferenceResult r;
  r.y.resize(size_t(a.rows));
  r.scale.resize(size_t(a.rows));
  const C al(alpha.real(), alpha.imag()), be(beta.real(), beta.imag());
  for (int64_t i = 0; i < a.rows; ++i) {
    C s = 0;
    long double mag = 0;
    for (int64_t k = a.row_ptr[size_t(i)]; k < a.row_ptr[size_t(i) + 1]; ++k) {
      const C v(a.val[size_t(k)].real(), a.val[size_t(k)].imag());
      const std::complex<R> xr = x[a.col_idx[size_t(k)]];
      const C xv(xr.real(), xr.imag());
      s += v * xv;
      mag += std::abs(v) * std::abs(xv);
    }
    C yi = al * s;
    long double sc = std::abs(al) * mag;
    if (beta != std::complex<double>(0)) {  // beta == 0: y_in is not read (it may hold NaN)
      const C yv(y_in[i].real(), y_in[i].imag());
      yi += be * yv;
      sc += std::abs(be) * std::abs(yv);
    }
    r.y[size_t(i)] = yi;
    r.scale[size_t(i)] = sc;
  }
  return r;
}

// "" when both parts of every y[i] agree with the reference by check_value (finite values: no
// overflow is excused), else a message naming the first bad row and part. A complex product is
// two products and a sum per part, so a row of len entries counts as 2 len + 2 roundings.
template <class I, class R>
std::string check_spmv_complex(const HostCsr<I, std::complex<R>>& a, const ComplexReferenceResult& ref,
                               const std::complex<R>* y) {
  for (int64_t i = 0; i < a.rows; ++i) {
    const size_t r = size_t(i);
    const int64_t len = 2 * int64_t(a.row_ptr[r + 1] - a.row_ptr[r]) + 2;
    std::string bad = check_value<R>((long double)y[i].real(), ref.y[r].real(), ref.scale[r], len);
    if (!bad.empty()) return "row " + std::to_string(i) + ", real part: " + bad;
    bad = check_value<R>((long double)y[i].imag(), ref.y[r].imag(), ref.scale[r], len);
    if (!bad.empty()) return "row " + std::to_string(i) + ", imaginary part: " + bad;
  }
  return "";
}

// A^T for judging plans of op(A) = A^T: the plain serial counting sort, kept apart from the
// engine's parallel one (engine/transpose.cpp) so that a bug there cannot hide here.
template <class I, class V>
HostCsr<I, V> reference_transpose(const HostCsr<I, V>& a, bool conjugate = false) {
  HostCsr<I, V> t;
  t.rows = a.cols;
  t.cols = a.rows;
  t.row_ptr.assign(size_t(a.cols) + 1, I(0));
  for (int64_t k = 0; k < a.nnz(); ++k) ++t.row_ptr[size_t(a.col_idx[size_t(k)]) + 1];
  for (int64_t c = 0; c < a.cols; ++c) t.row_ptr[size_t(c) + 1] += t.row_ptr[size_t(c)];
  t.col_idx.resize(size_t(a.nnz()));
  t.val.resize(size_t(a.nnz()));
  std::vector<I> next(t.row_ptr.begin(), t.row_ptr.end() - 1);
  for (int64_t r = 0; r < a.rows; ++r)
    for (I k = a.row_ptr[size_t(r)]; k < a.row_ptr[size_t(r) + 1]; ++k) {
      const I d = next[size_t(a.col_idx[size_t(k)])]++;
      t.col_idx[size_t(d)] = I(r);
      t.val[size_t(d)] = a.val[size_t(k)];
      if constexpr (is_complex_v<V>)
        if (conjugate) t.val[size_t(d)] = std::conj(t.val[size_t(d)]);
    }
  return t;
}

// The full matrix of a symmetric one given by a triangle (upper: col >= row is read, else col <= row;
// the other triangle's entries are ignored), for judging engine/symmetric.cpp: every read entry
// (r, c, v) gives (r, c, v) and, off the diagonal, (c, r, v); serial triplets, then one counting
// pass by row. hermitian (complex values): (c, r, conj(v)), and the diagonal's imaginary parts
// dropped (BLAS's convention for Hermitian matrices).
template <class I, class V>
HostCsr<I, V> reference_symmetric_full(const HostCsr<I, V>& a, bool upper, bool hermitian = false) {
  struct Entry {
    int64_t r, c;
    V v;
  };
  std::vector<Entry> e;
  for (int64_t r = 0; r < a.rows; ++r)
    for (I k = a.row_ptr[size_t(r)]; k < a.row_ptr[size_t(r) + 1]; ++k) {
      const int64_t c = a.col_idx[size_t(k)];
      if (upper ? c < r : c > r) continue;
      V v = a.val[size_t(k)], m = v;
      if constexpr (is_complex_v<V>) {
        if (hermitian && c == r) v = m = V(v.real());
        if (hermitian && c != r) m = std::conj(v);
      }
      e.push_back({r, c, v});
      if (c != r) e.push_back({c, r, m});
    }
  HostCsr<I, V> s;
  s.rows = s.cols = a.rows;
  s.row_ptr.assign(size_t(a.rows) + 1, I(0));
  for (const Entry& x : e) ++s.row_ptr[size_t(x.r) + 1];
  for (int64_t r = 0; r < a.rows; ++r) s.row_ptr[size_t(r) + 1] += s.row_ptr[size_t(r)];
  s.col_idx.resize(e.size());
  s.val.resize(e.size());
  std::vector<I> next(s.row_ptr.begin(), s.row_ptr.end() - 1);
  for (const Entry& x : e) {
    const I d = next[size_t(x.r)]++;
    s.col_idx[size_t(d)] = I(x.c);
    s.val[size_t(d)] = x.v;
  }
  return s;
}

// Deterministic values in [-1, 1) from a seed (splitmix64), so failures reproduce.
template <class V>
std::vector<V> random_vector(int64_t n, uint64_t seed) {
  std::vector<V> v(static_cast<size_t>(n));
  uint64_t s = seed * 0x9e3779b97f4a7c15ULL + 1;
  for (auto& e : v) {
    s += 0x9e3779b97f4a7c15ULL;
    uint64_t z = s;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    z ^= z >> 31;
    if constexpr (is_complex_v<V>) {  // the imaginary part from the low bits
      using R = typename V::value_type;
      e = V(R(double(z >> 11) * 0x1.0p-53 * 2.0 - 1.0), R(double(z & 0x7ff) / 1024.0 - 1.0));
    } else {
      e = V(double(z >> 11) * 0x1.0p-53 * 2.0 - 1.0);
    }
  }
  return v;
}

}  // namespace spmvjit
