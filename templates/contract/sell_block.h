// Sliced-ELL-of-1xB-blocks kernel contract (engine/formats/sell_block.cpp fills it,
// templates/*/sell_block.* read it).
#ifndef SPMVJIT_CONTRACT_SELL_BLOCK_H
#define SPMVJIT_CONTRACT_SELL_BLOCK_H
#include "arrays.h"

// slice_ptr: first block of each slice (n[SELL_BLOCK_N_SLICES] + 1), C blocks per slice column
// block_col: first column of each block; block j of row i in slice s at slice_ptr[s] + j*C + i
// values: B per block, value b of that block at B*slice_ptr[s] + (j*B + b)*C + i
// parts: CPU slice ranges
#define SELL_BLOCK_ARRAYS(X)                \
  X(SELL_BLOCK_SLICE_PTR, slice_ptr, i64)   \
  X(SELL_BLOCK_BLOCK_COL, block_col, index) \
  X(SELL_BLOCK_VALUES, values, value)       \
  X(SELL_BLOCK_PARTS, parts, parts)
SPMVJIT_DECLARE_ARRAYS(SELL_BLOCK_ARRAYS, kSellBlockArrays)

enum { SELL_BLOCK_N_SLICES };         // n[] slots
enum { SELL_BLOCK_GPU_BLOCK = 128 };  // GPU threads per block (one per row)

#endif  // SPMVJIT_CONTRACT_SELL_BLOCK_H
