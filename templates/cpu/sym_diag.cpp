// CPU symmetric diagonal kernel: rows in blocks of SYM_DIAG_CPU_ROWS accumulators; each kept upper
// diagonal d adds two contiguous runs, A(i, i + d) x[i + d] and the mirror A(i - d, i) x[i - d]
// (values of rows i - d, in cache when the band fits), both vectorized (two diagonals per pass in
// blocks away from the matrix's ends); then the CSR remainder, when there is one. HERMITIAN (complex
// values): the mirror is conj(A(i - d, i)).
#include "prelude.h"
#include "../contract/sym_diag.h"

enum { SYM_DIAG_CPU_ROWS = 256 };

#ifndef SPMVJIT_HERMITIAN
#define SPMVJIT_HERMITIAN 0
#endif
// The mirrored entry A(i, i - d) from the stored A(i - d, i).
static inline V sym_diag_mirror(V v) {
#if SPMVJIT_HERMITIAN
  return V(v.re, -v.im);
#else
  return v;
#endif
}

template <int E>
static void sym_diag_part(const SpmvArgs& a, i64 p) {
  const I* SPMVJIT_RESTRICT off = (const I*)a.a[SYM_DIAG_OFFSET];
  SPMVJIT_DECLARE_VALUES(dval, a, SYM_DIAG_VALUES);
  const I* SPMVJIT_RESTRICT rp = (const I*)a.a[SYM_DIAG_REM_PTR];
  const I* SPMVJIT_RESTRICT rcol = (const I*)a.a[SYM_DIAG_REM_COL];
  SPMVJIT_DECLARE_VALUES(rval, a, SYM_DIAG_REM_VALUES);
  const i64* parts = (const i64*)a.a[SYM_DIAG_PARTS];
  const V* SPMVJIT_RESTRICT x = (const V*)a.x;
  V* SPMVJIT_RESTRICT y = (V*)a.y;
  const V alpha = spmvjit_alpha(a), beta = spmvjit_beta(a);
  const i64 n = a.rows, stride = a.n[SYM_DIAG_N_STRIDE], diags = a.n[SYM_DIAG_N_DIAGS];
  const bool rem = a.n[SYM_DIAG_N_REM_ENTRIES] != 0;  // else rem_ptr is not read
  V acc[SYM_DIAG_CPU_ROWS];
  for (i64 r0 = parts[p]; r0 < parts[p + 1]; r0 += SYM_DIAG_CPU_ROWS) {
    const i64 r1 = r0 + SYM_DIAG_CPU_ROWS < parts[p + 1] ? r0 + SYM_DIAG_CPU_ROWS : parts[p + 1];
    {
      const spmvjit_values_t v = dval + r0;
      const V* xs = x + r0;
#pragma clang loop vectorize(enable)
      for (i64 i = 0; i < r1 - r0; ++i) acc[i] = v[i] * xs[i];
    }
    // A block at least the largest offset from both ends: two diagonals at a time, their four
    // runs in one pass over the block's sums (half the passes over acc; every run is whole).
    i64 j = 1;
    if (r0 >= (i64)off[diags - 1] && r1 + (i64)off[diags - 1] <= n) {
      const i64 len = r1 - r0;
      for (; j + 1 < diags; j += 2) {
        const i64 d0 = (i64)off[j], d1 = (i64)off[j + 1];
        const spmvjit_values_t u0 = dval + (j * stride + r0), u1 = dval + ((j + 1) * stride + r0);
        const spmvjit_values_t m0 = dval + (j * stride + r0 - d0), m1 = dval + ((j + 1) * stride + r0 - d1);
        const V *xu0 = x + r0 + d0, *xu1 = x + r0 + d1, *xm0 = x + r0 - d0, *xm1 = x + r0 - d1;
#pragma clang loop vectorize(enable)
        for (i64 i = 0; i < len; ++i)
          acc[i] += (u0[i] * xu0[i] + sym_diag_mirror(m0[i]) * xm0[i]) +
                    (u1[i] * xu1[i] + sym_diag_mirror(m1[i]) * xm1[i]);
      }
    }
    for (; j < diags; ++j) {
      const i64 d = (i64)off[j];
      // Upper: rows [r0, min(r1, n - d)) read x[i + d].
      const i64 ue = r1 < n - d ? r1 : n - d;
      if (ue > r0) {
        const spmvjit_values_t v = dval + (j * stride + r0);
        const V* xs = x + r0 + d;
#pragma clang loop vectorize(enable)
        for (i64 i = 0; i < ue - r0; ++i) acc[i] += v[i] * xs[i];
      }
      // Mirror: rows [max(r0, d), r1) read row i - d's value and x[i - d].
      const i64 lb = r0 > d ? r0 : d;
      if (lb < r1) {
        const spmvjit_values_t v = dval + (j * stride + lb - d);
        const V* xs = x + lb - d;
        V* as = acc + (lb - r0);
#pragma clang loop vectorize(enable)
        for (i64 i = 0; i < r1 - lb; ++i) as[i] += sym_diag_mirror(v[i]) * xs[i];
      }
    }
    for (i64 r = r0; r < r1; ++r) {
      V sum = acc[r - r0];
      if (rem)
        for (i64 k = rp[r]; k < rp[r + 1]; ++k) sum += rval[k] * x[rcol[k]];
      y[r] = spmvjit_epilogue<E>(sum, y, r, alpha, beta);
    }
  }
}

SPMVJIT_EXPORT(sym_diag_part, spmvjit_part)
