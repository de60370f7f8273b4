// Index and value types every layer speaks of, and the dispatch from run-time types to templates.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

namespace spmvjit {

enum class IndexType { i32, i64 };
enum class ValueType { f32, f64 };

inline const char* to_string(IndexType t) { return t == IndexType::i32 ? "int32" : "int64"; }
inline const char* to_string(ValueType t) { return t == ValueType::f32 ? "float" : "double"; }
inline size_t size_of(IndexType t) { return t == IndexType::i32 ? 4 : 8; }
inline size_t size_of(ValueType t) { return t == ValueType::f32 ? 4 : 8; }

template <class I>
constexpr IndexType index_type_of() {
  static_assert(std::is_same_v<I, int32_t> || std::is_same_v<I, int64_t>);
  return std::is_same_v<I, int32_t> ? IndexType::i32 : IndexType::i64;
}
template <class V>
constexpr ValueType value_type_of() {
  static_assert(std::is_same_v<V, float> || std::is_same_v<V, double>);
  return std::is_same_v<V, float> ? ValueType::f32 : ValueType::f64;
}

// Calls f.template operator()<I, V>() for the runtime index/value types.
template <class F>
decltype(auto) dispatch_types(IndexType index, ValueType value, F&& f) {
  if (index == IndexType::i32) {
    if (value == ValueType::f32) return f.template operator()<int32_t, float>();
    return f.template operator()<int32_t, double>();
  }
  if (value == ValueType::f32) return f.template operator()<int64_t, float>();
  return f.template operator()<int64_t, double>();
}

}  // namespace spmvjit
