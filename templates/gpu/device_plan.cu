// Device-side planning for CSR arrays already in device memory (engine/device_plan.cpp drives
// these kernels): validation and statistics without copying the matrix to the host, then the
// conversions the device can do (CSR copies, csr_adaptive's layout, SELL-C with sigma = 1).
// The input may be one-based: a.n[7] holds the index base everywhere.
// Every kernel is grid-stride: any grid is correct. spmvjit_dp_rows needs blocks of exactly
// SPMVJIT_DP_BLOCK threads, spmvjit_dp_scan one block of 1024; the others take any block size
// (the one-thread-per-window passes run in small blocks to spread over the multiprocessors).
#include "prelude.h"

#define SPMVJIT_DP_BLOCK 256
// Must match engine/formats/adaptive_layout.hpp (tests compare the layouts entry for entry).
#define SPMVJIT_ADAPTIVE_ROWS 1024
#define SPMVJIT_ADAPTIVE_S 2048
#define SPMVJIT_ADAPTIVE_WINDOW 4096

namespace dp {

typedef unsigned long long u64;
constexpr int kBlock = SPMVJIT_DP_BLOCK;
constexpr i64 kRows = SPMVJIT_ADAPTIVE_ROWS, kS = SPMVJIT_ADAPTIVE_S, kWindow = SPMVJIT_ADAPTIVE_WINDOW;
constexpr int kWidths = 7;  // slices / lanes of 2^0 .. 2^6
constexpr i64 kI64Max = 0x7fffffffffffffffLL;

// Slots of the statistics block (u64 words; must match engine/device_plan.cpp).
enum Slot {
  kErrRow = 0,   // first r with row_ptr[r + 1] < row_ptr[r] (initially ~0)
  kErrEnds = 1,  // 1 if row_ptr[0] != base or row_ptr[rows] != nnz + base
  kErrCol = 2,   // first k with a column outside [base, cols + base) (initially ~0)
  kRowMin = 3,   // initially ~0
  kRowMax = 4,
  kEmpty = 5,
  kLongRows = 6,
  kLongChunks = 7,
  kBlocks = 8,
  kSumSq = 9,      // double
  kWidthSum = 10,  // 7 slots
  kIdle = 17,      // 7 slots
  kRem = 24,       // 7 slots
  kHist = 31,      // 48 slots
  kSlots = 79
};

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
SPMVJIT_DEVICE void add(u64* stats, int slot, i64 v) {
  if (v) spmvjit_atomic_add_u64(stats + slot, u64(v));
}

// Greedy row blocks of one window (engine/formats/adaptive_layout.hpp::window): calls
// on_block(r) for each block start and on_long(r, len) for each row longer than kS.
template <class OnBlock, class OnLong>
SPMVJIT_DEVICE void adaptive_window(const I* rp, i64 r0, i64 r1, OnBlock&& on_block, OnLong&& on_long) {
  i64 start = r0, nnz = 0;
  if (r0 < r1) on_block(r0);
  i64 b = spmvjit_ldg(rp + r0);
  for (i64 r = r0; r < r1; ++r) {
    const i64 e = spmvjit_ldg(rp + r + 1), l = e - b;
    if (l > kS) {
      if (r > start) on_block(r);
      on_long(r, l, b);
      if (r + 1 < r1) on_block(r + 1);
      start = r + 1, nnz = 0;
    } else {
      if (r - start + 1 > kRows || nnz + l > kS) {
        on_block(r);
        start = r, nnz = 0;
      }
      nnz += l;
    }
    b = e;
  }
}

}  // namespace dp

