// CPU sliced-ELL-of-1xB-blocks kernel: per slice, C row accumulators in SIMD lanes; each block
// column j costs one index gather and B contiguous value vectors (x[col + b] for b < B).
#include "prelude.h"
#include "../contract/sell_block.h"
#ifndef SPMVJIT_C
#define SPMVJIT_C 8
#endif
#ifndef SPMVJIT_B
#define SPMVJIT_B 2
#endif

template <int E>
static void sell_block_part(const SpmvArgs& a, i64 p) {
  constexpr i64 C = SPMVJIT_C, B = SPMVJIT_B;
  const i64* SPMVJIT_RESTRICT sp = (const i64*)a.a[SELL_BLOCK_SLICE_PTR];
  const I* SPMVJIT_RESTRICT col = (const I*)a.a[SELL_BLOCK_BLOCK_COL];
  SPMVJIT_DECLARE_VALUES(val, a, SELL_BLOCK_VALUES);
  const i64* parts = (const i64*)a.a[SELL_BLOCK_PARTS];
  const V* SPMVJIT_RESTRICT x = (const V*)a.x;
  V* SPMVJIT_RESTRICT y = (V*)a.y;
  const V alpha = spmvjit_alpha(a), beta = spmvjit_beta(a);
  for (i64 s = parts[p]; s < parts[p + 1]; ++s) {
    V acc[C];
    for (i64 i = 0; i < C; ++i) acc[i] = 0;
    const I* cs = col + sp[s];
    const spmvjit_values_t vs = val + B * sp[s];
    const i64 w = (sp[s + 1] - sp[s]) / C;
    for (i64 j = 0; j < w; ++j) {
#pragma clang loop vectorize(enable)
      for (i64 i = 0; i < C; ++i) {
        const V* xb = x + cs[j * C + i];
        V sum = acc[i];
        for (i64 b = 0; b < B; ++b) sum += vs[(j * B + b) * C + i] * xb[b];
        acc[i] = sum;
      }
    }
    const i64 row0 = s * C;
    spmvjit_store_block<E, C>(acc, y, row0, a.rows - row0 < C ? a.rows - row0 : C, alpha, beta);
  }
}

SPMVJIT_EXPORT(sell_block_part, spmvjit_part)
