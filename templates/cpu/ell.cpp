// CPU ELL kernel: blocks of B rows; for each of the W padded columns, B unit-stride loads of
// columns and values feed B accumulators (vectorized across rows).
#include "prelude.h"

#include "../contract/ell.h"
#include "ell_block.h"

template <int E>
static void ell_part(const SpmvArgs& a, i64 p) {
  constexpr i64 B = ELL_CPU_ROWS;
  const I* SPMVJIT_RESTRICT col = (const I*)a.a[ELL_COL_IDX];
  SPMVJIT_DECLARE_VALUES(val, a, ELL_VALUES);
  const i64* parts = (const i64*)a.a[ELL_PARTS];
  const V* SPMVJIT_RESTRICT x = (const V*)a.x;
  V* SPMVJIT_RESTRICT y = (V*)a.y;
  const V alpha = spmvjit_alpha(a), beta = spmvjit_beta(a);
  for (i64 rb = parts[p]; rb < parts[p + 1]; rb += B) {
    const i64 n = parts[p + 1] - rb < B ? parts[p + 1] - rb : B;
    V acc[B];
    for (i64 i = 0; i < B; ++i) acc[i] = 0;
    ell_block_sum(col, val, x, a.n[ELL_N_WIDTH], a.n[ELL_N_STRIDE], rb, n, acc);
    spmvjit_store_block<E, B>(acc, y, rb, n, alpha, beta);
  }
}

SPMVJIT_EXPORT(ell_part, spmvjit_part)
