// Stable sort of windows of sigma rows by decreasing length (templates/contract/window_sort.h):
// one bottom-up merge pass per launch, one thread per row, no cooperation. A row's place in the
// merge of its run with the neighbouring one is its place in its own run plus the rows of the
// other run that go first, found by binary search: longer rows, and from the left run equal ones
// too (stability). log2(sigma) passes sort every window. Grid-stride: any grid works.
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
