// Device transpose for plans of op(A) = A^T (the steps: templates/contract/transpose.h). Grid-stride
// kernels, except sort_long, whose blocks each sort one long column in shared memory.
#include "../contract/device_plan.h"
#include "../contract/transpose.h"
#include "build_rows.cuh"
#include "heap_sort.cuh"
#include "prelude.h"

struct TrLess {
  __device__ __forceinline__ bool operator()(I x, I y) const { return x < y; }
};

// counts[0, cols] = 0, then each entry counted in its column.
extern "C" __global__ void spmvjit_tr_zero(const SpmvArgs a) { build_zero((i64*)a.a[TR_COUNTS], a.cols + 1); }
extern "C" __global__ void spmvjit_tr_count(const SpmvArgs a) {
  const I* SPMVJIT_RESTRICT ci = (const I*)a.a[TR_COL_IDX];
  unsigned long long* counts = (unsigned long long*)a.a[TR_COUNTS];
  const i64 base = a.n[DP_N_BASE];
  for (i64 k = build_first(); k < a.n[TR_N_NNZ]; k += build_stride())
    spmvjit_atomic_add_u64(counts + (i64(spmvjit_ldg(ci + k)) - base), 1ull);
}

// After the scan: A^T's row pointer; the count of long columns (counts[cols]) starts at 0.
extern "C" __global__ void spmvjit_tr_row_ptr(const SpmvArgs a) {
  i64* counts = (i64*)a.a[TR_COUNTS];
  I* tp = (I*)a.a[TR_T_ROW_PTR];
  for (i64 c = build_first(); c <= a.cols; c += build_stride()) {
    tp[c] = I(counts[c]);
    if (c == a.cols) counts[c] = 0;
  }
}

// Each entry k to a slot of its column (the cursors start at the scanned starts).
extern "C" __global__ void spmvjit_tr_fill(const SpmvArgs a) {
  const I* SPMVJIT_RESTRICT ci = (const I*)a.a[TR_COL_IDX];
  unsigned long long* cursor = (unsigned long long*)a.a[TR_COUNTS];
  I* perm = (I*)a.a[TR_PERM];
  const i64 base = a.n[DP_N_BASE];
  for (i64 k = build_first(); k < a.n[TR_N_NNZ]; k += build_stride()) {
    const unsigned long long at = atomicAdd(cursor + (i64(spmvjit_ldg(ci + k)) - base), 1ull);
    perm[at] = I(k);
  }
}

// Columns of at most TR_SHORT entries sorted in place; longer ones listed in counts[0, n) with
// n = counts[cols] (the cursors are spent: the list may overwrite them).
extern "C" __global__ void spmvjit_tr_sort_short(const SpmvArgs a) {
  const I* SPMVJIT_RESTRICT tp = (const I*)a.a[TR_T_ROW_PTR];
  I* perm = (I*)a.a[TR_PERM];
  unsigned long long* list = (unsigned long long*)a.a[TR_COUNTS];
  for (i64 c = build_first(); c < a.cols; c += build_stride()) {
    const i64 b = i64(tp[c]), len = i64(tp[c + 1]) - b;
    if (len <= 1) continue;
    if (len <= TR_SHORT) {
      build_heap_sort(perm + b, len, TrLess());
    } else {
      const unsigned long long at = atomicAdd(list + a.cols, 1ull);
      list[at] = (unsigned long long)c;
    }
  }
}

// v[0, n) sorted ascending by the block, n <= TR_TILE, through shared memory: a bitonic network
// over the next power of two (padded with the largest value).
SPMVJIT_DEVICE void tr_sort_tile(I* v, i64 n, i64* s) {
  i64 p = 2;
  while (p < n) p *= 2;
  for (i64 i = threadIdx.x; i < p; i += blockDim.x) s[i] = i < n ? i64(v[i]) : i64(0x7fffffffffffffffLL);
  spmvjit_sync_block();
  for (i64 size = 2; size <= p; size *= 2)
    for (i64 stride = size / 2; stride > 0; stride /= 2) {
      for (i64 i = threadIdx.x; i < p / 2; i += blockDim.x) {
        const i64 lo = (i / stride) * stride * 2 + i % stride, hi = lo + stride;
        const bool up = (lo & size) == 0;
        const i64 x = s[lo], y = s[hi];
        if ((x > y) == up) s[lo] = y, s[hi] = x;
      }
      spmvjit_sync_block();
    }
  for (i64 i = threadIdx.x; i < n; i += blockDim.x) v[i] = I(s[i]);
  spmvjit_sync_block();
}

