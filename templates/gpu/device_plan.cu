// Device-side planning for CSR arrays already in device memory (engine/device_plan.cpp drives
// these kernels): validation and statistics without copying the matrix to the host, and the
// steps every device conversion shares (zero-based copies, an exclusive scan). Conversions
// particular to a format live in its own build module (templates/gpu/<format>_build.cu).
// The input may be one-based: n[DP_N_BASE] holds the index base everywhere.
// Every kernel is grid-stride: any grid is correct. spmvjit_dp_rows needs blocks of exactly
// DP_BLOCK threads, the spmvjit_dp_scan* kernels blocks of DP_SCAN_BLOCK (spmvjit_dp_scan exactly
// one); the others take any block size.
#include "../contract/device_plan.h"
#include "block_scan.cuh"
#include "prelude.h"

namespace dp {

typedef unsigned long long u64;
constexpr int kBlock = DP_BLOCK;
constexpr int kWidths = DP_WIDTHS;  // slices / lanes of 2^0 .. 2^6
constexpr int kWarpLog = SPMVJIT_WARP == 64 ? 6 : 5;
static_assert(SPMVJIT_WARP == 32 || SPMVJIT_WARP == 64, "warps of 32 or 64 threads");
static_assert(kWidths <= kWarpLog + 2, "slices span at most two warps");
constexpr i64 kI64Max = 0x7fffffffffffffffLL;

SPMVJIT_DEVICE i64 warp_sum(i64 v) {
  for (int d = SPMVJIT_WARP / 2; d > 0; d >>= 1) v += spmvjit_shfl_down(v, d);
  return v;
}
SPMVJIT_DEVICE i64 warp_min(i64 v) {
  for (int d = SPMVJIT_WARP / 2; d > 0; d >>= 1) {
    const i64 o = spmvjit_shfl_down(v, d);
    v = o < v ? o : v;
  }
  return v;
}
SPMVJIT_DEVICE i64 warp_max(i64 v) {
  for (int d = SPMVJIT_WARP / 2; d > 0; d >>= 1) {
    const i64 o = spmvjit_shfl_down(v, d);
    v = o > v ? o : v;
  }
  return v;
}
// Adds one to hist[slot] for every lane whose slot is not negative; every lane of the warp calls
// it. Lanes of one slot add together: rows of one length (a stencil's, a mesh's) made a warp's
// shared-memory atomics on one counter run one after another. The warp's first few slots go by
// one atomic each, any others by one per lane.
SPMVJIT_DEVICE void warp_count(unsigned* hist, int slot) {
  bool left = slot >= 0;
  for (int i = 0; i < 4; ++i) {
    const spmvjit_lanes_t m = spmvjit_ballot(left);
    if (!m) return;
    const int first = spmvjit_lowest_lane(m), s = spmvjit_shfl(slot, first);
    const spmvjit_lanes_t same = spmvjit_ballot(left && slot == s);
    if (spmvjit_lane() == first) spmvjit_atomic_add_shared_u32(hist + s, unsigned(spmvjit_lane_count(same)));
    if (slot == s) left = false;
  }
  if (left) spmvjit_atomic_inc_shared_u32(hist + slot);
}

SPMVJIT_DEVICE void add(u64* stats, int slot, i64 v) {
  if (v) spmvjit_atomic_add_u64(stats + slot, u64(v));
}

// Exclusive scan of one value per thread over a block of DP_SCAN_BLOCK threads (block_scan.cuh).
SPMVJIT_DEVICE i64 block_exclusive(i64 x, i64* warps, i64* total) {
  return spmvjit_block_exclusive<DP_SCAN_BLOCK>(x, warps, total);
}

}  // namespace dp

// The statistics block's starting values (~0 where a minimum is taken, else 0), any grid.
extern "C" __global__ void spmvjit_dp_init_stats(const SpmvArgs a) {
  dp::u64* stats = (dp::u64*)a.scratch;
  for (int i = int(blockIdx.x * blockDim.x + threadIdx.x); i < DP_SLOTS; i += int(gridDim.x * blockDim.x))
    stats[i] = i == DP_ERR_ROW || i == DP_ERR_COL || i == DP_ROW_MIN ? ~0ull : 0ull;
}

