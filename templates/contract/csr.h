// CSR kernel contract (engine/formats/csr.cpp fills it, templates/*/csr.* read it).
#ifndef SPMVJIT_CONTRACT_CSR_H
#define SPMVJIT_CONTRACT_CSR_H
#include "arrays.h"

// The input's zero-based CSR arrays; parts: CPU row ranges balanced by nonzeros.
#define CSR_ARRAYS(X)            \
  X(CSR_ROW_PTR, row_ptr, index) \
  X(CSR_COL_IDX, col_idx, index) \
  X(CSR_VALUES, values, value)   \
  X(CSR_PARTS, parts, parts)
SPMVJIT_DECLARE_ARRAYS(CSR_ARRAYS, kCsrArrays)

enum { CSR_GPU_BLOCK = 256 };  // GPU: one thread per row, this many per block

#endif  // SPMVJIT_CONTRACT_CSR_H
