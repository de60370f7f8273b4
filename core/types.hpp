// Index and value types every layer speaks of, and the dispatch from run-time types to templates.
#pragma once

#include <complex>
#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>

#include "core/error.hpp"

namespace spmvjit {

// c32 and c64 are complex values, re then im (std::complex<float>/<double>, laid out as C99's
// float _Complex / double _Complex and cuSPARSE's CUDA_C_32F / CUDA_C_64F).
enum class IndexType { i32, i64 };
enum class ValueType { f32, f64, c32, c64 };

inline const char* to_string(IndexType t) { return t == IndexType::i32 ? "int32" : "int64"; }
inline const char* to_string(ValueType t) {
  switch (t) {
    case ValueType::f32: return "float";
    case ValueType::f64: return "double";
    case ValueType::c32: return "complex_float";
    case ValueType::c64: return "complex_double";
  }
  return "?";
}
inline size_t size_of(IndexType t) { return t == IndexType::i32 ? 4 : 8; }
inline size_t size_of(ValueType t) {
  return t == ValueType::f32 ? 4 : t == ValueType::f64 ? 8 : t == ValueType::c32 ? 8 : 16;
}
inline bool is_complex(ValueType t) { return t == ValueType::c32 || t == ValueType::c64; }
// The type of one part (real or imaginary) of a value.
inline ValueType real_type(ValueType t) {
  return t == ValueType::f32 || t == ValueType::c32 ? ValueType::f32 : ValueType::f64;
}

template <class V>
inline constexpr bool is_complex_v = false;
template <class R>
inline constexpr bool is_complex_v<std::complex<R>> = true;

template <class I>
constexpr IndexType index_type_of() {
  static_assert(std::is_same_v<I, int32_t> || std::is_same_v<I, int64_t>);
  return std::is_same_v<I, int32_t> ? IndexType::i32 : IndexType::i64;
}
template <class V>
constexpr ValueType value_type_of() {
  static_assert(std::is_same_v<V, float> || std::is_same_v<V, double> ||
                std::is_same_v<V, std::complex<float>> || std::is_same_v<V, std::complex<double>>);
  return std::is_same_v<V, float>                 ? ValueType::f32
         : std::is_same_v<V, double>              ? ValueType::f64
         : std::is_same_v<V, std::complex<float>> ? ValueType::c32
                                                  : ValueType::c64;
}

// Calls f.template operator()<I>() for the index type.
template <class F>
decltype(auto) dispatch_index(IndexType index, F&& f) {
  if (index == IndexType::i32) return f.template operator()<int32_t>();
  return f.template operator()<int64_t>();
}

// Calls f.template operator()<I, V>() for the runtime index/value types, real values only: the
// paths that have no complex version (most formats' converters) are instantiated for float and
// double alone, and reaching one with complex values is a bug (the planner refuses first).
template <class F>
decltype(auto) dispatch_types(IndexType index, ValueType value, F&& f) {
  SPMVJIT_ASSERT(!is_complex(value),
                 std::string("a real-valued path reached with ") + to_string(value) + " values");
  if (index == IndexType::i32) {
    if (value == ValueType::f32) return f.template operator()<int32_t, float>();
    return f.template operator()<int32_t, double>();
  }
  if (value == ValueType::f32) return f.template operator()<int64_t, float>();
  return f.template operator()<int64_t, double>();
}

// The same over real and complex values (std::complex<float>/<double>): for the paths that
// support complex (Format::supports_value).
template <class F>
decltype(auto) dispatch_types_complex(IndexType index, ValueType value, F&& f) {
  if (!is_complex(value)) return dispatch_types(index, value, std::forward<F>(f));
  if (index == IndexType::i32) {
    if (value == ValueType::c32) return f.template operator()<int32_t, std::complex<float>>();
    return f.template operator()<int32_t, std::complex<double>>();
  }
  if (value == ValueType::c32) return f.template operator()<int64_t, std::complex<float>>();
  return f.template operator()<int64_t, std::complex<double>>();
}

}  // namespace spmvjit
