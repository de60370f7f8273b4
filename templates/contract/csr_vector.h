// CSR-vector kernel contract (engine/formats/csr_vector.cpp fills it, templates/*/csr_vector.*
// read it). SPMVJIT_L (lanes per row) is baked.
#ifndef SPMVJIT_CONTRACT_CSR_VECTOR_H
#define SPMVJIT_CONTRACT_CSR_VECTOR_H
#include "arrays.h"

// The input's zero-based CSR arrays; parts: CPU row ranges balanced by nonzeros.
#define CSR_VECTOR_ARRAYS(X)            \
  X(CSR_VECTOR_ROW_PTR, row_ptr, index) \
  X(CSR_VECTOR_COL_IDX, col_idx, index) \
  X(CSR_VECTOR_VALUES, values, value)   \
  X(CSR_VECTOR_PARTS, parts, parts)
SPMVJIT_DECLARE_ARRAYS(CSR_VECTOR_ARRAYS, kCsrVectorArrays)

enum { CSR_VECTOR_GPU_BLOCK = 256 };  // GPU threads per block (L of them per row)

#endif  // SPMVJIT_CONTRACT_CSR_VECTOR_H
