// CPU HYB kernel: blocks of B rows sum their ELL columns (vectorized across rows), then add the
// part's COO tail entries of those rows (tail sorted by row; each part owns its rows' tail, so
// y is written once per row with no atomics).
#include "prelude.h"

#include "../contract/hyb.h"
#include "ell_block.h"

template <int E>
static void hyb_part(const SpmvArgs& a, i64 p) {
  constexpr i64 B = HYB_CPU_ROWS;
  const I* SPMVJIT_RESTRICT col = (const I*)a.a[HYB_ELL_COL];
  SPMVJIT_DECLARE_VALUES(val, a, HYB_ELL_VALUES);
  const I* SPMVJIT_RESTRICT trow = (const I*)a.a[HYB_TAIL_ROW];
  const I* SPMVJIT_RESTRICT tcol = (const I*)a.a[HYB_TAIL_COL];
  SPMVJIT_DECLARE_VALUES(tval, a, HYB_TAIL_VALUES);
  const i64* parts = (const i64*)a.a[HYB_PARTS];
  const i64* tail_parts = (const i64*)a.a[HYB_TAIL_PARTS];
  const V* SPMVJIT_RESTRICT x = (const V*)a.x;
  V* SPMVJIT_RESTRICT y = (V*)a.y;
  const V alpha = spmvjit_alpha(a), beta = spmvjit_beta(a);
  const i64 k = a.n[HYB_N_WIDTH], stride = a.n[HYB_N_STRIDE];
  i64 t = tail_parts[p];
  const i64 tend = tail_parts[p + 1];
  for (i64 rb = parts[p]; rb < parts[p + 1]; rb += B) {
    const i64 n = parts[p + 1] - rb < B ? parts[p + 1] - rb : B;
    V acc[B];
    for (i64 i = 0; i < B; ++i) acc[i] = 0;
    ell_block_sum(col, val, x, k, stride, rb, n, acc);
    for (; t < tend && (i64)trow[t] < rb + n; ++t) acc[(i64)trow[t] - rb] += tval[t] * x[tcol[t]];
    spmvjit_store_block<E, B>(acc, y, rb, n, alpha, beta);
  }
}

SPMVJIT_EXPORT(hyb_part, spmvjit_part)