// Entries of the sorted run r[0, n) below x (all values distinct).
SPMVJIT_DEVICE i64 tr_rank(const I* r, i64 n, i64 x) {
  i64 lo = 0, hi = n;
  while (lo < hi) {
    const i64 mid = (lo + hi) / 2;
    if (i64(r[mid]) < x)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

// One block per listed column: tiles sorted in shared memory, then merge passes between the
// column's place in perm and the same place in the scratch (each entry's place in the merged run:
// its place in its own run plus its rank in the other).
extern "C" __global__ void __launch_bounds__(TR_SORT_BLOCK) spmvjit_tr_sort_long(const SpmvArgs a) {
  SPMVJIT_SHARED i64 s[TR_TILE];
  const I* SPMVJIT_RESTRICT tp = (const I*)a.a[TR_T_ROW_PTR];
  const unsigned long long* list = (const unsigned long long*)a.a[TR_COUNTS];
  I* perm = (I*)a.a[TR_PERM];
  I* scratch = (I*)a.a[TR_OUT];
  for (i64 l = blockIdx.x; l < a.n[TR_N_LONG]; l += gridDim.x) {
    const i64 c = i64(list[l]), b = i64(tp[c]), len = i64(tp[c + 1]) - b;
    for (i64 t = 0; t < len; t += TR_TILE)
      tr_sort_tile(perm + b + t, len - t < TR_TILE ? len - t : TR_TILE, s);
    I* src = perm + b;
    I* dst = scratch + b;
    for (i64 run = TR_TILE; run < len; run *= 2) {
      for (i64 i = threadIdx.x; i < len; i += blockDim.x) {
        const i64 pair = i / (2 * run) * (2 * run), mid = pair + run < len ? pair + run : len;
        const i64 end = pair + 2 * run < len ? pair + 2 * run : len;
        const i64 x = i64(src[i]);
        const i64 at = i < mid ? pair + (i - pair) + tr_rank(src + mid, end - mid, x)
                               : pair + (i - mid) + tr_rank(src + pair, mid - pair, x);
        dst[at] = I(x);
      }
      spmvjit_sync_block();
      I* t = src;
      src = dst;
      dst = t;
    }
    if (src != perm + b) {
      for (i64 i = threadIdx.x; i < len; i += blockDim.x) perm[b + i] = src[i];
      spmvjit_sync_block();
    }
  }
}

extern "C" __global__ void spmvjit_tr_position(const SpmvArgs a) {
  const I* SPMVJIT_RESTRICT perm = (const I*)a.a[TR_PERM];
  I* position = (I*)a.a[TR_POSITION];
  for (i64 p = build_first(); p < a.n[TR_N_NNZ]; p += build_stride()) position[i64(perm[p])] = I(p);
}

// A^T's column indices (A's rows) and values, row by row of A.
extern "C" __global__ void spmvjit_tr_scatter(const SpmvArgs a) {
  const I* SPMVJIT_RESTRICT rp = (const I*)a.a[TR_ROW_PTR];
  const V* SPMVJIT_RESTRICT val = (const V*)a.a[TR_VALUES];
  const I* SPMVJIT_RESTRICT position = (const I*)a.a[TR_POSITION];
  I* tc = (I*)a.a[TR_OUT];
  V* tv = (V*)a.a[TR_T_VALUES];
  const i64 base = a.n[DP_N_BASE];
  for (i64 r = build_first(); r < a.rows; r += build_stride()) {
    const i64 e = i64(spmvjit_ldg(rp + r + 1)) - base;
    for (i64 k = i64(spmvjit_ldg(rp + r)) - base; k < e; ++k) {
      const i64 p = i64(position[k]);
      tc[p] = I(r);
      tv[p] = spmvjit_ldg(val + k);
    }
  }
}

// update_values: new values of A (a[TR_VALUES], A's order) to A^T's order (a[TR_OUT]).
extern "C" __global__ void spmvjit_tr_scatter_values(const SpmvArgs a) {
  const V* SPMVJIT_RESTRICT val = (const V*)a.a[TR_VALUES];
  const I* SPMVJIT_RESTRICT position = (const I*)a.a[TR_POSITION];
  V* out = (V*)a.a[TR_OUT];
  for (i64 k = build_first(); k < a.n[TR_N_NNZ]; k += build_stride())
    out[i64(position[k])] = spmvjit_ldg(val + k);
}
