// sell_block's device build (engine/formats/sell_block.cpp, convert_device): each row's blocks
// (sell_block_cut, the host's greedy rule) counted by one thread per row, slice widths summed per
// window of SELL_BLOCK_BUILD_WINDOW rows, an exclusive scan of the window sums, slice offsets, then
// one thread per row position fills its lane. Rows with unsorted columns are walked in the order
// spmvjit_build_sort_rows gives them (the host's stable sort by column), built only when there is
// such a row. Grid-stride: any grid works.
#include "../contract/device_plan.h"
#include "../contract/sell_block.h"
#include "prelude.h"

// The i64 work array: block counts by row, then the per-window sums (templates/contract/sell_block.h).
SPMVJIT_DEVICE i64* sbb_window_sums(const SpmvArgs& a, int which) {
  return (i64*)a.a[SELL_BLOCK_BUILD_WORK] + a.rows + i64(which) * (a.n[SELL_BLOCK_BUILD_N_WINDOWS] + 1);
}

// Position in col_idx of row entry k (row starting at b0) in column order.
SPMVJIT_DEVICE i64 sbb_entry(const I* order, i64 b0, i64 k) {
  return order ? i64(spmvjit_ldg(order + b0 + k)) : b0 + k;
}

// Entry p goes before entry q in the host's stable sort by column.
SPMVJIT_DEVICE bool sbb_before(const I* SPMVJIT_RESTRICT ci, i64 p, i64 q) {
  const I cp = spmvjit_ldg(ci + p), cq = spmvjit_ldg(ci + q);
  return cp < cq || (cp == cq && p < q);
}

// Pass 1: each row's block count into work[r]; -1 for a row whose columns are unsorted while
// there is no order (they are counted again once it is built).
extern "C" __global__ void spmvjit_build_row_blocks(const SpmvArgs a) {
  const I* SPMVJIT_RESTRICT rp = (const I*)a.a[SELL_BLOCK_BUILD_ROW_PTR];
  const I* SPMVJIT_RESTRICT ci = (const I*)a.a[SELL_BLOCK_BUILD_COL_IDX_IN];
  const I* SPMVJIT_RESTRICT order = (const I*)a.a[SELL_BLOCK_BUILD_ORDER];
  i64* blocks = (i64*)a.a[SELL_BLOCK_BUILD_WORK];
  const i64 b = a.n[SELL_BLOCK_BUILD_N_B], base = a.n[DP_N_BASE];
  for (i64 r = i64(blockIdx.x) * blockDim.x + threadIdx.x; r < a.rows; r += i64(gridDim.x) * blockDim.x) {
    const i64 b0 = i64(spmvjit_ldg(rp + r)) - base, len = i64(spmvjit_ldg(rp + r + 1)) - base - b0;
    bool sorted = true;
    for (i64 k = 1; !order && sorted && k < len; ++k)
      sorted = spmvjit_ldg(ci + b0 + k - 1) <= spmvjit_ldg(ci + b0 + k);
    if (!sorted) {
      blocks[r] = -1;
      continue;
    }
    auto col = [&](long long k) { return i64(spmvjit_ldg(ci + sbb_entry(order, b0, k))) - base; };
    blocks[r] = sell_block_cut(len, a.cols, b, col, [](long long, long long, long long) {});
  }
}

