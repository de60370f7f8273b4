// JDS kernel contract (engine/formats/jds.cpp fills it, templates/*/jds.* read it;
// templates/gpu/jds_build.cu builds it on a device).
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

// Device build (templates/gpu/jds_build.cu) argument slots: the input arrays (index base
// n[DP_N_BASE]); the outputs jd_ptr and perm; keys (i64, W + 2: a flag per length present,
// indexed W - length, scanned into each length's key, the number of longer lengths present) and
// ranks (i64, windows * keys + 1, key-major: each window's rows of each key, scanned into the
// sorted position of the window's first row of that key); the fill pass writes col_idx and
// values through the slots of keys and ranks. zero: what the zeroing pass clears (n[ZERO]
// entries), and the cell where the width pass leaves the longest row W.
enum {
  JDS_BUILD_ROW_PTR,
  JDS_BUILD_COL_IDX_IN,
  JDS_BUILD_VALUES_IN,
  JDS_BUILD_JD_PTR,
  JDS_BUILD_PERM,
  JDS_BUILD_KEYS,
  JDS_BUILD_RANKS,
  JDS_BUILD_ZERO,
  JDS_BUILD_COL_IDX = JDS_BUILD_KEYS,
  JDS_BUILD_VALUES = JDS_BUILD_RANKS,
  JDS_BUILD_WIDTH = JDS_BUILD_ZERO
};
enum {
  JDS_BUILD_N_ZERO,
  JDS_BUILD_N_WIDTH,
  JDS_BUILD_N_KEYS,
  JDS_BUILD_N_WINDOW,
  JDS_BUILD_N_WINDOWS,
  JDS_BUILD_N_NNZ
};
// Device build: rows per window of the stable rank at least (more when there are more keys,
// which bounds the ranks to rows + keys entries).
enum { JDS_BUILD_WINDOW = 256 };

#endif  // SPMVJIT_CONTRACT_JDS_H
