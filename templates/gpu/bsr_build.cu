// bsr's device build (engine/formats/bsr.cpp, convert_device): one thread per block row walks
// its R rows' entries in column order as the host's walk_blocks does (a repeated column opens a
// repeated block), counting blocks; after the scan of the counts, the same walk writes them.
// Rows out of column order are first sorted into an order array, one thread per row (stable, as
// the host's copies). On a device the _warp kernels give each block row a warp (a block of one
// warp), which takes the block rows whose rows all ascend strictly and hold at most
// BSR_WARP_BLOCKS blocks together, and leaves the others to its first lane's walk. Block rows
// without fill whose rows share their columns (regular: most block FEM matrices) skip both: a
// pass over the rows flags and counts them, and one in slot order writes them. Grid-stride: any
// grid works.
#include "../contract/bsr.h"
#include "../contract/device_plan.h"
#include "heap_sort.cuh"
#include "prelude.h"
#include "value_gather.cuh"

namespace bb {

// The rows of one block row; entry p of row i is at ci[at(i, p)].
struct BlockRow {
  const I* ci;
  const I* order;  // rows out of column order: their entries' positions, sorted (else unused)
  i64 base, n;
  i64 beg[BSR_MAX_SIDE], len[BSR_MAX_SIDE];
  bool in_order[BSR_MAX_SIDE];

  __device__ __forceinline__ i64 at(i64 i, i64 p) const {
    return in_order[i] ? beg[i] + p : i64(order[beg[i] + p]);
  }
  __device__ __forceinline__ i64 col(i64 k) const { return i64(spmvjit_ldg(ci + k)) - base; }
};

SPMVJIT_DEVICE bool row_in_order(const I* ci, i64 b, i64 e) {
  for (i64 k = b + 1; k < e; ++k)
    if (spmvjit_ldg(ci + k) < spmvjit_ldg(ci + k - 1)) return false;
  return true;
}

// Block row b of R rows; false when a row is out of order and there is no order array yet.
SPMVJIT_DEVICE bool load(const SpmvArgs& a, i64 b, BlockRow& w) {
  const I* rp = (const I*)a.a[BSR_BUILD_ROW_PTR];
  const i64 r = a.n[BSR_BUILD_N_R], r0 = b * r;
  w.ci = (const I*)a.a[BSR_BUILD_COL_IDX_IN];
  w.order = (const I*)a.a[BSR_BUILD_ORDER];
  w.base = a.n[DP_N_BASE];
  w.n = r0 + r < a.rows ? r : a.rows - r0;
  bool ok = true;
  for (i64 i = 0; i < w.n; ++i) {
    w.beg[i] = i64(spmvjit_ldg(rp + r0 + i)) - w.base;
    w.len[i] = i64(spmvjit_ldg(rp + r0 + i + 1)) - w.base - w.beg[i];
    w.in_order[i] = row_in_order(w.ci, w.beg[i], w.beg[i] + w.len[i]);
    ok = ok && (w.in_order[i] || w.order);
  }
  return ok;
}

// The host's walk_blocks: blocks in ascending block column; entry(block, i, j, k) for entry k
// (row i, column j within the block), block(block, block_col) once per block. Returns the blocks.
template <class Entry, class Block>
SPMVJIT_DEVICE i64 walk(const BlockRow& w, i64 c, Entry&& entry, Block&& block) {
  i64 cur[BSR_MAX_SIDE];
  for (i64 i = 0; i < w.n; ++i) cur[i] = 0;
  for (i64 nb = 0;;) {
    i64 bc = -1;
    for (i64 i = 0; i < w.n; ++i)
      if (cur[i] < w.len[i]) {
        const i64 x = w.col(w.at(i, cur[i])) / c;
        bc = bc < 0 || x < bc ? x : bc;
      }
    if (bc < 0) return nb;
    i64 copies = 1;
    for (i64 i = 0; i < w.n; ++i) {
      i64 p = cur[i], dup = 0, prev = -1;
      for (; p < w.len[i]; ++p) {
        const i64 k = w.at(i, p), col = w.col(k);
        if (col / c != bc) break;
        dup = p > cur[i] && col == prev ? dup + 1 : 0;
        copies = dup + 1 > copies ? dup + 1 : copies;
        entry(nb + dup, i, col - bc * c, k);
        prev = col;
      }
      cur[i] = p;
    }
    for (i64 o = 0; o < copies; ++o) block(nb + o, bc);
    nb += copies;
  }
}

// Whether entry x sorts before entry y: by column, then position (a stable sort).
struct ByColumn {
  const I* ci;
  __device__ __forceinline__ bool operator()(I x, I y) const {
    const I cx = spmvjit_ldg(ci + x), cy = spmvjit_ldg(ci + y);
    return cx < cy || (cx == cy && x < y);
  }
};

}  // namespace bb

