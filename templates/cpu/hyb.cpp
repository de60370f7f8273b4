// CPU HYB kernel: blocks of B rows sum their ELL columns (vectorized across rows), then add the
// part's COO tail entries of those rows (tail sorted by row; each part owns its rows' tail, so
// y is written once per row with no atomics).
// Arrays: a[0] ell_col (I, column-major, stride n[1]), a[1] ell_values (V), a[2] tail_row (I),
// a[3] tail_col (I), a[4] tail_values (V), a[5] parts (i64 row ranges), a[6] tail_parts (i64
// tail entry ranges). n[0] = K (ELL width), n[1] = rows.
#include "ell_block.h"
#include "prelude.h"

template <int E>
static void hyb_part(const SpmvArgs& a, i64 p) {
  constexpr i64 B = SPMVJIT_ELL_BLOCK_ROWS;
  const I* SPMVJIT_RESTRICT col = (const I*)a.a[0];
  const V* SPMVJIT_RESTRICT val = (const V*)a.a[1];
  const I* SPMVJIT_RESTRICT trow = (const I*)a.a[2];
  const I* SPMVJIT_RESTRICT tcol = (const I*)a.a[3];
  const V* SPMVJIT_RESTRICT tval = (const V*)a.a[4];
  const i64* parts = (const i64*)a.a[5];
  const i64* tail_parts = (const i64*)a.a[6];
  const V* SPMVJIT_RESTRICT x = (const V*)a.x;
  V* SPMVJIT_RESTRICT y = (V*)a.y;
  const V alpha = (V)a.alpha, beta = (V)a.beta;
  const i64 k = a.n[0], stride = a.n[1];
  i64 t = tail_parts[p];
  const i64 tend = tail_parts[p + 1];
  for (i64 rb = parts[p]; rb < parts[p + 1]; rb += B) {
    const i64 n = parts[p + 1] - rb < B ? parts[p + 1] - rb : B;
    V acc[B];
    for (i64 i = 0; i < B; ++i) acc[i] = 0;
    ell_block_sum(col, val, x, k, stride, rb, n, acc);
    for (; t < tend && (i64)trow[t] < rb + n; ++t) acc[(i64)trow[t] - rb] += tval[t] * x[tcol[t]];
    for (i64 i = 0; i < n; ++i) y[rb + i] = spmvjit_epilogue<E>(acc[i], y, rb + i, alpha, beta);
  }
}

SPMVJIT_EXPORT(hyb_part, spmvjit_part)