// Validation of row_ptr and the row-length statistics, one thread per row.
// a[DP_SRC] row_ptr, n[DP_N_COUNT] nnz; scratch: the statistics block.
extern "C" __global__ void __launch_bounds__(DP_BLOCK) spmvjit_dp_rows(const SpmvArgs a) {
  using namespace dp;
  const I* SPMVJIT_RESTRICT rp = (const I*)a.a[DP_SRC];
  u64* stats = (u64*)a.scratch;
  const i64 rows = a.rows, base = a.n[DP_N_BASE];
  SPMVJIT_SHARED unsigned hist[DP_HIST_BINS + DP_SHORT_LENGTHS];  // log2 bins, then exact short lengths
  SPMVJIT_SHARED i64 warp_slice[kBlock / SPMVJIT_WARP];
  const int t = int(threadIdx.x), lane = spmvjit_lane(), warp = t / SPMVJIT_WARP;
  if (blockIdx.x == 0 && t == 0) {
    const i64 first = rp[0], last = rp[rows];
    if (first != base || last != a.n[DP_N_COUNT] + base) stats[DP_ERR_ENDS] = 1;
  }
  for (int i = t; i < DP_HIST_BINS + DP_SHORT_LENGTHS; i += kBlock) hist[i] = 0;
  i64 mn = kI64Max, mx = 0, empty = 0;
  i64 widths[kWidths] = {}, idle[kWidths] = {}, rem[kWidths] = {};
  double sq = 0;
  i64 err = -1;
  spmvjit_sync_block();
  for (i64 r0 = i64(blockIdx.x) * kBlock; r0 < rows; r0 += i64(gridDim.x) * kBlock) {
    const i64 r = r0 + t;
    i64 len = 0;
    int bin = -1, short_len = -1;
    if (r < rows) {
      len = i64(spmvjit_ldg(rp + r + 1)) - i64(spmvjit_ldg(rp + r));
      if (len < 0 && err < 0) err = r;
      if (len < 0) len = 0;  // statistics of an invalid matrix are discarded
      mn = len < mn ? len : mn;
      mx = len > mx ? len : mx;
      empty += len == 0;
      sq += double(len) * double(len);
      bin = len == 0 ? 0 : 64 - spmvjit_clz64(len);
      bin = bin < DP_HIST_BINS - 1 ? bin : DP_HIST_BINS - 1;
      if (len < DP_SHORT_LENGTHS) short_len = DP_HIST_BINS + int(len);
#pragma unroll
      for (int k = 0; k < kWidths; ++k) {
        const i64 mask = (i64(1) << k) - 1;
        rem[k] += len & mask;
        idle[k] += (-len) & mask;
      }
    }
    warp_count(hist, bin);
    warp_count(hist, short_len);
    // Slice maxima over aligned groups of 2^k rows (r0 is a multiple of the block size): within
    // a warp by shuffles, then, for slices longer than a warp, across pairs of warps.
    i64 m = len;
#pragma unroll
    for (int k = 0; k <= kWarpLog && k < kWidths; ++k) {
      if (k > 0) {
        const i64 o = spmvjit_shfl_xor(m, 1 << (k - 1));
        m = o > m ? o : m;
      }
      if ((lane & ((1 << k) - 1)) == 0 && r < rows) widths[k] += m;
    }
    if constexpr (kWarpLog + 1 < kWidths) {
      if (lane == 0) warp_slice[warp] = m;
      spmvjit_sync_block();
      if (lane == 0 && (warp & 1) == 0 && r < rows) {
        const i64 o = warp_slice[warp + 1];
        widths[kWarpLog + 1] += o > m ? o : m;
      }
      spmvjit_sync_block();
    }
  }
  if (err >= 0) spmvjit_atomic_min_u64(stats + DP_ERR_ROW, u64(err));
  // Block totals: warp sums, the warps' sums in shared memory, then one atomic per value and
  // block. An atomic per value and warp (24 each, thousands of warps, on the same two dozen
  // counters) took 0.10-0.16 ms on an H200, above reading row_ptr itself.
  mn = warp_min(mn);
  mx = warp_max(mx);
  empty = warp_sum(empty);
  for (int d = SPMVJIT_WARP / 2; d > 0; d >>= 1) sq += spmvjit_shfl_down(sq, d);
#pragma unroll
  for (int k = 0; k < kWidths; ++k) {
    widths[k] = warp_sum(widths[k]);
    idle[k] = warp_sum(idle[k]);
    rem[k] = warp_sum(rem[k]);
  }
  constexpr int kWarps = kBlock / SPMVJIT_WARP,
                kValues = 3 + 3 * kWidths;  // min, max, empty, widths, idle, rem
  static_assert(kValues < SPMVJIT_WARP, "the block totals are added by the first warp's lanes");
  SPMVJIT_SHARED i64 part[kValues][kWarps];
  SPMVJIT_SHARED double part_sq[kWarps];
  if (lane == 0) {
    part[0][warp] = mn;
    part[1][warp] = mx;
    part[2][warp] = empty;
    for (int k = 0; k < kWidths; ++k) {
      part[3 + k][warp] = widths[k];
      part[3 + kWidths + k][warp] = idle[k];
      part[3 + 2 * kWidths + k][warp] = rem[k];
    }
    part_sq[warp] = sq;
  }
  spmvjit_sync_block();
  if (t < kValues) {
    i64 v = part[t][0];
    for (int w = 1; w < kWarps; ++w) {
      const i64 o = part[t][w];
      v = t == 0 ? (o < v ? o : v) : t == 1 ? (o > v ? o : v) : v + o;
    }
    if (t == 0) {
      if (v != kI64Max) spmvjit_atomic_min_u64(stats + DP_ROW_MIN, u64(v));
    } else if (t == 1) {
      if (v) spmvjit_atomic_max_u64(stats + DP_ROW_MAX, u64(v));
    } else if (t == 2) {
      add(stats, DP_EMPTY, v);
    } else {
      const int k = t - 3;
      add(stats,
          k < kWidths       ? DP_WIDTH_SUM + k
          : k < 2 * kWidths ? DP_IDLE + k - kWidths
                            : DP_REM + k - 2 * kWidths,
          v);
    }
  } else if (t == kValues) {
    double v = 0;
    for (int w = 0; w < kWarps; ++w) v += part_sq[w];
    if (v != 0) spmvjit_atomic_add_f64((double*)(stats + DP_SUM_SQ), v);
  }
  spmvjit_sync_block();
  // DP_LEN_COUNT follows DP_HIST in the statistics block as in the shared counts.
  for (int i = t; i < DP_HIST_BINS + DP_SHORT_LENGTHS; i += kBlock) add(stats, DP_HIST + i, hist[i]);
}

