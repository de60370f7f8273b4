// alpha and beta as execute receives them (a pointer to one value of the plan's type) and as the
// kernels take them (SpmvArgs: real and imaginary parts as doubles).
#pragma once

#include <complex>

#include "core/types.hpp"

namespace spmvjit {

struct Scalar {
  double re = 0, im = 0;
  bool zero() const { return re == 0 && im == 0; }
  bool one() const { return re == 1 && im == 0; }
};

// Reads one value of type `t` (complex: re then im); every float and double is exact in a double.
inline Scalar read_scalar(const void* p, ValueType t) {
  switch (t) {
    case ValueType::f32: return {double(*static_cast<const float*>(p)), 0};
    case ValueType::f64: return {*static_cast<const double*>(p), 0};
    case ValueType::c32: {
      const auto v = *static_cast<const std::complex<float>*>(p);
      return {double(v.real()), double(v.imag())};
    }
    case ValueType::c64: {
      const auto v = *static_cast<const std::complex<double>*>(p);
      return {v.real(), v.imag()};
    }
  }
  return {};
}

// The scalar as V (the imaginary part dropped for real V, where it is 0).
template <class V>
V scalar_as(const Scalar& s) {
  if constexpr (is_complex_v<V>)
    return V(typename V::value_type(s.re), typename V::value_type(s.im));
  else
    return V(s.re);
}

}  // namespace spmvjit
