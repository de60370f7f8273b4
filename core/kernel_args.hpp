// The kernel contract on the host: SpmvArgs and the epilogue bits as the kernels compile them
// (templates/contract/spmv_args.h), and the element kinds format contracts declare arrays with.
#pragma once

#include <cstddef>

#include "core/types.hpp"

namespace spmvjit {
#include "templates/contract/spmv_args.h"
#include "templates/contract/vectors.h"

static_assert(sizeof(SpmvArgs) == 8 * 8 + 8 * 8 + 8 * 8 + 4 * 8 + 2 * 8, "SpmvArgs layout is ABI");
inline constexpr int kMaxArrays = SPMVJIT_MAX_ARRAYS;
// spmv_options_t::vectors: at most this many; up to kMaxBakedVectors the count is a kernel
// constant (VECTORS: baked_vectors(k), exact up to SPMVJIT_EXACT_VECTORS), beyond it the kernels
// loop over blocks of vectors (VECTORS = 0).
inline constexpr int kMaxVectors = 1 << 20;
inline constexpr int kMaxBakedVectors = SPMVJIT_MAX_BAKED_VECTORS;
inline constexpr int baked_vectors(long long k) { return int(SPMVJIT_BAKED_VECTORS(k)); }
inline constexpr int kEpilogueBetaZero = SPMVJIT_EPILOGUE_BETA_ZERO;
inline constexpr int kEpilogueAlphaOne = SPMVJIT_EPILOGUE_ALPHA_ONE;
inline constexpr int kEpilogueVariants = SPMVJIT_EPILOGUE_VARIANTS;

// Element kind of a format array (templates/contract/arrays.h). `value` arrays are rebuilt by
// update_values; `parts` arrays stay on the host.
enum class ArrayKind { index, value, i64, u64, u32, u16, u8, parts };
struct ArraySlot {
  const char* name;
  ArrayKind kind;
};
inline size_t element_bytes(ArrayKind k, IndexType index, ValueType value) {
  switch (k) {
    case ArrayKind::index: return size_of(index);
    case ArrayKind::value: return size_of(value);
    case ArrayKind::i64:
    case ArrayKind::u64:
    case ArrayKind::parts: return 8;
    case ArrayKind::u32: return 4;
    case ArrayKind::u16: return 2;
    case ArrayKind::u8: return 1;
  }
  return 0;
}

}  // namespace spmvjit

// Format contract headers (templates/contract/<format>.h) included after this get the host
// tables as well as the slot enums.
#define SPMVJIT_HOST 1
namespace spmvjit {
#include "templates/contract/arrays.h"
}  // namespace spmvjit
