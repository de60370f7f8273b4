// SELL-P kernel contract (engine/formats/sellp.cpp fills it, templates/*/sellp.* read it).
#ifndef SPMVJIT_CONTRACT_SELLP_H
#define SPMVJIT_CONTRACT_SELLP_H
#include "arrays.h"

// slice_ptr: first slot of each slice (n[SELLP_N_SLICES] + 1), slices being runs of C*t-slot chunks
// col_idx, values: the slots; in a chunk, row i of the slice owns slots [i*t, i*t + t)
// perm: sorted position -> row (empty unless PERMUTED)
// parts: CPU slice ranges
#define SELLP_ARRAYS(X)              \
  X(SELLP_SLICE_PTR, slice_ptr, i64) \
  X(SELLP_COL_IDX, col_idx, index)   \
  X(SELLP_VALUES, values, value)     \
  X(SELLP_PERM, perm, index)         \
  X(SELLP_PARTS, parts, parts)
SPMVJIT_DECLARE_ARRAYS(SELLP_ARRAYS, kSellpArrays)

enum { SELLP_N_SLICES };  // n[] slots
// GPU: one block of C*t threads per slice (kernel constants C and t), whole warps, at most this many.
enum { SELLP_GPU_MAX_BLOCK = 1024 };

#endif  // SPMVJIT_CONTRACT_SELLP_H
