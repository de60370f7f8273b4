// CPU CSR for k vectors (spmm_execute): each part owns a row range balanced by nonzeros, and each
// row's entries are read once for all k vectors. k (SPMVJIT_VECTORS, up to 8) is baked: its k
// sums stay in registers and, with row-major X, the k values of one column are one contiguous,
// vectorizable run. SPMVJIT_VECTORS 0 (any k) or a bound on k (16, 32; SPMVJIT_BAKED_VECTORS):
// CSR_MM_BLOCK_VECTORS vectors per pass over a row, then one at a time.
// Column-major X staged (n[CSR_MM_N_STAGED] = the stage step's parts): spmvjit_stage_x copies X
// row-major into the scratch first, and the row-major code (LAYOUT 1) reads it from there, so a
// column index touches one run of k values rather than k pages; Y keeps the caller's layout
// (args.layout).
#include "../contract/csr_mm.h"
#include "prelude.h"

#ifndef SPMVJIT_VECTORS
#define SPMVJIT_VECTORS 4
#endif
#ifndef SPMVJIT_LAYOUT
#define SPMVJIT_LAYOUT 1
#endif

// Vectors j0 .. j0 + K - 1 of row r.
template <int E, int K>
static inline void csr_mm_row(const SpmvArgs& a, i64 r, i64 j0) {
  const I* SPMVJIT_RESTRICT rp = (const I*)a.a[CSR_MM_ROW_PTR];
  const I* SPMVJIT_RESTRICT ci = (const I*)a.a[CSR_MM_COL_IDX];
  SPMVJIT_DECLARE_VALUES(va, a, CSR_MM_VALUES);
  const bool staged = a.n[CSR_MM_N_STAGED] != 0;
  const V* SPMVJIT_RESTRICT x = staged ? (const V*)a.scratch : (const V*)a.x;
  V* SPMVJIT_RESTRICT y = (V*)a.y;
  const i64 ldx = staged ? a.vectors : a.ldx, ldy = a.ldy;
  const bool y_row_major = SPMVJIT_LAYOUT && a.layout != 0;
  V sum[K];
  for (int j = 0; j < K; ++j) sum[j] = 0;
  for (i64 k = rp[r]; k < rp[r + 1]; ++k) {
    const V v = va[k];
    const i64 c = ci[k];
    for (int j = 0; j < K; ++j) sum[j] += v * x[SPMVJIT_LAYOUT ? c * ldx + j0 + j : (j0 + j) * ldx + c];
  }
  const V alpha = spmvjit_alpha(a), beta = spmvjit_beta(a);
  for (int j = 0; j < K; ++j) {
    const i64 at = y_row_major ? r * ldy + j0 + j : (j0 + j) * ldy + r;
    y[at] = spmvjit_epilogue<E>(sum[j], y, at, alpha, beta);
  }
}

template <int E>
static void csr_mm_part(const SpmvArgs& a, i64 p) {
  const i64* parts = (const i64*)a.a[CSR_MM_PARTS];
  for (i64 r = parts[p]; r < parts[p + 1]; ++r) {
#if SPMVJIT_VECTORS > 0 && SPMVJIT_VECTORS <= SPMVJIT_EXACT_VECTORS
    csr_mm_row<E, SPMVJIT_VECTORS>(a, r, 0);
#else  // any k (VECTORS 0), or a bound on it (16, 32): blocks of vectors, then one at a time
    i64 j = 0;
    for (; j + CSR_MM_BLOCK_VECTORS <= a.vectors; j += CSR_MM_BLOCK_VECTORS)
      csr_mm_row<E, CSR_MM_BLOCK_VECTORS>(a, r, j);
    for (; j < a.vectors; ++j) csr_mm_row<E, 1>(a, r, j);
#endif
  }
}

// Part p of n[CSR_MM_N_STAGED]: columns [cols * p / parts, cols * (p + 1) / parts) of column-major
// X into the scratch row-major, 64 columns at a time so each of the k columns is read in runs.
template <int E>
static void csr_mm_stage_x(const SpmvArgs& a, i64 p) {
  const i64 parts = a.n[CSR_MM_N_STAGED], k = a.vectors, ldx = a.ldx;
  const i64 c0 = a.cols * p / parts, c1 = a.cols * (p + 1) / parts;
  const V* SPMVJIT_RESTRICT x = (const V*)a.x;
  V* SPMVJIT_RESTRICT s = (V*)a.scratch;
  for (i64 cb = c0; cb < c1; cb += 64) {
    const i64 ce = cb + 64 < c1 ? cb + 64 : c1;
    for (i64 j = 0; j < k; ++j)
      for (i64 c = cb; c < ce; ++c) s[c * k + j] = x[j * ldx + c];
  }
}

SPMVJIT_EXPORT(csr_mm_part, spmvjit_part)
SPMVJIT_EXPORT(csr_mm_stage_x, spmvjit_stage_x)
