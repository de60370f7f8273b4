// Stable sort of windows of sigma rows by decreasing length (templates/contract/window_sort.h):
// one bottom-up merge pass per launch, one thread per row, no cooperation. A row's place in the
// merge of its run with the neighbouring one is its place in its own run plus the rows of the
// other run that go first, found by binary search: longer rows, and from the left run equal ones
// too (stability). log2(sigma) passes sort every window. Grid-stride: any grid works. Where the
// windows allow, spmvjit_sort_tile (below) does the first 11 passes' work in one launch.
#include "../contract/window_sort.h"
#include "prelude.h"

SPMVJIT_DEVICE i64 wsort_len(const I* SPMVJIT_RESTRICT rp, i64 r) {
  return i64(spmvjit_ldg(rp + r + 1)) - i64(spmvjit_ldg(rp + r));
}

extern "C" __global__ void spmvjit_sort_merge(const SpmvArgs a) {
  const I* SPMVJIT_RESTRICT rp = (const I*)a.a[WSORT_ROW_PTR];
  const I* SPMVJIT_RESTRICT src = (const I*)a.a[WSORT_SRC];
  I* dst = (I*)a.a[WSORT_DST];
  const i64 sigma = a.n[WSORT_N_SIGMA], run = a.n[WSORT_N_RUN];
  for (i64 pos = i64(blockIdx.x) * blockDim.x + threadIdx.x; pos < a.rows;
       pos += i64(gridDim.x) * blockDim.x) {
    const i64 w0 = pos / sigma * sigma, wend = w0 + sigma < a.rows ? w0 + sigma : a.rows;
    const i64 p0 = w0 + (pos - w0) / (2 * run) * (2 * run);
    const i64 mid = p0 + run < wend ? p0 + run : wend, end = p0 + 2 * run < wend ? p0 + 2 * run : wend;
    const i64 row = run == 1 ? pos : i64(spmvjit_ldg(src + pos));
    const i64 len = wsort_len(rp, row);
    const bool left = pos < mid;
    // The other run, sorted by decreasing length: rows that go first form a prefix of it.
    i64 lo = left ? mid : p0, hi = left ? end : mid;
    const i64 first = lo;
    while (lo < hi) {
      const i64 m = lo + (hi - lo) / 2;
      const i64 other = wsort_len(rp, run == 1 ? m : i64(spmvjit_ldg(src + m)));
      if (left ? other > len : other >= len)
        lo = m + 1;
      else
        hi = m;
    }
    dst[pos - (left ? 0 : run) + (lo - first)] = I(row);
  }
}

#ifndef SPMVJIT_EMULATED  // a block's threads cooperate: the CPU emulation runs them one by one
// The tile's positions sorted by one 64-bit key each, in a bitonic network over shared memory:
// the window inside the tile (10 bits: sigma >= 2), the length inverted (43 bits, so longer rows
// come first) and the position inside the tile (11 bits: ties keep the input order, which makes
// the order the stable merge's). Positions past the last row get the largest key and stay last.
extern "C" __global__ void __launch_bounds__(WSORT_TILE / 2) spmvjit_sort_tile(const SpmvArgs a) {
  SPMVJIT_SHARED unsigned long long key[WSORT_TILE];
  const I* SPMVJIT_RESTRICT rp = (const I*)a.a[WSORT_ROW_PTR];
  I* dst = (I*)a.a[WSORT_DST];
  const i64 sigma = a.n[WSORT_N_SIGMA];
  const unsigned long long kLenMax = (1ull << 43) - 1;
  const i64 tiles = (a.rows + WSORT_TILE - 1) / WSORT_TILE;
  for (i64 tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
    const i64 base = tile * WSORT_TILE;
    for (int k = threadIdx.x; k < WSORT_TILE; k += blockDim.x) {
      const i64 pos = base + k;
      unsigned long long v = ~0ull;
      if (pos < a.rows) {
        const unsigned long long w = (unsigned long long)(pos / sigma - base / sigma);
        const i64 len = wsort_len(rp, pos);
        const unsigned long long l = (unsigned long long)len < kLenMax ? (unsigned long long)len : kLenMax;
        v = (w << 54) | ((kLenMax - l) << 11) | (unsigned long long)k;
      }
      key[k] = v;
    }
    spmvjit_sync_block();
    for (int size = 2; size <= WSORT_TILE; size <<= 1)
      for (int stride = size >> 1; stride > 0; stride >>= 1) {
        for (int i = threadIdx.x; i < WSORT_TILE / 2; i += blockDim.x) {
          const int lo = 2 * i - (i & (stride - 1)), hi = lo + stride;
          const unsigned long long x = key[lo], y = key[hi];
          if ((x > y) == ((lo & size) == 0)) key[lo] = y, key[hi] = x;
        }
        spmvjit_sync_block();
      }
    for (int k = threadIdx.x; k < WSORT_TILE; k += blockDim.x)
      if (base + k < a.rows) dst[base + k] = I(base + i64(key[k] & (WSORT_TILE - 1)));
    spmvjit_sync_block();  // the next tile overwrites key
  }
}
#endif
