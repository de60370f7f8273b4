// COO kernel contract (engine/formats/coo.cpp fills it, templates/*/coo.* read it;
// templates/gpu/coo_build.cu builds it on a device).
#ifndef SPMVJIT_CONTRACT_COO_H
#define SPMVJIT_CONTRACT_COO_H
#include "arrays.h"

// row_idx, col_idx, values: one entry per nonzero (n[COO_N_NNZ]), sorted by row; parts: CPU
// nonzero ranges.
#define COO_ARRAYS(X)            \
  X(COO_ROW_IDX, row_idx, index) \
  X(COO_COL_IDX, col_idx, index) \
  X(COO_VALUES, values, value)   \
  X(COO_PARTS, parts, parts)
SPMVJIT_DECLARE_ARRAYS(COO_ARRAYS, kCooArrays)

// n[] slots. n[1] is per backend: the CPU's number of parts (the fixup walks them), the GPU's
// entries per warp (a multiple of the warp size).
enum { COO_N_NNZ, COO_N_PARTS, COO_N_WARP_ENTRIES = COO_N_PARTS };
// GPU threads per block (both steps); CPU scratch values per part (first-row and last-row sums).
enum { COO_GPU_BLOCK = 256, COO_CPU_CARRIES = 2 };

// Device build (templates/gpu/coo_build.cu) argument slots: the input row_ptr (index base
// n[DP_N_BASE]) and the row index it writes for each of n[COO_BUILD_N_NNZ] nonzeros (col_idx and
// values are the shared zero-based copies).
enum { COO_BUILD_ROW_PTR, COO_BUILD_ROW_IDX };
enum { COO_BUILD_N_NNZ };

#endif  // SPMVJIT_CONTRACT_COO_H
