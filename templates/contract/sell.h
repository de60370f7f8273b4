// SELL-C-sigma kernel contract (engine/formats/sell.cpp fills it, templates/*/sell.* read it;
// templates/gpu/sell_build.cu builds it on a device). SPMVJIT_C and SPMVJIT_PERMUTED are baked.
#ifndef SPMVJIT_CONTRACT_SELL_H
#define SPMVJIT_CONTRACT_SELL_H
#include "arrays.h"

// slice_ptr: first entry of each slice (n[SELL_N_SLICES] + 1); col_idx, values: slice by slice,
// column-major, padded with the row's last column and zeros; perm: sorted position -> row (empty
// when unsorted); parts: CPU slice ranges.
#define SELL_ARRAYS(X)              \
  X(SELL_SLICE_PTR, slice_ptr, i64) \
  X(SELL_COL_IDX, col_idx, index)   \
  X(SELL_VALUES, values, value)     \
  X(SELL_PERM, perm, index)         \
  X(SELL_PARTS, parts, parts)
SPMVJIT_DECLARE_ARRAYS(SELL_ARRAYS, kSellArrays)

enum { SELL_N_SLICES };         // n[] slots
enum { SELL_GPU_BLOCK = 256 };  // GPU: one thread per sorted row position, this many per block

// Device build (templates/gpu/sell_build.cu; SELL-P's too, n[SELL_BUILD_N_T] = its t, 1 for SELL)
// argument slots: the input arrays (index base n[DP_N_BASE]), the outputs (slice_ptr as i64: the
// slices' sizes, scanned in place into offsets between the passes) and, when
// n[SELL_BUILD_N_PERMUTED], the sorted order (perm, built first: engine/formats/sliced_device.hpp).
enum {
  SELL_BUILD_ROW_PTR,
  SELL_BUILD_COL_IDX_IN,
  SELL_BUILD_VALUES_IN,
  SELL_BUILD_SLICE_PTR,
  SELL_BUILD_COL_IDX,
  SELL_BUILD_VALUES,
  SELL_BUILD_PERM
};
enum { SELL_BUILD_N_C, SELL_BUILD_N_SLICES, SELL_BUILD_N_PERMUTED, SELL_BUILD_N_T };

#endif  // SPMVJIT_CONTRACT_SELL_H