// Column range check, one thread per entry. a[DP_SRC] col_idx, n[DP_N_COUNT] nnz; scratch: the
// statistics block.
extern "C" __global__ void __launch_bounds__(DP_BLOCK) spmvjit_dp_cols(const SpmvArgs a) {
  using namespace dp;
  const I* SPMVJIT_RESTRICT ci = (const I*)a.a[DP_SRC];
  const i64 nnz = a.n[DP_N_COUNT], base = a.n[DP_N_BASE];
  const u64 cols = u64(a.cols);
  i64 err = -1;
  // Four entries a thread at a time, their loads first: one 4-byte load in flight a thread kept
  // the pass near 2 TB/s on an H200.
  const i64 stride = i64(gridDim.x) * blockDim.x;
  for (i64 k0 = i64(blockIdx.x) * blockDim.x + threadIdx.x; k0 < nnz; k0 += 4 * stride) {
    i64 col[4];
#pragma unroll
    for (int u = 0; u < 4; ++u)
      col[u] = k0 + u * stride < nnz ? i64(spmvjit_ld_stream(ci + k0 + u * stride)) : base;
#pragma unroll
    for (int u = 0; u < 4; ++u)
      if (k0 + u * stride < nnz && u64(col[u] - base) >= cols && err < 0) err = k0 + u * stride;
  }
  if (err >= 0) spmvjit_atomic_min_u64((u64*)a.scratch + DP_ERR_COL, u64(err));
}

// dst[i] = src[i] - base for i < n[DP_N_COUNT], 0 up to n[DP_N_PADDED]. a[DP_SRC], a[DP_DST]: I.
extern "C" __global__ void __launch_bounds__(DP_BLOCK) spmvjit_dp_copy_index(const SpmvArgs a) {
  const I* SPMVJIT_RESTRICT src = (const I*)a.a[DP_SRC];
  I* SPMVJIT_RESTRICT dst = (I*)a.a[DP_DST];
  const i64 n = a.n[DP_N_COUNT], padded = a.n[DP_N_PADDED];
  const I base = I(a.n[DP_N_BASE]);
  for (i64 i = i64(blockIdx.x) * blockDim.x + threadIdx.x; i < padded; i += i64(gridDim.x) * blockDim.x)
    dst[i] = i < n ? I(spmvjit_ld_stream(src + i) - base) : I(0);
}

