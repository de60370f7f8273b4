// GPU sliced-ELL-of-1xB-blocks kernel: one thread per row; slot j*C + i of a slice is read by
// consecutive threads (coalesced), each block brings B values for one index.
// Arrays: a[0] slice_ptr (i64, in blocks), a[1] block_col (I), a[2] values (V). n[0] = slices.
// Launch: grid = ceil(slices*C / 128), block = 128.
#include "prelude.h"
#ifndef SPMVJIT_C
#define SPMVJIT_C 32
#endif
#ifndef SPMVJIT_B
#define SPMVJIT_B 2
#endif

template <int E>
SPMVJIT_DEVICE void sell_block_part(const SpmvArgs& a) {
  constexpr i64 C = SPMVJIT_C, B = SPMVJIT_B;
  const i64* SPMVJIT_RESTRICT sp = (const i64*)a.a[0];
  const I* SPMVJIT_RESTRICT col = (const I*)a.a[1];
  const V* SPMVJIT_RESTRICT val = (const V*)a.a[2];
  const V* SPMVJIT_RESTRICT x = (const V*)a.x;
  V* y = (V*)a.y;
  const i64 g = i64(blockIdx.x) * i64(blockDim.x) + i64(threadIdx.x);
  const i64 s = g / C, i = g % C;
  if (s >= a.n[0] || g >= a.rows) return;
  const i64 begin = spmvjit_ldg(sp + s), w = (spmvjit_ldg(sp + s + 1) - begin) / C;
  const V* vs = val + B * begin;
  V sum = 0;
  for (i64 j = 0; j < w; ++j) {
    const i64 c = (i64)spmvjit_ld_stream(col + begin + j * C + i);
#pragma unroll
    for (i64 b = 0; b < B; ++b) sum += spmvjit_ld_stream(vs + (j * B + b) * C + i) * spmvjit_ldg(x + c + b);
  }
  y[g] = spmvjit_epilogue<E>(sum, y, g, (V)a.alpha, (V)a.beta);
}

SPMVJIT_EXPORT_KERNEL(sell_block_part, spmvjit_part, 128)
