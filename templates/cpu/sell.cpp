// CPU SELL-C-sigma kernel: one slice of C rows at a time, C accumulators in SIMD lanes.
#include "../contract/sell.h"
#include "prelude.h"
#ifndef SPMVJIT_C
#define SPMVJIT_C 8
#endif
#ifndef SPMVJIT_PERMUTED
#define SPMVJIT_PERMUTED 1
#endif

template <int E>
static void sell_part(const SpmvArgs& a, i64 p) {
  constexpr i64 C = SPMVJIT_C;
  const i64* SPMVJIT_RESTRICT sp = (const i64*)a.a[SELL_SLICE_PTR];
  const I* SPMVJIT_RESTRICT col = (const I*)a.a[SELL_COL_IDX];
  SPMVJIT_DECLARE_VALUES(val, a, SELL_VALUES);
  const I* SPMVJIT_RESTRICT perm = (const I*)a.a[SELL_PERM];
  const i64* parts = (const i64*)a.a[SELL_PARTS];
  const V* SPMVJIT_RESTRICT x = (const V*)a.x;
  V* SPMVJIT_RESTRICT y = (V*)a.y;
  const V alpha = spmvjit_alpha(a), beta = spmvjit_beta(a);
  for (i64 s = parts[p]; s < parts[p + 1]; ++s) {
    V acc[C];
    for (i64 i = 0; i < C; ++i) acc[i] = 0;
    const I* cs = col + sp[s];
    const spmvjit_values_t vs = val + sp[s];
    const i64 w = (sp[s + 1] - sp[s]) / C;
    // Vectorize across the C rows of a slice (contiguous matrix loads, one gather of x), never
    // along j: the loop vectorizer would otherwise gather the matrix arrays with stride C.
#pragma clang loop vectorize(disable) interleave(disable)
    for (i64 j = 0; j < w; ++j) {
      for (i64 i = 0; i < C; ++i) acc[i] += vs[j * C + i] * x[cs[j * C + i]];
    }
    const i64 row0 = s * C;
    const i64 lim = a.rows - row0 < C ? a.rows - row0 : C;
    if (SPMVJIT_PERMUTED) {
      for (i64 i = 0; i < lim; ++i) {
        const i64 r = (i64)perm[row0 + i];
        y[r] = spmvjit_epilogue<E>(acc[i], y, r, alpha, beta);
      }
    } else {
      spmvjit_store_block<E, C>(acc, y, row0, lim, alpha, beta);
    }
  }
}

SPMVJIT_EXPORT(sell_part, spmvjit_part)
