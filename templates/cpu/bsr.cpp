// CPU BSR kernel: per block row, an R x C grid of accumulators; each block is one fully unrolled
// R x C micro-kernel (C consecutive x values, R*C contiguous block values, one index), so the
// accumulators stay in registers and rows of the grid are C-wide vectors; each row's C partial
// sums are added once per block row, then the epilogue.
#include "prelude.h"
#include "../contract/bsr.h"
#ifndef SPMVJIT_R
#define SPMVJIT_R 2
#endif
#ifndef SPMVJIT_C
#define SPMVJIT_C 2
#endif
#ifndef SPMVJIT_COL_EDGE
#define SPMVJIT_COL_EDGE 0
#endif

template <int E>
static void bsr_part(const SpmvArgs& a, i64 p) {
  constexpr i64 R = SPMVJIT_R, C = SPMVJIT_C;
  const I* SPMVJIT_RESTRICT bp = (const I*)a.a[BSR_BLOCK_PTR];
  const I* SPMVJIT_RESTRICT bc = (const I*)a.a[BSR_BLOCK_COL];
  SPMVJIT_DECLARE_VALUES(val, a, BSR_VALUES);
  const i64* parts = (const i64*)a.a[BSR_PARTS];
  const V* SPMVJIT_RESTRICT x = (const V*)a.x;
  V* SPMVJIT_RESTRICT y = (V*)a.y;
  const V alpha = spmvjit_alpha(a), beta = spmvjit_beta(a);
  const i64 rows = a.rows, cols = a.cols;
  for (i64 b = parts[p]; b < parts[p + 1]; ++b) {
    V acc[R][C];
#pragma clang loop unroll(full)
    for (i64 i = 0; i < R; ++i)
#pragma clang loop unroll(full)
      for (i64 j = 0; j < C; ++j) acc[i][j] = 0;
    const i64 end = bp[b + 1];
    // Not vectorized across blocks: the loop vectorizer did (VF 4), turning every block value
    // and x read into a gather, 2-5x slower than csr on blockfem:30:3 (3x3 blocks). Within a
    // block the SLP vectorizer makes the grid's rows C-wide vectors.
#pragma clang loop vectorize(disable)
    for (i64 k = bp[b]; k < end; ++k) {
      const spmvjit_values_t SPMVJIT_VALUES_RESTRICT v = val + k * (R * C);
      const i64 c0 = (i64)bc[k] * C;
      V xv[C];
      if (SPMVJIT_COL_EDGE && c0 + C > cols) {
        // Only the last block column of a matrix whose cols is not a multiple of C: its
        // columns past the end hold zeros, and x must not be read there.
        for (i64 j = 0; j < C; ++j) xv[j] = c0 + j < cols ? x[c0 + j] : V(0);
      } else {
#pragma clang loop unroll(full)
        for (i64 j = 0; j < C; ++j) xv[j] = x[c0 + j];
      }
#pragma clang loop unroll(full)
      for (i64 i = 0; i < R; ++i)
#pragma clang loop unroll(full)
        for (i64 j = 0; j < C; ++j) acc[i][j] += v[i * C + j] * xv[j];
    }
    const i64 r0 = b * R;
#pragma clang loop unroll(full)
    for (i64 i = 0; i < R; ++i) {
      V s = 0;
#pragma clang loop unroll(full)
      for (i64 j = 0; j < C; ++j) s += acc[i][j];
      // Rows past the matrix (the last block row's tail) are never written.
      if (R == 1 || r0 + i < rows) y[r0 + i] = spmvjit_epilogue<E>(s, y, r0 + i, alpha, beta);
    }
  }
}

SPMVJIT_EXPORT(bsr_part, spmvjit_part)
