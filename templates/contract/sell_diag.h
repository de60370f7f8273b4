// Sliced-ELL-with-diagonals kernel contract (engine/formats/sell_diag.cpp fills it,
// templates/*/sell_diag.* read it).
#ifndef SPMVJIT_CONTRACT_SELL_DIAG_H
#define SPMVJIT_CONTRACT_SELL_DIAG_H
#include "arrays.h"

// diag_ptr: first kept diagonal of each slice (n[SELL_DIAG_N_SLICES] + 1)
// diag_offset: column - row of each kept diagonal
// diag_values: C per kept diagonal (row i of the slice at j*C + i), zero where a row has no entry
// rem_ptr: first remainder slot of each slice (n[SELL_DIAG_N_SLICES] + 1)
// rem_col, rem_values: remainder entries as sliced ELL, slot q of row i at rem_ptr[s] + q*C + i
// parts: CPU slice ranges
#define SELL_DIAG_ARRAYS(X)                    \
  X(SELL_DIAG_DIAG_PTR, diag_ptr, i64)         \
  X(SELL_DIAG_DIAG_OFFSET, diag_offset, index) \
  X(SELL_DIAG_DIAG_VALUES, diag_values, value) \
  X(SELL_DIAG_REM_PTR, rem_ptr, i64)           \
  X(SELL_DIAG_REM_COL, rem_col, index)         \
  X(SELL_DIAG_REM_VALUES, rem_values, value)   \
  X(SELL_DIAG_PARTS, parts, parts)
SPMVJIT_DECLARE_ARRAYS(SELL_DIAG_ARRAYS, kSellDiagArrays)

enum { SELL_DIAG_N_SLICES };         // n[] slots
enum { SELL_DIAG_GPU_BLOCK = 128 };  // GPU threads per block (one per row)

#endif  // SPMVJIT_CONTRACT_SELL_DIAG_H
