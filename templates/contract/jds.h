// JDS kernel contract (engine/formats/jds.cpp fills it, templates/*/jds.* read it).
#ifndef SPMVJIT_CONTRACT_JDS_H
#define SPMVJIT_CONTRACT_JDS_H
#include "arrays.h"

// jd_ptr: start of each jagged diagonal (n[JDS_N_DIAGONALS] + 1); col_idx, values: diagonal by
// diagonal, in sorted-row order; perm: sorted position -> row; parts: CPU sorted-row ranges.
#define JDS_ARRAYS(X)           \
  X(JDS_JD_PTR, jd_ptr, i64)    \
  X(JDS_COL_IDX, col_idx, index) \
  X(JDS_VALUES, values, value)  \
  X(JDS_PERM, perm, index)      \
  X(JDS_PARTS, parts, parts)
SPMVJIT_DECLARE_ARRAYS(JDS_ARRAYS, kJdsArrays)

enum { JDS_N_DIAGONALS };  // n[] slots
enum { JDS_GPU_BLOCK = 256, JDS_CPU_ROWS = 64 };  // GPU threads per block; CPU rows per block

#endif  // SPMVJIT_CONTRACT_JDS_H
