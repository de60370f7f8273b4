// CSR for k vectors (spmm_execute): the csr contract's arrays (engine/formats/csr_mm.cpp fills
// them, templates/*/csr_mm.* read them) and the kernels' shape.
#ifndef SPMVJIT_CONTRACT_CSR_MM_H
#define SPMVJIT_CONTRACT_CSR_MM_H
#include "csr.h"

enum {
  CSR_MM_GPU_BLOCK = 256,    // GPU threads per block
  CSR_MM_BLOCK_VECTORS = 8,  // VECTORS = 0 (k above 32): vectors per pass over a row
};

// GPU, row-major X and Y: a row's k results on k neighbouring lanes (its x loads coalesce), so a
// row takes the power of two at or above k lanes (32 when k is past 32: a loop over blocks of 32).
// Column-major: one thread per row. Rows per block follow.
#define CSR_MM_LANES(K, ROW_MAJOR) \
  (!(ROW_MAJOR) ? 1 : (K) == 0 || (K) > 16 ? 32 : (K) > 8 ? 16 : (K) > 4 ? 8 : (K) > 2 ? 4 : (K))

#endif  // SPMVJIT_CONTRACT_CSR_MM_H