// Pass 2: per window, its slices' sizes (C times the most blocks of a row) into slice_ptr[s] and
// the window's sums of stored blocks, blocks and unsorted rows.
extern "C" __global__ void spmvjit_build_sizes(const SpmvArgs a) {
  const i64* blocks = (const i64*)a.a[SELL_BLOCK_BUILD_WORK];
  i64* size = (i64*)a.a[SELL_BLOCK_BUILD_SLICE_PTR];
  i64* stored_sum = sbb_window_sums(a, SELL_BLOCK_WORK_STORED);
  i64* blocks_sum = sbb_window_sums(a, SELL_BLOCK_WORK_BLOCKS);
  i64* unsorted_sum = sbb_window_sums(a, SELL_BLOCK_WORK_UNSORTED);
  const i64 c = a.n[SELL_BLOCK_BUILD_N_C], windows = a.n[SELL_BLOCK_BUILD_N_WINDOWS];
  const i64 slices = a.n[SELL_BLOCK_BUILD_N_SLICES], per = SELL_BLOCK_BUILD_WINDOW / c;
  for (i64 w = i64(blockIdx.x) * blockDim.x + threadIdx.x; w < windows; w += i64(gridDim.x) * blockDim.x) {
    const i64 s0 = w * per, s1 = s0 + per < slices ? s0 + per : slices;
    i64 stored = 0, total = 0, unsorted = 0;
    for (i64 s = s0; s < s1; ++s) {
      const i64 e = (s + 1) * c < a.rows ? (s + 1) * c : a.rows;
      i64 width = 0;
      for (i64 r = s * c; r < e; ++r) {
        const i64 nb = blocks[r];
        if (nb < 0) {
          ++unsorted;
        } else {
          total += nb;
          width = nb > width ? nb : width;
        }
      }
      size[s] = width * c;
      stored += width * c;
    }
    stored_sum[w] = stored;
    blocks_sum[w] = total;
    unsorted_sum[w] = unsorted;
  }
}

// Sift-down of a binary max-heap (by sbb_before) of n entry positions.
SPMVJIT_DEVICE void sbb_sift(I* heap, const I* SPMVJIT_RESTRICT ci, i64 root, i64 n) {
  for (;;) {
    i64 child = 2 * root + 1;
    if (child >= n) return;
    if (child + 1 < n && sbb_before(ci, heap[child], heap[child + 1])) ++child;
    if (!sbb_before(ci, heap[root], heap[child])) return;
    const I t = heap[root];
    heap[root] = heap[child];
    heap[child] = t;
    root = child;
  }
}

// Only when some row's columns are unsorted: order[b0 .. b0 + len) = the row's entry positions by
// (column, position). Sorted rows (work[r] >= 0 from pass 1) keep theirs; the others are heap
// sorted by that key, which is unique, so the result is the host's stable sort.
extern "C" __global__ void spmvjit_build_sort_rows(const SpmvArgs a) {
  const I* SPMVJIT_RESTRICT rp = (const I*)a.a[SELL_BLOCK_BUILD_ROW_PTR];
  const I* SPMVJIT_RESTRICT ci = (const I*)a.a[SELL_BLOCK_BUILD_COL_IDX_IN];
  I* order = (I*)a.a[SELL_BLOCK_BUILD_ORDER];
  const i64* blocks = (const i64*)a.a[SELL_BLOCK_BUILD_WORK];
  const i64 base = a.n[DP_N_BASE];
  for (i64 r = i64(blockIdx.x) * blockDim.x + threadIdx.x; r < a.rows; r += i64(gridDim.x) * blockDim.x) {
    const i64 b0 = i64(spmvjit_ldg(rp + r)) - base, len = i64(spmvjit_ldg(rp + r + 1)) - base - b0;
    I* heap = order + b0;
    for (i64 k = 0; k < len; ++k) heap[k] = I(b0 + k);
    if (blocks[r] >= 0) continue;
    for (i64 k = len / 2 - 1; k >= 0; --k) sbb_sift(heap, ci, k, len);
    for (i64 end = len - 1; end > 0; --end) {
      const I t = heap[0];
      heap[0] = heap[end];
      heap[end] = t;
      sbb_sift(heap, ci, 0, end);
    }
  }
}

// Pass 3: slice sizes -> slice_ptr offsets in place, from the scanned window sums of stored
// blocks (total at [windows]); the total also at slice_ptr[slices].
extern "C" __global__ void spmvjit_build_offsets(const SpmvArgs a) {
  i64* sp = (i64*)a.a[SELL_BLOCK_BUILD_SLICE_PTR];
  const i64* woff = sbb_window_sums(a, SELL_BLOCK_WORK_STORED);
  const i64 c = a.n[SELL_BLOCK_BUILD_N_C], windows = a.n[SELL_BLOCK_BUILD_N_WINDOWS];
  const i64 slices = a.n[SELL_BLOCK_BUILD_N_SLICES], per = SELL_BLOCK_BUILD_WINDOW / c;
  const i64 id = i64(blockIdx.x) * blockDim.x + threadIdx.x;
  if (id == 0) sp[slices] = woff[windows];
  for (i64 w = id; w < windows; w += i64(gridDim.x) * blockDim.x) {
    const i64 s0 = w * per, s1 = s0 + per < slices ? s0 + per : slices;
    i64 run = woff[w];
    for (i64 s = s0; s < s1; ++s) {
      const i64 x = sp[s];
      sp[s] = run;
      run += x;
    }
  }
}