// Validation of row_ptr and the row-length statistics, one thread per row.
// a[0] row_ptr, scratch: statistics block; n[7] base; a.rows / nnz in n[0].
extern "C" __global__ void __launch_bounds__(SPMVJIT_DP_BLOCK) spmvjit_dp_rows(const SpmvArgs a) {
  using namespace dp;
  const I* SPMVJIT_RESTRICT rp = (const I*)a.a[0];
  u64* stats = (u64*)a.scratch;
  const i64 rows = a.rows, base = a.n[7];
  SPMVJIT_SHARED unsigned hist[48];
  SPMVJIT_SHARED i64 warp_slice[kBlock / SPMVJIT_WARP];
  const int t = int(threadIdx.x), lane = spmvjit_lane(), warp = t / SPMVJIT_WARP;
  if (blockIdx.x == 0 && t == 0) {
    const i64 first = rp[0], last = rp[rows];
    if (first != base || last != a.n[0] + base) stats[kErrEnds] = 1;
  }
  for (int i = t; i < 48; i += kBlock) hist[i] = 0;
  i64 mn = kI64Max, mx = 0, empty = 0, longs = 0, chunks = 0;
  i64 widths[kWidths] = {}, idle[kWidths] = {}, rem[kWidths] = {};
  double sq = 0;
  i64 err = -1;
  spmvjit_sync_block();
  for (i64 r0 = i64(blockIdx.x) * kBlock; r0 < rows; r0 += i64(gridDim.x) * kBlock) {
    const i64 r = r0 + t;
    i64 len = 0;
    if (r < rows) {
      len = i64(spmvjit_ldg(rp + r + 1)) - i64(spmvjit_ldg(rp + r));
      if (len < 0 && err < 0) err = r;
      if (len < 0) len = 0;  // statistics of an invalid matrix are discarded
      mn = len < mn ? len : mn;
      mx = len > mx ? len : mx;
      empty += len == 0;
      sq += double(len) * double(len);
      if (len > kS) ++longs, chunks += (len + kS - 1) / kS;
      atomicAdd(&hist[len == 0 ? 0 : (64 - __clzll(len) < 47 ? 64 - __clzll(len) : 47)], 1u);
#pragma unroll
      for (int k = 0; k < kWidths; ++k) {
        const i64 mask = (i64(1) << k) - 1;
        rem[k] += len & mask;
        idle[k] += (-len) & mask;
      }
    }
    // Slice maxima over aligned groups of 2^k rows (r0 is a multiple of the block size).
    i64 m = len;
#pragma unroll
    for (int k = 0; k < 6; ++k) {
      if (k > 0) {
        const i64 o = spmvjit_shfl_xor(m, 1 << (k - 1));
        m = o > m ? o : m;
      }
      if ((lane & ((1 << k) - 1)) == 0 && r < rows) widths[k] += m;
    }
    {
      const i64 o = spmvjit_shfl_xor(m, 16);
      m = o > m ? o : m;  // max over the warp (32 rows)
    }
    if (lane == 0) warp_slice[warp] = m;
    spmvjit_sync_block();
    if (lane == 0 && (warp & 1) == 0 && r < rows) {
      const i64 o = warp_slice[warp + 1];
      widths[6] += o > m ? o : m;
    }
    spmvjit_sync_block();
  }
  if (err >= 0) spmvjit_atomic_min_u64(stats + kErrRow, u64(err));
  // Block totals: warp sums, then one atomic per warp.
  mn = warp_min(mn);
  mx = warp_max(mx);
  empty = warp_sum(empty);
  longs = warp_sum(longs);
  chunks = warp_sum(chunks);
  for (int d = SPMVJIT_WARP / 2; d > 0; d >>= 1) sq += spmvjit_shfl_down(sq, d);
#pragma unroll
  for (int k = 0; k < kWidths; ++k) {
    widths[k] = warp_sum(widths[k]);
    idle[k] = warp_sum(idle[k]);
    rem[k] = warp_sum(rem[k]);
  }
  if (lane == 0) {
    if (mn != kI64Max) spmvjit_atomic_min_u64(stats + kRowMin, u64(mn));
    spmvjit_atomic_max_u64(stats + kRowMax, u64(mx));
    add(stats, kEmpty, empty);
    add(stats, kLongRows, longs);
    add(stats, kLongChunks, chunks);
    if (sq != 0) spmvjit_atomic_add_f64((double*)(stats + kSumSq), sq);
    for (int k = 0; k < kWidths; ++k) {
      add(stats, kWidthSum + k, widths[k]);
      add(stats, kIdle + k, idle[k]);
      add(stats, kRem + k, rem[k]);
    }
  }
  spmvjit_sync_block();
  for (int i = t; i < 48; i += kBlock) add(stats, kHist + i, hist[i]);
}

