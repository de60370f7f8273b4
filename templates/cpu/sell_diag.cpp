// CPU sliced-ELL-with-diagonals kernel: per slice, C row accumulators in SIMD lanes; a kept
// diagonal reads C contiguous values and C contiguous x entries (no index at all), then the
// remainder is plain sliced ELL. Diagonals that leave [0, cols) inside the slice (matrix edges)
// take a masked path.
#include "prelude.h"
#include "../contract/sell_diag.h"
#ifndef SPMVJIT_C
#define SPMVJIT_C 8
#endif

template <int E>
static void sell_diag_part(const SpmvArgs& a, i64 p) {
  constexpr i64 C = SPMVJIT_C;
  const i64* SPMVJIT_RESTRICT dp = (const i64*)a.a[SELL_DIAG_DIAG_PTR];
  const I* SPMVJIT_RESTRICT doff = (const I*)a.a[SELL_DIAG_DIAG_OFFSET];
  SPMVJIT_DECLARE_VALUES(dval, a, SELL_DIAG_DIAG_VALUES);
  const i64* SPMVJIT_RESTRICT rp = (const i64*)a.a[SELL_DIAG_REM_PTR];
  const I* SPMVJIT_RESTRICT rcol = (const I*)a.a[SELL_DIAG_REM_COL];
  SPMVJIT_DECLARE_VALUES(rval, a, SELL_DIAG_REM_VALUES);
  const i64* parts = (const i64*)a.a[SELL_DIAG_PARTS];
  const V* SPMVJIT_RESTRICT x = (const V*)a.x;
  V* SPMVJIT_RESTRICT y = (V*)a.y;
  const V alpha = spmvjit_alpha(a), beta = spmvjit_beta(a);
  const i64 cols = a.cols;
  for (i64 s = parts[p]; s < parts[p + 1]; ++s) {
    V acc[C];
    for (i64 i = 0; i < C; ++i) acc[i] = 0;
    const i64 row0 = s * C;
    for (i64 j = dp[s]; j < dp[s + 1]; ++j) {
      const i64 first = row0 + (i64)doff[j];
      const spmvjit_values_t vs = dval + j * C;
      if (first >= 0 && first + C <= cols) {
        const V* xs = x + first;
#pragma clang loop vectorize(enable)
        for (i64 i = 0; i < C; ++i) acc[i] += vs[i] * xs[i];
      } else {
        for (i64 i = 0; i < C; ++i) {
          const i64 c = first + i;
          acc[i] += (c >= 0 && c < cols) ? vs[i] * x[c] : V(0);
        }
      }
    }
    const I* cs = rcol + rp[s];
    const spmvjit_values_t vs = rval + rp[s];
    const i64 w = (rp[s + 1] - rp[s]) / C;
    for (i64 j = 0; j < w; ++j) {
#pragma clang loop vectorize(enable)
      for (i64 i = 0; i < C; ++i) acc[i] += vs[j * C + i] * x[cs[j * C + i]];
    }
    spmvjit_store_block<E, C>(acc, y, row0, a.rows - row0 < C ? a.rows - row0 : C, alpha, beta);
  }
}

SPMVJIT_EXPORT(sell_diag_part, spmvjit_part)
