// CPU ELL kernel: blocks of B rows; for each of the W padded columns, B unit-stride loads of
// columns and values feed B accumulators (vectorized across rows).
// Arrays: a[0] col_idx (I, column-major, stride n[1]), a[1] values (V), a[2] parts (i64 row
// ranges). n[0] = W (width), n[1] = rows (column stride).
#include "ell_block.h"
#include "prelude.h"

template <int E>
static void ell_part(const SpmvArgs& a, i64 p) {
  constexpr i64 B = SPMVJIT_ELL_BLOCK_ROWS;
  const I* SPMVJIT_RESTRICT col = (const I*)a.a[0];
  const V* SPMVJIT_RESTRICT val = (const V*)a.a[1];
  const i64* parts = (const i64*)a.a[2];
  const V* SPMVJIT_RESTRICT x = (const V*)a.x;
  V* SPMVJIT_RESTRICT y = (V*)a.y;
  const V alpha = (V)a.alpha, beta = (V)a.beta;
  for (i64 rb = parts[p]; rb < parts[p + 1]; rb += B) {
    const i64 n = parts[p + 1] - rb < B ? parts[p + 1] - rb : B;
    V acc[B];
    for (i64 i = 0; i < B; ++i) acc[i] = 0;
    ell_block_sum(col, val, x, a.n[0], a.n[1], rb, n, acc);
    for (i64 i = 0; i < n; ++i) y[rb + i] = spmvjit_epilogue<E>(acc[i], y, rb + i, alpha, beta);
  }
}

SPMVJIT_EXPORT(ell_part, spmvjit_part)