// Column range check, one thread per entry. a[1] col_idx, scratch: statistics block; n[0] nnz.
extern "C" __global__ void __launch_bounds__(SPMVJIT_DP_BLOCK) spmvjit_dp_cols(const SpmvArgs a) {
  using namespace dp;
  const I* SPMVJIT_RESTRICT ci = (const I*)a.a[1];
  const i64 nnz = a.n[0], base = a.n[7];
  const u64 cols = u64(a.cols);
  i64 err = -1;
  for (i64 k = i64(blockIdx.x) * blockDim.x + threadIdx.x; k < nnz; k += i64(gridDim.x) * blockDim.x)
    if (u64(i64(spmvjit_ld_stream(ci + k)) - base) >= cols && err < 0) err = k;
  if (err >= 0) spmvjit_atomic_min_u64((u64*)a.scratch + kErrCol, u64(err));
}

// dst[i] = src[i] - n[7] for i < n[0], 0 for n[0] <= i < n[1]. a[0] src, a[1] dst (index type).
extern "C" __global__ void __launch_bounds__(SPMVJIT_DP_BLOCK) spmvjit_dp_copy_index(const SpmvArgs a) {
  const I* SPMVJIT_RESTRICT src = (const I*)a.a[0];
  I* SPMVJIT_RESTRICT dst = (I*)a.a[1];
  const i64 n = a.n[0], padded = a.n[1];
  const I base = I(a.n[7]);
  for (i64 i = i64(blockIdx.x) * blockDim.x + threadIdx.x; i < padded; i += i64(gridDim.x) * blockDim.x)
    dst[i] = i < n ? I(spmvjit_ld_stream(src + i) - base) : I(0);
}

// dst[i] = src[i] for i < n[0], 0 for n[0] <= i < n[1]. a[0] src, a[1] dst (value type).
extern "C" __global__ void __launch_bounds__(SPMVJIT_DP_BLOCK) spmvjit_dp_copy_values(const SpmvArgs a) {
  const V* SPMVJIT_RESTRICT src = (const V*)a.a[0];
  V* SPMVJIT_RESTRICT dst = (V*)a.a[1];
  const i64 n = a.n[0], padded = a.n[1];
  for (i64 i = i64(blockIdx.x) * blockDim.x + threadIdx.x; i < padded; i += i64(gridDim.x) * blockDim.x)
    dst[i] = i < n ? spmvjit_ld_stream(src + i) : V(0);
}

