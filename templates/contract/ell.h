// ELL kernel contract (engine/formats/ell.cpp fills it, templates/*/ell.* read it;
// templates/gpu/ell_build.cu builds it on a device).
#ifndef SPMVJIT_CONTRACT_ELL_H
#define SPMVJIT_CONTRACT_ELL_H
#include "arrays.h"

// col_idx, values: every row padded to n[ELL_N_WIDTH] entries, column-major (entry j of row r at
// j * n[ELL_N_STRIDE] + r; padding repeats the row's last column with value 0); parts: CPU row
// ranges.
#define ELL_ARRAYS(X)            \
  X(ELL_COL_IDX, col_idx, index) \
  X(ELL_VALUES, values, value)   \
  X(ELL_PARTS, parts, parts)
SPMVJIT_DECLARE_ARRAYS(ELL_ARRAYS, kEllArrays)

enum { ELL_N_WIDTH, ELL_N_STRIDE };  // n[] slots: W; column stride (= rows)
// GPU threads per block; CPU rows per block (their accumulators stay in registers/L1 while the
// W columns stream).
enum { ELL_GPU_BLOCK = 256, ELL_CPU_ROWS = 64 };

// Device build (templates/gpu/ell_build.cu) argument slots: the input arrays (index base
// n[DP_N_BASE]), the width cell (one i64: the longest row, found first) and the outputs.
enum {
  ELL_BUILD_ROW_PTR,
  ELL_BUILD_COL_IDX_IN,
  ELL_BUILD_VALUES_IN,
  ELL_BUILD_WIDTH,
  ELL_BUILD_COL_IDX,
  ELL_BUILD_VALUES
};
enum { ELL_BUILD_N_WIDTH };

#endif  // SPMVJIT_CONTRACT_ELL_H