namespace bb {

// The regular flags after the counts (templates/contract/bsr.h).
SPMVJIT_DEVICE i64* regular_flags(const SpmvArgs& a) {
  return (i64*)a.a[BSR_BUILD_COUNTS] + a.n[BSR_BUILD_N_BLOCK_ROWS] + 1;
}
SPMVJIT_DEVICE bool regular(const SpmvArgs& a, i64 b) { return regular_flags(a)[b] != 0; }

}  // namespace bb

// Pass 0 (regular block rows), a thread per block row: whole block rows whose R rows are all as
// long, a multiple of C, are flagged regular and counted L / C blocks (the next pass clears the
// flags their entries disprove; pass 1 then counts those block rows itself).
extern "C" __global__ void spmvjit_build_regular_rows(const SpmvArgs a) {
  const I* rp = (const I*)a.a[BSR_BUILD_ROW_PTR];
  i64* counts = (i64*)a.a[BSR_BUILD_COUNTS];
  i64* flags = bb::regular_flags(a);
  const i64 r = a.n[BSR_BUILD_N_R], c = a.n[BSR_BUILD_N_C], block_rows = a.n[BSR_BUILD_N_BLOCK_ROWS];
  for (i64 b = i64(blockIdx.x) * blockDim.x + threadIdx.x; b < block_rows; b += i64(gridDim.x) * blockDim.x) {
    const i64 r0 = b * r;
    bool ok = r0 + r <= a.rows;  // the last block row's rows past the matrix are fill
    const i64 len = ok ? i64(spmvjit_ldg(rp + r0 + 1)) - i64(spmvjit_ldg(rp + r0)) : 0;
    ok = ok && len % c == 0;
    for (i64 i = 1; ok && i < r; ++i)
      ok = i64(spmvjit_ldg(rp + r0 + i + 1)) - i64(spmvjit_ldg(rp + r0 + i)) == len;
    flags[b] = ok ? 1 : 0;
    if (ok) counts[b] = len / c;
  }
}

