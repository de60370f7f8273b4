// GPU SELL-C-sigma: one thread per (sorted) row, C a multiple of the warp so each warp reads
// one slice's column j as one contiguous, coalesced run of col_idx and values.
// Launch: ceil(rows / SELL_GPU_BLOCK) blocks.
#include "../contract/sell.h"
#include "prelude.h"
#ifndef SPMVJIT_C
#define SPMVJIT_C SPMVJIT_WARP
#endif
#ifndef SPMVJIT_PERMUTED
#define SPMVJIT_PERMUTED 0
#endif
// Columns loaded ahead of their first use: enough bytes in flight per thread to cover latency.
#define SPMVJIT_SELL_UNROLL 4

template <int E>
SPMVJIT_DEVICE void sell_rows(const SpmvArgs& a) {
  constexpr i64 C = SPMVJIT_C;
  const i64 pos = i64(blockIdx.x) * SELL_GPU_BLOCK + threadIdx.x;
  if (pos >= a.rows) return;
  const i64* SPMVJIT_RESTRICT sp = (const i64*)a.a[SELL_SLICE_PTR];
  const I* SPMVJIT_RESTRICT col = (const I*)a.a[SELL_COL_IDX];
  SPMVJIT_DECLARE_VALUES(val, a, SELL_VALUES);
  const V* SPMVJIT_RESTRICT x = (const V*)a.x;
  V* SPMVJIT_RESTRICT y = (V*)a.y;
  const i64 s = pos / C;
  const i64 b = spmvjit_ldg(sp + s);
  const i64 w = (spmvjit_ldg(sp + s + 1) - b) / C;
  const I* SPMVJIT_RESTRICT cs = col + b + (pos - s * C);
  const spmvjit_values_t SPMVJIT_VALUES_RESTRICT vs = val + b + (pos - s * C);
  V sum = 0;
  i64 j = 0;
  for (; j + SPMVJIT_SELL_UNROLL <= w; j += SPMVJIT_SELL_UNROLL) {
    I c[SPMVJIT_SELL_UNROLL];
    V v[SPMVJIT_SELL_UNROLL];
#pragma unroll
    for (int u = 0; u < SPMVJIT_SELL_UNROLL; ++u) {
      c[u] = spmvjit_ld_stream(cs + (j + u) * C);
      v[u] = spmvjit_ld_stream(vs + (j + u) * C);
    }
#pragma unroll
    for (int u = 0; u < SPMVJIT_SELL_UNROLL; ++u) sum += v[u] * spmvjit_ldg(x + c[u]);
  }
  for (; j < w; ++j) sum += spmvjit_ld_stream(vs + j * C) * spmvjit_ldg(x + spmvjit_ld_stream(cs + j * C));
#if SPMVJIT_PERMUTED
  const i64 r = (i64)spmvjit_ldg((const I*)a.a[SELL_PERM] + pos);
#else
  const i64 r = pos;
#endif
  y[r] = spmvjit_epilogue<E>(sum, y, r, spmvjit_alpha(a), spmvjit_beta(a));
}

SPMVJIT_EXPORT_KERNEL(sell_rows, spmvjit_part, SELL_GPU_BLOCK)
