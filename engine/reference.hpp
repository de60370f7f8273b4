// Reference SpMV in long double and the error check every kernel is judged by.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "engine/csr.hpp"

namespace spmvjit {

struct ReferenceResult {
  std::vector<long double> y;      // alpha*A*x + beta*y_in, in long double
  std::vector<long double> scale;  // |alpha|*sum|a_ij x_j| + |beta y_i|: the rounding yardstick
};

// beta == 0 ignores y_in entirely (it may hold NaN), as the engine must.
template <class I, class V>
ReferenceResult reference_spmv(const HostCsr<I, V>& a, double alpha, const V* x, double beta,
                               const V* y_in) {
  ReferenceResult r;
  r.y.resize(size_t(a.rows));
  r.scale.resize(size_t(a.rows));
  for (int64_t i = 0; i < a.rows; ++i) {
    long double s = 0, m = 0;
    for (int64_t k = a.row_ptr[i]; k < a.row_ptr[i + 1]; ++k) {
      const long double p = (long double)a.val[k] * (long double)x[a.col_idx[k]];
      s += p;
      m += std::fabs(p);
    }
    long double yi = (long double)alpha * s, sc = std::fabs((long double)alpha) * m;
    if (beta != 0) {
      yi += (long double)beta * (long double)y_in[i];
      sc += std::fabs((long double)beta * (long double)y_in[i]);
    }
    r.y[size_t(i)] = yi;
    r.scale[size_t(i)] = sc;
  }
  return r;
}

// Returns "" when every y[i] is within (row length + 4) * eps(V) * scale[i] of the reference
// (the classic dot-product bound, doubled), else a message naming the first bad row.
template <class I, class V>
std::string check_spmv(const HostCsr<I, V>& a, const ReferenceResult& ref, const V* y) {
  const long double eps = std::numeric_limits<V>::epsilon();
  for (int64_t i = 0; i < a.rows; ++i) {
    const long double len = (long double)(a.row_ptr[i + 1] - a.row_ptr[i]);
    const long double tol = 2 * (len + 4) * eps * ref.scale[size_t(i)] +
                            std::numeric_limits<V>::denorm_min();
    const long double err = std::fabs((long double)y[i] - ref.y[size_t(i)]);
    if (!(err <= tol))  // also catches NaN
      return "row " + std::to_string(i) + ": got " + std::to_string((double)y[i]) + ", expected " +
             std::to_string((double)ref.y[size_t(i)]) + " (error " + std::to_string((double)err) +
             " > tolerance " + std::to_string((double)tol) + ")";
  }
  return "";
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
    e = V(double(z >> 11) * 0x1.0p-53 * 2.0 - 1.0);
  }
  return v;
}

}  // namespace spmvjit