// Pass 0, 2^n[BSR_BUILD_N_LANES_LOG2] threads per row of a flagged block row: its first row's
// columns must run in aligned runs of C consecutive columns, strictly ascending, and every other
// row's must be the first row's; any entry that is not clears the block row's flag.
extern "C" __global__ void spmvjit_build_regular_entries(const SpmvArgs a) {
  const I* rp = (const I*)a.a[BSR_BUILD_ROW_PTR];
  const I* ci = (const I*)a.a[BSR_BUILD_COL_IDX_IN];
  i64* flags = bb::regular_flags(a);
  const i64 r = a.n[BSR_BUILD_N_R], c = a.n[BSR_BUILD_N_C], shift = a.n[BSR_BUILD_N_LANES_LOG2];
  const i64 lanes = i64(1) << shift, items = a.rows << shift, base = a.n[DP_N_BASE];
  for (i64 p = i64(blockIdx.x) * blockDim.x + threadIdx.x; p < items; p += i64(gridDim.x) * blockDim.x) {
    const i64 row = p >> shift, lane = p & (lanes - 1), b = row / r, r0 = b * r;
    // The flag and the row's bounds loaded together (the flag first left three waits in a row).
    const i64 flag = flags[b];
    const i64 beg = i64(spmvjit_ldg(rp + row)) - base, len = i64(spmvjit_ldg(rp + row + 1)) - base - beg;
    const i64 first = i64(spmvjit_ldg(rp + r0)) - base;  // the block row's first row
    if (!flag) continue;
    // BSR_BUILD_BATCH entries a thread at a time: their loads first, then their checks.
    bool ok = true;
    for (i64 q0 = lane; ok && q0 < len; q0 += BSR_BUILD_BATCH * lanes) {
      I col[BSR_BUILD_BATCH], ref[BSR_BUILD_BATCH];
#pragma unroll
      for (int u = 0; u < BSR_BUILD_BATCH; ++u) {
        const i64 q = q0 + u * lanes < len ? q0 + u * lanes : len - 1;
        col[u] = spmvjit_ldg(ci + beg + q);
        // Another row: the first row's entry q; the first row: the entry before (q > 0).
        ref[u] = row != r0 ? spmvjit_ldg(ci + first + q) : q > 0 ? spmvjit_ldg(ci + beg + q - 1) : I(0);
      }
#pragma unroll
      for (int u = 0; u < BSR_BUILD_BATCH; ++u) {
        const i64 q = q0 + u * lanes;
        if (q >= len) continue;
        const i64 col_u = i64(col[u]) - base, ref_u = i64(ref[u]) - base, j = q % c;
        if (row != r0)
          ok = ok && col_u == ref_u;
        else if (j == 0)
          ok = ok && col_u % c == 0 && (q == 0 || col_u > ref_u);
        else
          ok = ok && col_u == ref_u + 1;
      }
    }
    if (!ok) flags[b] = 0;  // every writer writes the same
  }
}

// Pass 2 for regular block rows, BSR_BUILD_LANES threads each, in slot order: block_ptr, the
// block columns (each run's first column / C) and the values (slot t of block k, row i, column j
// is entry k * C + j of row i; rows lie one after another in the CSR, L = nb * C long).
extern "C" __global__ void spmvjit_build_write_regular(const SpmvArgs a) {
  const I* rp = (const I*)a.a[BSR_BUILD_ROW_PTR];
  const I* ci = (const I*)a.a[BSR_BUILD_COL_IDX_IN];
  const V* SPMVJIT_RESTRICT va = (const V*)a.a[BSR_BUILD_VALUES_IN];
  const i64* counts = (const i64*)a.a[BSR_BUILD_COUNTS];
  const i64* flags = bb::regular_flags(a);
  I* bp = (I*)a.a[BSR_BUILD_BLOCK_PTR];
  I* bcol = (I*)a.a[BSR_BUILD_BLOCK_COL];
  V* val = (V*)a.a[BSR_BUILD_VALUES];
  const i64 r = a.n[BSR_BUILD_N_R], c = a.n[BSR_BUILD_N_C], rc = r * c, base = a.n[DP_N_BASE];
  const i64 items = a.n[BSR_BUILD_N_BLOCK_ROWS] * BSR_BUILD_LANES;
  for (i64 p = i64(blockIdx.x) * blockDim.x + threadIdx.x; p < items; p += i64(gridDim.x) * blockDim.x) {
    const i64 b = p / BSR_BUILD_LANES, lane = p - b * BSR_BUILD_LANES;
    if (!flags[b]) continue;
    const i64 first = counts[b], nb = counts[b + 1] - first, len = nb * c;
    const i64 p0 = i64(spmvjit_ldg(rp + b * r)) - base;
    if (lane == 0) bp[b] = I(first);
    for (i64 k = lane; k < nb; k += BSR_BUILD_LANES)
      bcol[first + k] = I((i64(spmvjit_ldg(ci + p0 + k * c)) - base) / c);
    V* out = val + first * rc;
    const i64 slots = nb * rc;
    // BSR_BUILD_BATCH slots a thread at a time, their loads first. 32-bit divisions where the
    // block row allows: a 64-bit one is a long instruction sequence.
    const bool narrow = slots < 0x7fffffffLL;
    const unsigned urc = unsigned(rc), uc = unsigned(c);
    for (i64 t0 = lane; t0 < slots; t0 += BSR_BUILD_BATCH * BSR_BUILD_LANES) {
      V v[BSR_BUILD_BATCH];
#pragma unroll
      for (int u = 0; u < BSR_BUILD_BATCH; ++u) {
        const i64 t = t0 + u * BSR_BUILD_LANES < slots ? t0 + u * BSR_BUILD_LANES : slots - 1;
        i64 blk, i, j;
        if (narrow) {
          const unsigned ub = unsigned(t) / urc, w = unsigned(t) - ub * urc, ui = w / uc;
          blk = ub, i = ui, j = w - ui * uc;
        } else {
          blk = t / rc;
          const i64 w = t - blk * rc;
          i = w / c, j = w - i * c;
        }
        v[u] = spmvjit_ldg(va + p0 + i * len + blk * c + j);
      }
#pragma unroll
      for (int u = 0; u < BSR_BUILD_BATCH; ++u)
        if (t0 + u * BSR_BUILD_LANES < slots) out[t0 + u * BSR_BUILD_LANES] = v[u];
    }
  }
}

