// CPU library piece shared by the ELL and HYB templates: the ELL columns of a block of rows.
// Templates include it; codegen resolves the include. Format-neutral: callers pass their arrays,
// sizes and block (ELL_CPU_ROWS, HYB_CPU_ROWS).
#ifndef SPMVJIT_ELL_BLOCK_INCLUDED
#define SPMVJIT_ELL_BLOCK_INCLUDED
#include "prelude.h"

// acc[i] += the W padded column entries of row rb + i, for i < n (the caller's block of rows).
// Column-major storage: each column of the block is two unit-stride loads (vectorized across rows).
static inline void ell_block_sum(const I* SPMVJIT_RESTRICT col, spmvjit_values_t SPMVJIT_VALUES_RESTRICT val,
                                 const V* SPMVJIT_RESTRICT x, i64 w, i64 stride, i64 rb, i64 n,
                                 V* SPMVJIT_RESTRICT acc) {
  for (i64 j = 0; j < w; ++j) {
    const I* SPMVJIT_RESTRICT c = col + j * stride + rb;
    const spmvjit_values_t SPMVJIT_VALUES_RESTRICT v = val + j * stride + rb;
#pragma clang loop vectorize(enable)
    for (i64 i = 0; i < n; ++i) acc[i] += v[i] * x[c[i]];
  }
}

#endif  // SPMVJIT_ELL_BLOCK_INCLUDED
