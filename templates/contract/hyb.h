// HYB kernel contract (engine/formats/hyb.cpp fills it, templates/*/hyb.* read it;
// templates/gpu/hyb_build.cu builds it on a device).
#ifndef SPMVJIT_CONTRACT_HYB_H
#define SPMVJIT_CONTRACT_HYB_H
#include "arrays.h"

// ell_col, ell_values: the first n[HYB_N_WIDTH] entries of every row, padded, column-major (entry
// j of row r at j * n[HYB_N_STRIDE] + r); tail_row, tail_col, tail_values: the rest as COO,
// sorted by row (n[HYB_N_TAIL] entries); parts: CPU row ranges; tail_parts: the tail entry ranges
// of those rows.
#define HYB_ARRAYS(X)                    \
  X(HYB_ELL_COL, ell_col, index)         \
  X(HYB_ELL_VALUES, ell_values, value)   \
  X(HYB_TAIL_ROW, tail_row, index)       \
  X(HYB_TAIL_COL, tail_col, index)       \
  X(HYB_TAIL_VALUES, tail_values, value) \
  X(HYB_PARTS, parts, parts)             \
  X(HYB_TAIL_PARTS, tail_parts, parts)
SPMVJIT_DECLARE_ARRAYS(HYB_ARRAYS, kHybArrays)

// n[] slots: K (ELL width); column stride (= rows); tail entries; GPU tail entries per warp.
enum { HYB_N_WIDTH, HYB_N_STRIDE, HYB_N_TAIL, HYB_N_WARP_ENTRIES };
// GPU threads per block (both steps); CPU rows per block (as ELL's).
enum { HYB_GPU_BLOCK = 256, HYB_CPU_ROWS = 64 };

// Device build (templates/gpu/hyb_build.cu) argument slots: the input arrays (index base
// n[DP_N_BASE]); each row's first tail entry (i64, rows + 1) and the per-window tail sums (i64,
// scanned in place between passes); the outputs, written through the same slots by the ELL pass
// (ell_col, ell_values) and the tail pass (tail_col, tail_values, and tail_row).
enum {
  HYB_BUILD_ROW_PTR,
  HYB_BUILD_COL_IDX_IN,
  HYB_BUILD_VALUES_IN,
  HYB_BUILD_TAIL_PTR,
  HYB_BUILD_WINDOW_SUMS,
  HYB_BUILD_OUT_COL,
  HYB_BUILD_OUT_VALUES,
  HYB_BUILD_OUT_ROW
};
enum { HYB_BUILD_N_WIDTH, HYB_BUILD_N_WINDOWS, HYB_BUILD_N_TAIL };
enum { HYB_BUILD_WINDOW = 4096 };  // device build: rows per window one thread sizes

#endif  // SPMVJIT_CONTRACT_HYB_H
