// CPU COO kernel: each part sums an equal range of nonzeros. Rows wholly inside the range go
// straight to y; the part's first and last rows (possibly shared with neighbours) go to scratch
// and the single-part fixup combines them, so no row is written twice and no atomics are needed.
// scratch: COO_CPU_CARRIES V per part (first-row sum, last-row sum).
#include "prelude.h"

#include "../contract/coo.h"

// Rows [lo, hi) have no nonzeros: y = beta*y (0 when beta == 0, without reading y).
template <int E>
static inline void coo_empty_rows(V* SPMVJIT_RESTRICT y, i64 lo, i64 hi, V beta) {
  for (i64 r = lo; r < hi; ++r) y[r] = spmvjit_beta_zero<E>(beta) ? V(0) : beta * y[r];
}

template <int E>
static void coo_part(const SpmvArgs& a, i64 p) {
  const I* SPMVJIT_RESTRICT row = (const I*)a.a[COO_ROW_IDX];
  const I* SPMVJIT_RESTRICT col = (const I*)a.a[COO_COL_IDX];
  SPMVJIT_DECLARE_VALUES(val, a, COO_VALUES);
  const i64* parts = (const i64*)a.a[COO_PARTS];
  const V* SPMVJIT_RESTRICT x = (const V*)a.x;
  V* SPMVJIT_RESTRICT y = (V*)a.y;
  const V alpha = spmvjit_alpha(a), beta = spmvjit_beta(a);
  const i64 nnz = a.n[COO_N_NNZ];
  const i64 b = parts[p], e = parts[p + 1];
  // First row of the next part (or rows): empty rows before it belong to this part.
  const i64 hi = e < nnz ? (i64)row[e] : a.rows;
  V* carry = (V*)a.scratch + COO_CPU_CARRIES * p;
  if (b == e) {
    if (p == 0) coo_empty_rows<E>(y, 0, hi, beta);
    return;
  }
  const i64 first = row[b], last = row[e - 1];
  if (p == 0) coo_empty_rows<E>(y, 0, first, beta);
  i64 k = b, prev = first - 1;
  carry[1] = 0;
  while (k < e) {
    const i64 r = row[k];
    i64 k2 = k + 1;
    while (k2 < e && (i64)row[k2] == r) ++k2;
    V s = 0;
    for (i64 j = k; j < k2; ++j) s += val[j] * x[col[j]];
    coo_empty_rows<E>(y, prev + 1, r, beta);
    if (r == first) carry[0] = s;
    else if (r == last) carry[1] = s;
    else y[r] = spmvjit_epilogue<E>(s, y, r, alpha, beta);
    prev = r;
    k = k2;
  }
  coo_empty_rows<E>(y, last + 1, hi, beta);
}

// Adds the boundary-row sums of all parts in row order and applies the epilogue once per row.
template <int E>
static void coo_fixup(const SpmvArgs& a, i64) {
  const I* row = (const I*)a.a[COO_ROW_IDX];
  const i64* parts = (const i64*)a.a[COO_PARTS];
  const V* carry = (const V*)a.scratch;
  V* y = (V*)a.y;
  const V alpha = spmvjit_alpha(a), beta = spmvjit_beta(a);
  i64 cur = -1;
  V acc = 0;
  for (i64 p = 0; p < a.n[COO_N_PARTS]; ++p) {
    const i64 b = parts[p], e = parts[p + 1];
    if (b == e) continue;
    const i64 rs[COO_CPU_CARRIES] = {(i64)row[b], (i64)row[e - 1]};
    for (int i = 0; i < COO_CPU_CARRIES; ++i) {
      if (rs[i] != cur) {
        if (cur >= 0) y[cur] = spmvjit_epilogue<E>(acc, y, cur, alpha, beta);
        cur = rs[i];
        acc = 0;
      }
      acc += carry[COO_CPU_CARRIES * p + i];
    }
  }
  if (cur >= 0) y[cur] = spmvjit_epilogue<E>(acc, y, cur, alpha, beta);
}

SPMVJIT_EXPORT(coo_part, spmvjit_part)
SPMVJIT_EXPORT(coo_fixup, spmvjit_fixup)