// dst[i] = src[i] for i < n[DP_N_COUNT], 0 up to n[DP_N_PADDED]. a[DP_SRC], a[DP_DST]: V.
extern "C" __global__ void __launch_bounds__(DP_BLOCK) spmvjit_dp_copy_values(const SpmvArgs a) {
  const V* SPMVJIT_RESTRICT src = (const V*)a.a[DP_SRC];
  V* SPMVJIT_RESTRICT dst = (V*)a.a[DP_DST];
  const i64 n = a.n[DP_N_COUNT], padded = a.n[DP_N_PADDED];
  for (i64 i = i64(blockIdx.x) * blockDim.x + threadIdx.x; i < padded; i += i64(gridDim.x) * blockDim.x)
    dst[i] = i < n ? spmvjit_ld_stream(src + i) : V(0);
}

// Exclusive scan of the i64 array a[DP_SRC] of n[DP_N_COUNT] entries in place, the total at
// [n[DP_N_COUNT]]. One block of DP_SCAN_BLOCK threads.
extern "C" __global__ void __launch_bounds__(DP_SCAN_BLOCK) spmvjit_dp_scan(const SpmvArgs a) {
  constexpr int kThreads = DP_SCAN_BLOCK;
  i64* v = (i64*)a.a[DP_SRC];
  const i64 n = a.n[DP_N_COUNT];
  SPMVJIT_SHARED i64 part[kThreads];
  const int t = int(threadIdx.x);
  const i64 per = (n + kThreads - 1) / kThreads, b = t * per, e = b + per < n ? b + per : n;
  i64 s = 0;
  for (i64 i = b; i < e; ++i) s += v[i];
  part[t] = s;
  spmvjit_sync_block();
  for (int d = 1; d < kThreads; d <<= 1) {  // inclusive Hillis-Steele scan of the parts
    const i64 o = t >= d ? part[t - d] : 0;
    spmvjit_sync_block();
    part[t] += o;
    spmvjit_sync_block();
  }
  i64 run = part[t] - s;
  for (i64 i = b; i < e; ++i) {
    const i64 x = v[i];
    v[i] = run;
    run += x;
  }
  if (t == kThreads - 1) v[n] = part[kThreads - 1];
}

// The scan of more than DP_SCAN_TILE entries (engine/device_plan.cpp runs the three kernels):
// each tile's sum into a[DP_DST][tile], spmvjit_dp_scan over those sums, then each tile scanned
// from its scanned sum; the total lands at a[DP_SRC][n]. Tiles are grid-stride.
extern "C" __global__ void __launch_bounds__(DP_SCAN_BLOCK) spmvjit_dp_scan_reduce(const SpmvArgs a) {
  const i64* SPMVJIT_RESTRICT v = (const i64*)a.a[DP_SRC];
  i64* SPMVJIT_RESTRICT sums = (i64*)a.a[DP_DST];
  const i64 n = a.n[DP_N_COUNT], tiles = (n + DP_SCAN_TILE - 1) / DP_SCAN_TILE;
  SPMVJIT_SHARED i64 warps[DP_SCAN_BLOCK / SPMVJIT_WARP];
  for (i64 tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
    const i64 b = tile * DP_SCAN_TILE, e = b + DP_SCAN_TILE < n ? b + DP_SCAN_TILE : n;
    i64 s = 0;
    for (i64 i = b + threadIdx.x; i < e; i += DP_SCAN_BLOCK) s += v[i];
    i64 total;
    dp::block_exclusive(s, warps, &total);
    if (threadIdx.x == 0) sums[tile] = total;
  }
}