// Pass 1: blocks of each block row into counts[b] (regular block rows are counted already).
// Without the order array, a block row with a row out of column order is marked (counts[b] = -1)
// and counted in counts[block_rows]; the launch with the order array then counts only the marked
// block rows.
namespace bb {

// Pass 1 for block row b by one thread.
SPMVJIT_DEVICE void count_walk(const SpmvArgs& a, i64 b) {
  i64* counts = (i64*)a.a[BSR_BUILD_COUNTS];
  BlockRow w;
  if (!load(a, b, w)) {
    counts[b] = -1;
    spmvjit_atomic_add_u64((unsigned long long*)(counts + a.n[BSR_BUILD_N_BLOCK_ROWS]), 1ull);
    return;
  }
  counts[b] = walk(
      w, a.n[BSR_BUILD_N_C], [](i64, i64, i64, i64) {}, [](i64, i64) {});
}

// Pass 2 for block row b by one thread.
SPMVJIT_DEVICE void write_walk(const SpmvArgs& a, i64 b) {
  const i64* counts = (const i64*)a.a[BSR_BUILD_COUNTS];
  const V* SPMVJIT_RESTRICT va = (const V*)a.a[BSR_BUILD_VALUES_IN];
  I* bcol = (I*)a.a[BSR_BUILD_BLOCK_COL];
  V* val = (V*)a.a[BSR_BUILD_VALUES];
  const i64 c = a.n[BSR_BUILD_N_C], rc = a.n[BSR_BUILD_N_R] * c, first = counts[b];
  ((I*)a.a[BSR_BUILD_BLOCK_PTR])[b] = I(first);
  for (i64 k = first * rc; k < counts[b + 1] * rc; ++k) val[k] = V(0);
  BlockRow w;
  load(a, b, w);
  walk(
      w, c, [&](i64 blk, i64 i, i64 j, i64 k) { val[(first + blk) * rc + i * c + j] = spmvjit_ldg(va + k); },
      [&](i64 blk, i64 col) { bcol[first + blk] = I(col); });
}

}  // namespace bb

extern "C" __global__ void spmvjit_build_count(const SpmvArgs a) {
  const i64* counts = (const i64*)a.a[BSR_BUILD_COUNTS];
  const bool ordered = a.a[BSR_BUILD_ORDER] != 0;
  const i64 block_rows = a.n[BSR_BUILD_N_BLOCK_ROWS];
  for (i64 b = i64(blockIdx.x) * blockDim.x + threadIdx.x; b < block_rows; b += i64(gridDim.x) * blockDim.x)
    if ((!ordered || counts[b] < 0) && !bb::regular(a, b)) bb::count_walk(a, b);
}

