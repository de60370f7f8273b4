// Symmetric diagonal storage kernel contract (engine/formats/sym_diag.cpp fills it,
// templates/*/sym_diag.* read it). A matrix declared symmetric (spmv_options_t::matrix_type) keeps
// only its upper diagonals, offsets 0 = d_0 < d_1 < ... (the same for every row), each as a
// column of values: row i's entry on diagonal j, A(i, i + d_j), at values[j * stride + i], zero
// where the row has none. Row i's product reads diagonal j twice, both times contiguously:
//   A(i, i + d_j) x[i + d_j]  at values[j * stride + i]        (when i + d_j < rows)
//   A(i, i - d_j) x[i - d_j]  at values[j * stride + i - d_j]  (j > 0, when i >= d_j)
// the second read being the first one of row i - d_j, which a cache still holds when the band
// (d_j rows of every diagonal) fits in it: the matrix's values stream from memory once for two
// uses. The entries on no kept diagonal, of both triangles, are a CSR remainder.
#ifndef SPMVJIT_CONTRACT_SYM_DIAG_H
#define SPMVJIT_CONTRACT_SYM_DIAG_H
#include "arrays.h"

// offset: d_j of each kept diagonal, ascending, offset[0] = 0 (n[SYM_DIAG_N_DIAGS] entries)
// values: n[SYM_DIAG_N_DIAGS] * n[SYM_DIAG_N_STRIDE] values (stride >= rows, rounded up)
// rem_ptr, rem_col, rem_values: the remainder as a zero-based CSR of rows + 1 row starts
// parts: CPU row ranges
#define SYM_DIAG_ARRAYS(X)                  \
  X(SYM_DIAG_OFFSET, offset, index)         \
  X(SYM_DIAG_VALUES, values, value)         \
  X(SYM_DIAG_REM_PTR, rem_ptr, index)       \
  X(SYM_DIAG_REM_COL, rem_col, index)       \
  X(SYM_DIAG_REM_VALUES, rem_values, value) \
  X(SYM_DIAG_PARTS, parts, parts)
SPMVJIT_DECLARE_ARRAYS(SYM_DIAG_ARRAYS, kSymDiagArrays)

// n[] slots; SYM_DIAG_N_REM_ENTRIES = 0 lets kernels skip the remainder (rem_ptr unread).
enum { SYM_DIAG_N_DIAGS, SYM_DIAG_N_STRIDE, SYM_DIAG_N_REM_ENTRIES };
enum {
  // GPU threads per block, a row each (4, 8 and 16 rows per thread ran 1.05-10x slower on an
  // H100: fewer warps in flight; docs/PERFORMANCE.md).
  SYM_DIAG_GPU_BLOCK = 128,
  SYM_DIAG_STRIDE_ALIGN = 64,  // the stride is a multiple of this many values
  SYM_DIAG_MAX = 64            // most diagonals kept
};

#endif  // SPMVJIT_CONTRACT_SYM_DIAG_H