extern "C" __global__ void __launch_bounds__(DP_SCAN_BLOCK) spmvjit_dp_scan_apply(const SpmvArgs a) {
  constexpr int kItems = DP_SCAN_TILE / DP_SCAN_BLOCK;  // consecutive entries per thread
  i64* SPMVJIT_RESTRICT v = (i64*)a.a[DP_SRC];
  const i64* SPMVJIT_RESTRICT sums = (const i64*)a.a[DP_DST];
  const i64 n = a.n[DP_N_COUNT], tiles = (n + DP_SCAN_TILE - 1) / DP_SCAN_TILE;
  SPMVJIT_SHARED i64 warps[DP_SCAN_BLOCK / SPMVJIT_WARP];
  for (i64 tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
    const i64 b = tile * DP_SCAN_TILE + i64(threadIdx.x) * kItems;
    i64 x[kItems], s = 0;
    for (int k = 0; k < kItems; ++k) {
      x[k] = b + k < n ? v[b + k] : 0;
      s += x[k];
    }
    i64 total;
    i64 run = dp::block_exclusive(s, warps, &total) + sums[tile];
    for (int k = 0; k < kItems; ++k)
      if (b + k < n) {
        v[b + k] = run;
        run += x[k];
      }
  }
  if (blockIdx.x == 0 && threadIdx.x == 0) v[n] = sums[tiles];
}

// Row sample, pass 1: the length of sampled row i (group i / GROUP_ROWS starting where
// engine/sample.hpp's sample_group_start says; 0 past the matrix's last row).
extern "C" __global__ void __launch_bounds__(DP_BLOCK) spmvjit_dp_sample_lengths(const SpmvArgs a) {
  const I* SPMVJIT_RESTRICT rp = (const I*)a.a[DP_SAMPLE_ROW_PTR];
  i64* len = (i64*)a.a[DP_SAMPLE_OFFSETS];
  const i64 groups = a.n[DP_N_SAMPLE_GROUPS], matrix_groups = a.n[DP_N_MATRIX_GROUPS];
  for (i64 i = i64(blockIdx.x) * blockDim.x + threadIdx.x; i < groups * DP_SAMPLE_GROUP_ROWS;
       i += i64(gridDim.x) * blockDim.x) {
    const i64 g = i / DP_SAMPLE_GROUP_ROWS;
    const i64 r = dp_sample_group_start(g, groups, matrix_groups) + i % DP_SAMPLE_GROUP_ROWS;
    len[i] = r < a.rows ? i64(spmvjit_ldg(rp + r + 1)) - i64(spmvjit_ldg(rp + r)) : 0;
  }
}

// Row sample, pass 2: sampled row i's entries at offsets[i] (scanned), columns zero-based and
// shifted by as many rows as the row moved, as int64. One warp per row (a sample of long rows,
// e.g. a dense block, would leave one thread copying thousands of entries).
extern "C" __global__ void __launch_bounds__(DP_BLOCK) spmvjit_dp_sample_gather(const SpmvArgs a) {
  const I* SPMVJIT_RESTRICT rp = (const I*)a.a[DP_SAMPLE_ROW_PTR];
  const I* SPMVJIT_RESTRICT ci = (const I*)a.a[DP_SAMPLE_COL_IDX];
  const V* SPMVJIT_RESTRICT va = (const V*)a.a[DP_SAMPLE_VALUES];
  const i64* off = (const i64*)a.a[DP_SAMPLE_OFFSETS];
  i64* cols = (i64*)a.a[DP_SAMPLE_COLS];
  V* vals = (V*)a.a[DP_SAMPLE_VALS];
  const i64 groups = a.n[DP_N_SAMPLE_GROUPS], matrix_groups = a.n[DP_N_MATRIX_GROUPS], base = a.n[DP_N_BASE];
  const i64 warps = i64(gridDim.x) * (blockDim.x / SPMVJIT_WARP);
  const int lane = spmvjit_lane();
  for (i64 i = (i64(blockIdx.x) * blockDim.x + threadIdx.x) / SPMVJIT_WARP; i < groups * DP_SAMPLE_GROUP_ROWS;
       i += warps) {
    const i64 g = i / DP_SAMPLE_GROUP_ROWS, start = dp_sample_group_start(g, groups, matrix_groups);
    const i64 r = start + i % DP_SAMPLE_GROUP_ROWS, shift = start - g * DP_SAMPLE_GROUP_ROWS;
    if (r >= a.rows) continue;
    const i64 b = i64(spmvjit_ldg(rp + r)) - base, o = off[i], len = off[i + 1] - o;
    for (i64 k = lane; k < len; k += SPMVJIT_WARP) {
      cols[o + k] = i64(spmvjit_ldg(ci + b + k)) - base - shift;
      vals[o + k] = spmvjit_ldg(va + b + k);
    }
  }
}