// Pass 4: one thread per row position fills its lane of the slice: block j's column at
// slice_ptr[s] + j*C + i, its B values at B*slice_ptr[s] + (j*B + b)*C + i (zeros where the block
// has no entry); padding blocks repeat the row's last block column with zero values.
extern "C" __global__ void spmvjit_build_fill(const SpmvArgs a) {
  const I* SPMVJIT_RESTRICT rp = (const I*)a.a[SELL_BLOCK_BUILD_ROW_PTR];
  const I* SPMVJIT_RESTRICT ci = (const I*)a.a[SELL_BLOCK_BUILD_COL_IDX_IN];
  const V* SPMVJIT_RESTRICT va = (const V*)a.a[SELL_BLOCK_BUILD_VALUES_IN];
  const I* SPMVJIT_RESTRICT order = (const I*)a.a[SELL_BLOCK_BUILD_ORDER];
  const i64* SPMVJIT_RESTRICT sp = (const i64*)a.a[SELL_BLOCK_BUILD_SLICE_PTR];
  I* bcol = (I*)a.a[SELL_BLOCK_BUILD_BLOCK_COL];
  V* val = (V*)a.a[SELL_BLOCK_BUILD_VALUES];
  const i64 c = a.n[SELL_BLOCK_BUILD_N_C], b = a.n[SELL_BLOCK_BUILD_N_B];
  const i64 slices = a.n[SELL_BLOCK_BUILD_N_SLICES], base = a.n[DP_N_BASE];
  for (i64 pos = i64(blockIdx.x) * blockDim.x + threadIdx.x; pos < slices * c;
       pos += i64(gridDim.x) * blockDim.x) {
    const i64 s = pos / c, lane = pos - s * c;
    const i64 p0 = spmvjit_ldg(sp + s), width = (spmvjit_ldg(sp + s + 1) - p0) / c;
    i64 j = 0, last = 0;
    if (pos < a.rows) {
      const i64 b0 = i64(spmvjit_ldg(rp + pos)) - base, len = i64(spmvjit_ldg(rp + pos + 1)) - base - b0;
      auto col = [&](long long k) { return i64(spmvjit_ldg(ci + sbb_entry(order, b0, k))) - base; };
      sell_block_cut(len, a.cols, b, col, [&](long long start, long long first, long long end) {
        bcol[p0 + j * c + lane] = I(start);
        V* v = val + b * p0 + j * c * b + lane;
        for (i64 bb = 0; bb < b; ++bb) v[bb * c] = V(0);
        for (i64 k = first; k < end; ++k) v[(col(k) - start) * c] = spmvjit_ldg(va + sbb_entry(order, b0, k));
        last = start;
        ++j;
      });
    }
    for (; j < width; ++j) {
      bcol[p0 + j * c + lane] = I(last);
      for (i64 bb = 0; bb < b; ++bb) val[b * p0 + (j * b + bb) * c + lane] = V(0);
    }
  }
}

#ifndef SPMVJIT_EMULATED  // a block's warps stage entries together: the CPU emulation runs threads one by one
// Pass 1 staged: a warp per SPMVJIT_WARP consecutive rows copies their entries, contiguous in
// the CSR, into shared memory with coalesced loads, and each lane walks its row there. A thread
// per row reading its own row from global memory fetched a 32-byte sector for each 4- or 8-byte
// entry: 0.22 ms on varband:300000's 19M entries, 0.095 staged (H200). Groups with more entries
// than the stage holds, and rows walked through the order array, read global memory as the
// plain pass does. The fill stays a thread per row: staged (columns and values, 48 KB a block of
// two warps, 8 warps a multiprocessor) it took 0.40 ms against the plain pass's 0.27.
enum { SBB_STAGE_WARPS = SELL_BLOCK_BUILD_STAGE_WARPS, SBB_STAGE_BYTES = 16384 };  // stage bytes per warp
enum { SBB_THREADS = SBB_STAGE_WARPS * SPMVJIT_WARP };  // one name: HIP's __launch_bounds__ pastes it