// The order array: each row out of column order gets its entries' positions sorted by column
// (heap sort on (column, position): the host's stable sort). One thread per row.
extern "C" __global__ void spmvjit_build_order(const SpmvArgs a) {
  const I* rp = (const I*)a.a[BSR_BUILD_ROW_PTR];
  const I* ci = (const I*)a.a[BSR_BUILD_COL_IDX_IN];
  I* order = (I*)a.a[BSR_BUILD_ORDER];
  const i64 base = a.n[DP_N_BASE];
  for (i64 r = i64(blockIdx.x) * blockDim.x + threadIdx.x; r < a.rows; r += i64(gridDim.x) * blockDim.x) {
    const i64 b = i64(spmvjit_ldg(rp + r)) - base, n = i64(spmvjit_ldg(rp + r + 1)) - base - b;
    if (bb::row_in_order(ci, b, b + n)) continue;
    I* v = order + b;
    for (i64 p = 0; p < n; ++p) v[p] = I(b + p);
    build_heap_sort(v, n, bb::ByColumn{ci});
  }
}

// Pass 2: block_ptr, and each block row's blocks at the scanned offsets (total at
// [block_rows]): values zeroed, then its entries and block columns written.
extern "C" __global__ void spmvjit_build_write(const SpmvArgs a) {
  const i64 block_rows = a.n[BSR_BUILD_N_BLOCK_ROWS], id = i64(blockIdx.x) * blockDim.x + threadIdx.x;
  if (id == 0)
    ((I*)a.a[BSR_BUILD_BLOCK_PTR])[block_rows] = I(((const i64*)a.a[BSR_BUILD_COUNTS])[block_rows]);
  for (i64 b = id; b < block_rows; b += i64(gridDim.x) * blockDim.x)
    if (!bb::regular(a, b)) bb::write_walk(a, b);
}

