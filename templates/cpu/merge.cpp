// CPU merge-path CSR kernel: part p walks the merge path from coordinate (i0, j0) to (i1, j1)
// (precomputed at plan time): rows i0..i1-1 end inside the part and are written directly (row
// i0 without the nonzeros an earlier part consumed); the entries of row i1 before j1 are the
// part's carry, which the single-part fixup adds to y[i1] after every row has been written.
// Arrays, n[] and scratch: templates/contract/merge.h.
#include "prelude.h"
#include "../contract/merge.h"

template <int E>
static void merge_part(const SpmvArgs& a, i64 p) {
  const I* SPMVJIT_RESTRICT rp = (const I*)a.a[MERGE_ROW_PTR];
  const I* SPMVJIT_RESTRICT ci = (const I*)a.a[MERGE_COL_IDX];
  SPMVJIT_DECLARE_VALUES(va, a, MERGE_VALUES);
  const i64* c = (const i64*)a.a[MERGE_PARTS];
  const V* SPMVJIT_RESTRICT x = (const V*)a.x;
  V* SPMVJIT_RESTRICT y = (V*)a.y;
  const V alpha = spmvjit_alpha(a), beta = spmvjit_beta(a);
  const i64 i0 = c[2 * p], i1 = c[2 * p + 2], j1 = c[2 * p + 3];
  i64 k = c[2 * p + 1];
  for (i64 r = i0; r < i1; ++r) {
    V sum = 0;
    const i64 e = rp[r + 1];
    for (; k < e; ++k) sum += va[k] * x[ci[k]];
    y[r] = spmvjit_epilogue<E>(sum, y, r, alpha, beta);
  }
  V carry = 0;
  for (; k < j1; ++k) carry += va[k] * x[ci[k]];
  ((V*)a.scratch)[p] = carry;
}

// y is linear in the row sum, so adding alpha * carry after the epilogue is exact algebra.
template <int E>
static void merge_fixup(const SpmvArgs& a, i64) {
  const i64* c = (const i64*)a.a[MERGE_PARTS];
  const V* carry = (const V*)a.scratch;
  V* y = (V*)a.y;
  const V alpha = spmvjit_alpha(a);
  for (i64 p = 0; p < a.n[MERGE_N_SEGMENTS]; ++p) {
    const i64 r = c[2 * p + 2];
    if (r < a.rows) y[r] += spmvjit_alpha_one<E>(alpha) ? carry[p] : alpha * carry[p];
  }
}

SPMVJIT_EXPORT(merge_part, spmvjit_part)
SPMVJIT_EXPORT(merge_fixup, spmvjit_fixup)