// The group of SPMVJIT_WARP rows from r0: its first entry and entry count.
SPMVJIT_DEVICE void sbb_group(const SpmvArgs& a, i64 r0, i64* e0, i64* n) {
  const I* SPMVJIT_RESTRICT rp = (const I*)a.a[SELL_BLOCK_BUILD_ROW_PTR];
  const i64 r1 = r0 + SPMVJIT_WARP < a.rows ? r0 + SPMVJIT_WARP : a.rows, base = a.n[DP_N_BASE];
  *e0 = i64(spmvjit_ldg(rp + r0)) - base;
  *n = i64(spmvjit_ldg(rp + r1)) - base - *e0;
}

// clang-format off: one line, as the HIP compile test reads kernel declarations
extern "C" __global__ void __launch_bounds__(SBB_THREADS) spmvjit_build_count_staged(const SpmvArgs a) {
  // clang-format on
  constexpr i64 cap = SBB_STAGE_BYTES / sizeof(I);
  SPMVJIT_SHARED I stage[SBB_STAGE_WARPS][cap];
  const I* SPMVJIT_RESTRICT rp = (const I*)a.a[SELL_BLOCK_BUILD_ROW_PTR];
  const I* SPMVJIT_RESTRICT ci = (const I*)a.a[SELL_BLOCK_BUILD_COL_IDX_IN];
  const I* SPMVJIT_RESTRICT order = (const I*)a.a[SELL_BLOCK_BUILD_ORDER];
  i64* blocks = (i64*)a.a[SELL_BLOCK_BUILD_WORK];
  const i64 b = a.n[SELL_BLOCK_BUILD_N_B], base = a.n[DP_N_BASE];
  const int warp = int(threadIdx.x) / SPMVJIT_WARP, lane = spmvjit_lane();
  const i64 groups = (a.rows + SPMVJIT_WARP - 1) / SPMVJIT_WARP;
  I* sh = stage[warp];
  // Every warp of a block takes as many turns (the block synchronizes in each).
  for (i64 g0 = i64(blockIdx.x) * SBB_STAGE_WARPS; g0 < groups; g0 += i64(gridDim.x) * SBB_STAGE_WARPS) {
    const i64 grp = g0 + warp, r = grp * SPMVJIT_WARP + lane;
    i64 e0 = 0, n = 0;
    if (grp < groups) sbb_group(a, grp * SPMVJIT_WARP, &e0, &n);
    const bool staged = grp < groups && !order && n <= cap;
    if (staged)
      for (i64 k = lane; k < n; k += SPMVJIT_WARP) sh[k] = spmvjit_ldg(ci + e0 + k);
    spmvjit_sync_block();
    if (grp < groups && r < a.rows) {
      const i64 b0 = i64(spmvjit_ldg(rp + r)) - base, len = i64(spmvjit_ldg(rp + r + 1)) - base - b0;
      const I* row = staged ? sh + (b0 - e0) : ci + b0;
      bool sorted = true;
      for (i64 k = 1; !order && sorted && k < len; ++k) sorted = row[k - 1] <= row[k];
      if (!sorted) {
        blocks[r] = -1;
      } else if (staged) {
        blocks[r] = sell_block_cut(
            len, a.cols, b, [&](long long k) { return i64(row[k]) - base; },
            [](long long, long long, long long) {});
      } else {
        auto col = [&](long long k) { return i64(spmvjit_ldg(ci + sbb_entry(order, b0, k))) - base; };
        blocks[r] = sell_block_cut(len, a.cols, b, col, [](long long, long long, long long) {});
      }
    }
    spmvjit_sync_block();  // the stage is overwritten next turn
  }
}
#endif
