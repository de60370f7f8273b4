// GPU sliced-ELL-of-1xB-blocks kernel: one thread per row; slot j*C + i of a slice is read by
// consecutive threads (coalesced), each block brings B values for one index.
// Launch: grid = ceil(slices*C / SELL_BLOCK_GPU_BLOCK), block = SELL_BLOCK_GPU_BLOCK.
#include "prelude.h"
#include "../contract/sell_block.h"
#ifndef SPMVJIT_C
#define SPMVJIT_C SPMVJIT_WARP
#endif
#ifndef SPMVJIT_B
#define SPMVJIT_B 2
#endif

template <int E>
SPMVJIT_DEVICE void sell_block_part(const SpmvArgs& a) {
  constexpr i64 C = SPMVJIT_C, B = SPMVJIT_B;
  const i64* SPMVJIT_RESTRICT sp = (const i64*)a.a[SELL_BLOCK_SLICE_PTR];
  const I* SPMVJIT_RESTRICT col = (const I*)a.a[SELL_BLOCK_BLOCK_COL];
  SPMVJIT_DECLARE_VALUES(val, a, SELL_BLOCK_VALUES);
  const V* SPMVJIT_RESTRICT x = (const V*)a.x;
  V* y = (V*)a.y;
  const i64 g = i64(blockIdx.x) * i64(blockDim.x) + i64(threadIdx.x);
  const i64 s = g / C, i = g % C;
  if (s >= a.n[SELL_BLOCK_N_SLICES] || g >= a.rows) return;
  const i64 begin = spmvjit_ldg(sp + s), w = (spmvjit_ldg(sp + s + 1) - begin) / C;
  const spmvjit_values_t vs = val + B * begin;
  V sum = 0;
  for (i64 j = 0; j < w; ++j) {
    const i64 c = (i64)spmvjit_ld_stream(col + begin + j * C + i);
#pragma unroll
    for (i64 b = 0; b < B; ++b) sum += spmvjit_ld_stream(vs + (j * B + b) * C + i) * spmvjit_ldg(x + c + b);
  }
  y[g] = spmvjit_epilogue<E>(sum, y, g, spmvjit_alpha(a), spmvjit_beta(a));
}

SPMVJIT_EXPORT_KERNEL(sell_block_part, spmvjit_part, SELL_BLOCK_GPU_BLOCK)
