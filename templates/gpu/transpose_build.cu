// Device transpose for plans of op(A) = A^T (the steps: templates/contract/transpose.h). Grid-stride
// kernels, except sort_tiles, whose blocks each sort a tile of a long column in shared memory.
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

// The listed columns' entries and tiles, for the scans that enumerate them, and the longest
// column (atomic maximum into a zeroed i64).
extern "C" __global__ void spmvjit_tr_long_sizes(const SpmvArgs a) {
  const I* SPMVJIT_RESTRICT tp = (const I*)a.a[TR_T_ROW_PTR];
  const unsigned long long* list = (const unsigned long long*)a.a[TR_COUNTS];
  i64* entries = (i64*)a.a[TR_LONG_ENTRIES];
  i64* tiles = (i64*)a.a[TR_LONG_TILES];
  i64 longest = 0;
  for (i64 l = build_first(); l < a.n[TR_N_LONG]; l += build_stride()) {
    const i64 c = i64(list[l]), len = i64(tp[c + 1]) - i64(tp[c]);
    entries[l] = len;
    tiles[l] = (len + TR_TILE - 1) / TR_TILE;
    longest = len > longest ? len : longest;
  }
  if (longest) spmvjit_atomic_max_u64((unsigned long long*)a.a[TR_LONG_MAX], (unsigned long long)longest);
}

// The listed column holding item t of the scanned counts `start` (n entries, start[n] the total).
SPMVJIT_DEVICE i64 tr_owner(const i64* start, i64 n, i64 t) {
  i64 lo = 0, hi = n;  // the last l with start[l] <= t
  while (hi - lo > 1) {
    const i64 mid = (lo + hi) / 2;
    if (start[mid] <= t)
      lo = mid;
    else
      hi = mid;
  }
  return lo;
}

// One block per tile of TR_TILE entries of a listed column, sorted in shared memory.
extern "C" __global__ void __launch_bounds__(TR_SORT_BLOCK) spmvjit_tr_sort_tiles(const SpmvArgs a) {
  SPMVJIT_SHARED i64 s[TR_TILE];
  const I* SPMVJIT_RESTRICT tp = (const I*)a.a[TR_T_ROW_PTR];
  const unsigned long long* list = (const unsigned long long*)a.a[TR_COUNTS];
  const i64* tiles = (const i64*)a.a[TR_LONG_TILES];
  I* perm = (I*)a.a[TR_PERM];
  const i64 n = a.n[TR_N_LONG];
  for (i64 t = blockIdx.x; t < tiles[n]; t += gridDim.x) {
    const i64 l = tr_owner(tiles, n, t), c = i64(list[l]);
    const i64 b = i64(tp[c]), len = i64(tp[c + 1]) - b, off = (t - tiles[l]) * TR_TILE;
    tr_sort_tile(perm + b + off, len - off < TR_TILE ? len - off : TR_TILE, s);
  }
}

// One merge pass over the listed columns' entries, runs of n[TR_N_RUN] to twice that, from
// a[TR_PERM] to a[TR_OUT] at the same places (each entry's place in the merged run: its place in
// its own run plus its rank in the other). A column no longer than a run is copied as it is.
extern "C" __global__ void spmvjit_tr_merge(const SpmvArgs a) {
  const I* SPMVJIT_RESTRICT tp = (const I*)a.a[TR_T_ROW_PTR];
  const unsigned long long* list = (const unsigned long long*)a.a[TR_COUNTS];
  const i64* entries = (const i64*)a.a[TR_LONG_ENTRIES];
  const I* src = (const I*)a.a[TR_PERM];
  I* dst = (I*)a.a[TR_OUT];
  const i64 n = a.n[TR_N_LONG], run = a.n[TR_N_RUN];
  for (i64 e = build_first(); e < entries[n]; e += build_stride()) {
    const i64 l = tr_owner(entries, n, e), c = i64(list[l]);
    const i64 b = i64(tp[c]), len = i64(tp[c + 1]) - b, i = e - entries[l];
    const I* v = src + b;
    if (len <= run) {
      dst[b + i] = v[i];
      continue;
    }
    const i64 pair = i / (2 * run) * (2 * run), mid = pair + run < len ? pair + run : len;
    const i64 end = pair + 2 * run < len ? pair + 2 * run : len;
    const i64 x = i64(v[i]);
    const i64 at =
        i < mid ? i + tr_rank(v + mid, end - mid, x) : pair + (i - mid) + tr_rank(v + pair, mid - pair, x);
    dst[b + at] = I(x);
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