#ifndef SPMVJIT_EMULATED  // a warp's lanes cooperate: the CPU emulation runs threads one by one
namespace bb {

// Index of the first of u[0, n) (ascending) that is not below x.
SPMVJIT_DEVICE int lower_bound(const I* u, int n, i64 x) {
  int lo = 0, hi = n;
  while (lo < hi) {
    const int mid = (lo + hi) >> 1;
    if (i64(u[mid]) < x)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

// Rows of block row b for a warp.
struct WarpRows {
  i64 n, entries, beg[BSR_MAX_SIDE], len[BSR_MAX_SIDE];
};

// Block row b's distinct block columns, ascending, built by the warp (a block of one warp) in
// shared memory sh (3 * BSR_WARP_BLOCKS entries): row by row, the block columns a row opens that
// the rows before it did not are gathered in order (a ballot per SPMVJIT_WARP entries) and
// merged with the list so far (each element's place: its index plus its rank in the other list).
// Without a repeated column a block row's blocks are exactly these, as the host's walk lays them
// out. Returns their number and *u the list, or -1 when a row does not ascend strictly (out of
// order, or a repeated column) or there are more than BSR_WARP_BLOCKS: the walk's block rows.
SPMVJIT_DEVICE int warp_block_columns(const SpmvArgs& a, i64 b, I* sh, const I** u_out, WarpRows& w) {
  const I* rp = (const I*)a.a[BSR_BUILD_ROW_PTR];
  const I* ci = (const I*)a.a[BSR_BUILD_COL_IDX_IN];
  const i64 base = a.n[DP_N_BASE], r = a.n[BSR_BUILD_N_R], c = a.n[BSR_BUILD_N_C], r0 = b * r;
  const int lane = spmvjit_lane();
  const spmvjit_lanes_t below = (spmvjit_lanes_t(1) << lane) - 1;
  w.n = r0 + r < a.rows ? r : a.rows - r0;
  w.entries = 0;
  for (i64 i = 0; i < w.n; ++i) {
    w.beg[i] = i64(spmvjit_ldg(rp + r0 + i)) - base;
    w.len[i] = i64(spmvjit_ldg(rp + r0 + i + 1)) - base - w.beg[i];
    w.entries += w.len[i];
  }
  I *u = sh, *v = sh + BSR_WARP_BLOCKS, *add = sh + 2 * BSR_WARP_BLOCKS;
  int nu = 0;
  for (i64 i = 0; i < w.n; ++i) {
    int nadd = 0;
    i64 carry = -1;  // the column before this chunk's first (columns are >= 0)
    for (i64 p0 = 0; p0 < w.len[i]; p0 += SPMVJIT_WARP) {
      const i64 p = p0 + lane;
      const bool in = p < w.len[i];
      const i64 col = in ? i64(spmvjit_ldg(ci + w.beg[i] + p)) - base : 0;
      i64 prev = spmvjit_shfl_up(col, 1);
      if (lane == 0) prev = carry;
      if (spmvjit_ballot(in && col <= prev)) return -1;
      const i64 bc = col / c;
      bool opens = in && (p == 0 || bc != prev / c);  // the row's first entry in block column bc
      if (opens && nu > 0) {                          // and no row before opened it
        const int at = lower_bound(u, nu, bc);
        opens = at == nu || i64(u[at]) != bc;
      }
      const spmvjit_lanes_t m = spmvjit_ballot(opens);
      const int at = nadd + spmvjit_lane_count(m & below);
      if (opens && at < BSR_WARP_BLOCKS) add[at] = I(bc);
      nadd += spmvjit_lane_count(m);
      carry = spmvjit_shfl(col, SPMVJIT_WARP - 1);
    }
    if (nu + nadd > BSR_WARP_BLOCKS) return -1;
    spmvjit_sync_block();  // add[] written
    for (int j = lane; j < nu; j += SPMVJIT_WARP) v[j + lower_bound(add, nadd, i64(u[j]))] = u[j];
    for (int j = lane; j < nadd; j += SPMVJIT_WARP) v[j + lower_bound(u, nu, i64(add[j]))] = add[j];
    spmvjit_sync_block();  // v written, u and add read
    I* t = u;
    u = v, v = t, nu += nadd;
  }
  *u_out = u;
  return nu;
}

}  // namespace bb

// Pass 1 with a warp per block row (blocks of SPMVJIT_WARP threads).
extern "C" __global__ void __launch_bounds__(SPMVJIT_WARP) spmvjit_build_count_warp(const SpmvArgs a) {
  SPMVJIT_SHARED I sh[3 * BSR_WARP_BLOCKS];
  i64* counts = (i64*)a.a[BSR_BUILD_COUNTS];
  const bool ordered = a.a[BSR_BUILD_ORDER] != 0;
  const i64 block_rows = a.n[BSR_BUILD_N_BLOCK_ROWS];
  for (i64 b = blockIdx.x; b < block_rows; b += gridDim.x) {
    if ((ordered && counts[b] >= 0) || bb::regular(a, b)) continue;
    const I* u;
    bb::WarpRows w;
    const int n = bb::warp_block_columns(a, b, sh, &u, w);
    if (spmvjit_lane() == 0) {
      if (n >= 0)
        counts[b] = n;
      else
        bb::count_walk(a, b);
    }
    spmvjit_sync_block();  // the next block row overwrites sh
  }
}

// Pass 2 with a warp per block row: block_ptr and block_col from the list, the values' slots
// zeroed (unless the entries fill every one), then each entry into its block's slot.
extern "C" __global__ void __launch_bounds__(SPMVJIT_WARP) spmvjit_build_write_warp(const SpmvArgs a) {
  SPMVJIT_SHARED I sh[3 * BSR_WARP_BLOCKS];
  const i64* counts = (const i64*)a.a[BSR_BUILD_COUNTS];
  const I* ci = (const I*)a.a[BSR_BUILD_COL_IDX_IN];
  const V* SPMVJIT_RESTRICT va = (const V*)a.a[BSR_BUILD_VALUES_IN];
  I* bp = (I*)a.a[BSR_BUILD_BLOCK_PTR];
  I* bcol = (I*)a.a[BSR_BUILD_BLOCK_COL];
  V* val = (V*)a.a[BSR_BUILD_VALUES];
  const i64 c = a.n[BSR_BUILD_N_C], rc = a.n[BSR_BUILD_N_R] * c, block_rows = a.n[BSR_BUILD_N_BLOCK_ROWS];
  const i64 base = a.n[DP_N_BASE];
  const int lane = spmvjit_lane();
  if (blockIdx.x == 0 && lane == 0) bp[block_rows] = I(counts[block_rows]);
  for (i64 b = blockIdx.x; b < block_rows; b += gridDim.x) {
    if (bb::regular(a, b)) continue;  // spmvjit_build_write_regular's (the same for the whole block)
    const I* u;
    bb::WarpRows w;
    const int n = bb::warp_block_columns(a, b, sh, &u, w);
    if (n < 0) {
      if (lane == 0) bb::write_walk(a, b);
    } else {
      const i64 first = counts[b];
      if (lane == 0) bp[b] = I(first);
      for (int j = lane; j < n; j += SPMVJIT_WARP) bcol[first + j] = u[j];
      if (w.entries != n * rc) {
        for (i64 k = first * rc + lane; k < (first + n) * rc; k += SPMVJIT_WARP) val[k] = V(0);
        spmvjit_sync_block();  // the zeros land before the entries
      }
      for (i64 i = 0; i < w.n; ++i)
        for (i64 p = lane; p < w.len[i]; p += SPMVJIT_WARP) {
          const i64 col = i64(spmvjit_ldg(ci + w.beg[i] + p)) - base, bc = col / c;
          val[(first + bb::lower_bound(u, n, bc)) * rc + i * c + (col - bc * c)] =
              spmvjit_ldg(va + w.beg[i] + p);
        }
    }
    spmvjit_sync_block();  // the next block row overwrites sh
  }
}
#endif

// The update gather (Format::device_gather; templates/contract/value_gather.h), BSR_UPD_LANES
// threads per block row striding over its slots, so writes are coalesced. A block row whose
// blocks hold as many entries as slots (no fill: every row of it has nb * C entries, entry k in
// block k / C at column k % C) reads its values at computed positions; the others read the map.
// A thread loads BSR_UPD_BATCH slots' values before it writes any (vg::Sink::gather).
extern "C" __global__ void __launch_bounds__(BSR_UPD_BLOCK) spmvjit_update_gather(const SpmvArgs a) {
  const I* rp = (const I*)a.a[VG_ROW_PTR];
  const I* map = (const I*)a.a[VG_MAP0];
  void* out = (void*)a.a[VG_OUT0];
  const I* bptr = (const I*)a.a[BSR_UPD_BLOCK_PTR];
  const i64 r = a.n[BSR_UPD_N_R], c = a.n[BSR_UPD_N_C], rc = r * c;
  const i64 items = a.n[BSR_UPD_N_BLOCK_ROWS] * BSR_UPD_LANES;
  vg::Sink sink(a);
  for (i64 p = i64(blockIdx.x) * blockDim.x + threadIdx.x; p < items; p += i64(gridDim.x) * blockDim.x) {
    const i64 b = p / BSR_UPD_LANES, lane = p - b * BSR_UPD_LANES;
    const i64 k0 = spmvjit_ldg(bptr + b), nb = spmvjit_ldg(bptr + b + 1) - k0;
    const i64 r0 = b * r, slots = nb * rc, base = k0 * rc;
    const i64 p0 = r0 < a.rows ? i64(spmvjit_ldg(rp + r0)) : 0;
    // 32-bit divisions where the block row allows: a 64-bit one is a long instruction sequence.
    const bool full = r0 + r <= a.rows && i64(spmvjit_ldg(rp + r0 + r)) - p0 == slots && slots < 0x7fffffffLL;
    if (!full) {  // the map's positions (nothing computed to compare in VG_CHECK)
      if (sink.mode != VG_CHECK)
        sink.gather<BSR_UPD_BATCH>(out, base, lane, slots, BSR_UPD_LANES,
                                   [&](i64 t) { return spmvjit_ld_stream(map + base + t); });
      continue;
    }
    const unsigned urc = unsigned(rc), uc = unsigned(c);
    const i64 row_len = nb * c;
    auto position = [&](i64 t) {
      const unsigned blk = unsigned(t) / urc, w = unsigned(t) - blk * urc, i = w / uc, j = w - i * uc;
      return p0 + i64(i) * row_len + i64(blk) * c + j;
    };
    if (sink.mode == VG_CHECK)
      for (i64 t = lane; t < slots; t += BSR_UPD_LANES) sink.check(base + t, position(t), map);
    else
      sink.gather<BSR_UPD_BATCH>(out, base, lane, slots, BSR_UPD_LANES, position);
  }
  sink.finish(a);
}