// Exclusive scan of the i64 array a[0] of n[0] entries in place, the total at [n[0]]. One block.
extern "C" __global__ void __launch_bounds__(1024) spmvjit_dp_scan(const SpmvArgs a) {
  i64* v = (i64*)a.a[0];
  const i64 n = a.n[0];
  SPMVJIT_SHARED i64 part[1024];
  const int t = int(threadIdx.x);
  const i64 per = (n + 1023) / 1024, b = t * per, e = b + per < n ? b + per : n;
  i64 s = 0;
  for (i64 i = b; i < e; ++i) s += v[i];
  part[t] = s;
  spmvjit_sync_block();
  for (int d = 1; d < 1024; d <<= 1) {  // inclusive Hillis-Steele scan of the parts
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
  if (t == 1023) v[n] = part[1023];
}

// csr_adaptive, pass 1: per window of kWindow rows, its row blocks (a[1][w]) and long-row chunks
// (a[2][w]); the block total also goes to the statistics. a[0] row_ptr; n[1] windows.
extern "C" __global__ void __launch_bounds__(SPMVJIT_DP_BLOCK) spmvjit_dp_adaptive_count(const SpmvArgs a) {
  using namespace dp;
  const I* SPMVJIT_RESTRICT rp = (const I*)a.a[0];
  i64* blocks = (i64*)a.a[1];
  i64* chunks = (i64*)a.a[2];
  i64 total = 0;
  for (i64 w = i64(blockIdx.x) * blockDim.x + threadIdx.x; w < a.n[1]; w += i64(gridDim.x) * blockDim.x) {
    const i64 r0 = w * kWindow, r1 = r0 + kWindow < a.rows ? r0 + kWindow : a.rows;
    i64 nb = 0, nc = 0;
    adaptive_window(
        rp, r0, r1, [&](i64) { ++nb; }, [&](i64, i64 len, i64) { nc += (len + kS - 1) / kS; });
    blocks[w] = nb;
    chunks[w] = nc;
    total += nb;
  }
  total = warp_sum(total);
  if (spmvjit_lane() == 0) add((u64*)a.scratch, kBlocks, total);
}

// csr_adaptive, pass 2: writes the layout at the scanned offsets. a[0] row_ptr, a[1] / a[2]
// block and chunk offsets per window (scanned, totals at [windows]), a[3] row_blocks, a[4]
// chunk_row, a[5] chunk_start, a[6] block_nnz (index type); n[0] nnz, n[1] windows; n[7] base.
extern "C" __global__ void __launch_bounds__(SPMVJIT_DP_BLOCK) spmvjit_dp_adaptive_write(const SpmvArgs a) {
  using namespace dp;
  const I* SPMVJIT_RESTRICT rp = (const I*)a.a[0];
  const i64* boff = (const i64*)a.a[1];
  const i64* coff = (const i64*)a.a[2];
  I* blocks = (I*)a.a[3];
  I* crow = (I*)a.a[4];
  I* cstart = (I*)a.a[5];
  I* bnnz = (I*)a.a[6];
  const i64 windows = a.n[1], base = a.n[7];
  const i64 id = i64(blockIdx.x) * blockDim.x + threadIdx.x;
  if (id == 0) blocks[boff[windows]] = I(a.rows), bnnz[boff[windows]] = I(a.n[0]);
  for (i64 w = id; w < windows; w += i64(gridDim.x) * blockDim.x) {
    const i64 r0 = w * kWindow, r1 = r0 + kWindow < a.rows ? r0 + kWindow : a.rows;
    i64 nb = boff[w], nc = coff[w];
    adaptive_window(
        rp, r0, r1,
        [&](i64 r) {
          bnnz[nb] = I(spmvjit_ldg(rp + r) - base);
          blocks[nb++] = I(r);
        },
        [&](i64 r, i64 len, i64 b) {
          for (i64 k = b - base; k < b - base + len; k += kS) crow[nc] = I(r), cstart[nc] = I(k), ++nc;
        });
  }
}

// SELL-C (sigma = 1), pass 1: slice sizes (C * longest row) into a[1][s] and their sums per
// window of kWindow rows into a[2][w]. a[0] row_ptr; n[0] C, n[1] windows, n[2] slices.
extern "C" __global__ void __launch_bounds__(SPMVJIT_DP_BLOCK) spmvjit_dp_sell_sizes(const SpmvArgs a) {
  using namespace dp;
  const I* SPMVJIT_RESTRICT rp = (const I*)a.a[0];
  i64* size = (i64*)a.a[1];
  i64* wsum = (i64*)a.a[2];
  const i64 c = a.n[0], windows = a.n[1], slices = a.n[2];
  for (i64 w = i64(blockIdx.x) * blockDim.x + threadIdx.x; w < windows; w += i64(gridDim.x) * blockDim.x) {
    const i64 s0 = w * (kWindow / c), s1 = s0 + kWindow / c < slices ? s0 + kWindow / c : slices;
    i64 sum = 0;
    for (i64 s = s0; s < s1; ++s) {
      const i64 e = (s + 1) * c < a.rows ? (s + 1) * c : a.rows;
      i64 width = 0, b = spmvjit_ldg(rp + s * c);
      for (i64 r = s * c; r < e; ++r) {
        const i64 next = spmvjit_ldg(rp + r + 1);
        width = next - b > width ? next - b : width;
        b = next;
      }
      size[s] = width * c;
      sum += width * c;
    }
    wsum[w] = sum;
  }
}

// SELL-C, pass 2: slice sizes a[1] -> slice_ptr offsets in place, from the scanned window sums
// a[2] (total at [windows]), the total at [slices]. n[0] C, n[1] windows, n[2] slices.
extern "C" __global__ void __launch_bounds__(SPMVJIT_DP_BLOCK) spmvjit_dp_sell_ptr(const SpmvArgs a) {
  using namespace dp;
  i64* sp = (i64*)a.a[1];
  const i64* woff = (const i64*)a.a[2];
  const i64 c = a.n[0], windows = a.n[1], slices = a.n[2];
  const i64 id = i64(blockIdx.x) * blockDim.x + threadIdx.x;
  if (id == 0) sp[slices] = woff[windows];
  for (i64 w = id; w < windows; w += i64(gridDim.x) * blockDim.x) {
    const i64 s0 = w * (kWindow / c), s1 = s0 + kWindow / c < slices ? s0 + kWindow / c : slices;
    i64 run = woff[w];
    for (i64 s = s0; s < s1; ++s) {
      const i64 x = sp[s];
      sp[s] = run;
      run += x;
    }
  }
}

// SELL-C, pass 3: one thread per row position fills its lane of the slice, column-major, padding
// with the row's last column and zeros. a[0] row_ptr, a[1] col_idx, a[2] values (input),
// a[3] slice_ptr, a[4] out col_idx, a[5] out values; n[0] C, n[2] slices; n[7] base.
extern "C" __global__ void __launch_bounds__(SPMVJIT_DP_BLOCK) spmvjit_dp_sell_fill(const SpmvArgs a) {
  using namespace dp;
  const I* SPMVJIT_RESTRICT rp = (const I*)a.a[0];
  const I* SPMVJIT_RESTRICT ci = (const I*)a.a[1];
  const V* SPMVJIT_RESTRICT va = (const V*)a.a[2];
  const i64* SPMVJIT_RESTRICT sp = (const i64*)a.a[3];
  I* col = (I*)a.a[4];
  V* val = (V*)a.a[5];
  const i64 c = a.n[0], slices = a.n[2], base = a.n[7];
  for (i64 pos = i64(blockIdx.x) * blockDim.x + threadIdx.x; pos < slices * c;
       pos += i64(gridDim.x) * blockDim.x) {
    const i64 s = pos / c, lane = pos - s * c;
    const i64 p0 = spmvjit_ldg(sp + s), width = (spmvjit_ldg(sp + s + 1) - p0) / c;
    i64 b = 0, len = 0;
    if (pos < a.rows) b = i64(spmvjit_ldg(rp + pos)) - base, len = i64(spmvjit_ldg(rp + pos + 1)) - base - b;
    const I pad = len ? I(spmvjit_ldg(ci + b + len - 1) - I(base)) : I(0);
    for (i64 j = 0; j < width; ++j) {
      const i64 slot = p0 + j * c + lane;
      col[slot] = j < len ? I(spmvjit_ldg(ci + b + j) - I(base)) : pad;
      val[slot] = j < len ? spmvjit_ldg(va + b + j) : V(0);
    }
  }
}
