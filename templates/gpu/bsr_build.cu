// bsr's device build (engine/formats/bsr.cpp, convert_device): one thread per block row walks
// its R rows' entries in column order as the host's walk_blocks does (a repeated column opens a
// repeated block), counting blocks; after the scan of the counts, the same walk writes them.
// Rows out of column order are first sorted into an order array, one thread per row (stable, as
// the host's copies). Grid-stride: any grid works.
#include "../contract/bsr.h"
#include "../contract/device_plan.h"
#include "heap_sort.cuh"
#include "prelude.h"

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

// Pass 1: blocks of each block row into counts[b]. Without the order array, a block row with a
// row out of column order is marked (counts[b] = -1) and counted in counts[block_rows]; the
// launch with the order array then counts only the marked block rows.
extern "C" __global__ void spmvjit_build_count(const SpmvArgs a) {
  i64* counts = (i64*)a.a[BSR_BUILD_COUNTS];
  const bool ordered = a.a[BSR_BUILD_ORDER] != 0;
  const i64 c = a.n[BSR_BUILD_N_C], block_rows = a.n[BSR_BUILD_N_BLOCK_ROWS];
  for (i64 b = i64(blockIdx.x) * blockDim.x + threadIdx.x; b < block_rows; b += i64(gridDim.x) * blockDim.x) {
    if (ordered && counts[b] >= 0) continue;
    bb::BlockRow w;
    if (!bb::load(a, b, w)) {
      counts[b] = -1;
      spmvjit_atomic_add_u64((unsigned long long*)(counts + block_rows), 1ull);
      continue;
    }
    counts[b] = bb::walk(
        w, c, [](i64, i64, i64, i64) {}, [](i64, i64) {});
  }
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
  const i64* counts = (const i64*)a.a[BSR_BUILD_COUNTS];
  const V* SPMVJIT_RESTRICT va = (const V*)a.a[BSR_BUILD_VALUES_IN];
  I* bp = (I*)a.a[BSR_BUILD_BLOCK_PTR];
  I* bcol = (I*)a.a[BSR_BUILD_BLOCK_COL];
  V* val = (V*)a.a[BSR_BUILD_VALUES];
  const i64 r = a.n[BSR_BUILD_N_R], c = a.n[BSR_BUILD_N_C], block_rows = a.n[BSR_BUILD_N_BLOCK_ROWS];
  const i64 rc = r * c, id = i64(blockIdx.x) * blockDim.x + threadIdx.x;
  if (id == 0) bp[block_rows] = I(counts[block_rows]);
  for (i64 b = id; b < block_rows; b += i64(gridDim.x) * blockDim.x) {
    const i64 first = counts[b];
    bp[b] = I(first);
    for (i64 k = first * rc; k < counts[b + 1] * rc; ++k) val[k] = V(0);
    bb::BlockRow w;
    bb::load(a, b, w);
    bb::walk(
        w, c,
        [&](i64 blk, i64 i, i64 j, i64 k) { val[(first + blk) * rc + i * c + j] = spmvjit_ldg(va + k); },
        [&](i64 blk, i64 col) { bcol[first + blk] = I(col); });
  }
}
