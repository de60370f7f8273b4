// csr_adaptive's device build (engine/formats/csr_adaptive.cpp, convert_device): the greedy row
// blocks of templates/contract/csr_adaptive.h laid out window by window, in two passes around an
// exclusive scan of the per-window counts: a block per window on a device (the _coop kernels),
// one thread per window in the CPU emulation; with COL_BITS 16 three more passes write the 16-bit
// column offsets. Grid-stride: any grid works.
#include "../contract/csr_adaptive.h"
#include "../contract/device_plan.h"
#include "prelude.h"

// Pass 1: per window of ADAPTIVE_WINDOW rows, its row blocks, long-row chunks and long rows.
extern "C" __global__ void spmvjit_build_count(const SpmvArgs a) {
  const I* SPMVJIT_RESTRICT rp = (const I*)a.a[ADAPTIVE_BUILD_ROW_PTR];
  i64* blocks = (i64*)a.a[ADAPTIVE_BUILD_WIN_BLOCKS];
  i64* chunks = (i64*)a.a[ADAPTIVE_BUILD_WIN_CHUNKS];
  i64* longs = (i64*)a.a[ADAPTIVE_BUILD_WIN_LONG_ROWS];
  const i64 windows = a.n[ADAPTIVE_BUILD_N_WINDOWS];
  for (i64 w = i64(blockIdx.x) * blockDim.x + threadIdx.x; w < windows; w += i64(gridDim.x) * blockDim.x) {
    const i64 r0 = w * ADAPTIVE_WINDOW, r1 = r0 + ADAPTIVE_WINDOW < a.rows ? r0 + ADAPTIVE_WINDOW : a.rows;
    i64 nb = 0, nc = 0, nl = 0;
    adaptive_window(
        r0, r1, ADAPTIVE_GPU_ROWS,
        [&](i64 r) { return i64(spmvjit_ldg(rp + r + 1)) - i64(spmvjit_ldg(rp + r)); }, [&](i64) { ++nb; },
        [&](i64, i64 len) { ++nl, nc += adaptive_chunks_of(len); });
    blocks[w] = nb;
    chunks[w] = nc;
    longs[w] = nl;
  }
}

// Pass 2: writes the layout at the scanned offsets (totals at [windows]).
extern "C" __global__ void spmvjit_build_write(const SpmvArgs a) {
  const I* SPMVJIT_RESTRICT rp = (const I*)a.a[ADAPTIVE_BUILD_ROW_PTR];
  const i64* boff = (const i64*)a.a[ADAPTIVE_BUILD_WIN_BLOCKS];
  const i64* coff = (const i64*)a.a[ADAPTIVE_BUILD_WIN_CHUNKS];
  I* blocks = (I*)a.a[ADAPTIVE_BUILD_ROW_BLOCKS];
  I* crow = (I*)a.a[ADAPTIVE_BUILD_CHUNK_ROW];
  I* cstart = (I*)a.a[ADAPTIVE_BUILD_CHUNK_START];
  I* bnnz = (I*)a.a[ADAPTIVE_BUILD_BLOCK_NNZ];
  const i64 windows = a.n[ADAPTIVE_BUILD_N_WINDOWS], base = a.n[DP_N_BASE];
  const i64 id = i64(blockIdx.x) * blockDim.x + threadIdx.x;
  if (id == 0) blocks[boff[windows]] = I(a.rows), bnnz[boff[windows]] = I(a.n[ADAPTIVE_BUILD_N_NNZ]);
  for (i64 w = id; w < windows; w += i64(gridDim.x) * blockDim.x) {
    const i64 r0 = w * ADAPTIVE_WINDOW, r1 = r0 + ADAPTIVE_WINDOW < a.rows ? r0 + ADAPTIVE_WINDOW : a.rows;
    i64 nb = boff[w], nc = coff[w];
    adaptive_window(
        r0, r1, ADAPTIVE_GPU_ROWS,
        [&](i64 r) { return i64(spmvjit_ldg(rp + r + 1)) - i64(spmvjit_ldg(rp + r)); },
        [&](i64 r) {
          bnnz[nb] = I(spmvjit_ldg(rp + r) - base);
          blocks[nb++] = I(r);
        },
        [&](i64 r, i64 len) {
          const i64 b = i64(spmvjit_ldg(rp + r)) - base;
          for (i64 k = b; k < b + len; k += ADAPTIVE_S) crow[nc] = I(r), cstart[nc] = I(k), ++nc;
        });
  }
}

#ifndef SPMVJIT_EMULATED  // a block's threads cooperate: the CPU emulation runs them one by one
#include "block_scan.cuh"

// The same two passes with a block of ADAPTIVE_COOP_BLOCK threads per window. The block loads the
// window's row lengths, clamped to ADAPTIVE_S + 1 (all the rule asks of a row that is not long),
// and their prefix sums into shared memory; then every row r gets next[r], the row before which a
// row block starting at r ends under the rule (ADAPTIVE_GPU_ROWS rows, ADAPTIVE_S nonzeros, a
// long row; a long row's block is itself), by a binary search on the sums. The window's row
// blocks start at r0, next[r0], next[next[r0]], ...: one thread follows them, a shared load per
// block, where a warp walking the rule took a prefix sum over its lanes per block (0.44 ms a pass
// on dense:2000's 2000 one-row blocks on an H200). The threads holding long rows count them and
// write their chunks.
struct AdaptiveWindow {
  unsigned short next[ADAPTIVE_WINDOW];  // clamped lengths until the searches overwrite them
  int sum[ADAPTIVE_WINDOW + 1];          // exclusive prefix sums of the clamped lengths
  i64 warps[ADAPTIVE_COOP_BLOCK / SPMVJIT_WARP];
};

// Window w's rows [*r0, r0 + *n) into s (lengths, sums, then next[]), by the whole block.
SPMVJIT_DEVICE void adaptive_load_window(const I* SPMVJIT_RESTRICT rp, i64 rows, i64 w, AdaptiveWindow& s, i64* r0,
                                         int* n) {
  *r0 = w * ADAPTIVE_WINDOW;
  *n = int(*r0 + ADAPTIVE_WINDOW < rows ? ADAPTIVE_WINDOW : rows - *r0);
  i64 carry = 0;
  for (int base = 0; base < *n; base += ADAPTIVE_COOP_BLOCK) {  // a scan per ADAPTIVE_COOP_BLOCK rows
    const int i = base + int(threadIdx.x);
    i64 l = 0;
    if (i < *n) {
      const i64 r = *r0 + i;
      l = i64(spmvjit_ldg(rp + r + 1)) - i64(spmvjit_ldg(rp + r));
      l = l > ADAPTIVE_S ? ADAPTIVE_S + 1 : l;
      s.next[i] = (unsigned short)l;
    }
    i64 total;
    const i64 before = spmvjit_block_exclusive<ADAPTIVE_COOP_BLOCK>(l, s.warps, &total);
    if (i < *n) s.sum[i] = int(carry + before);
    carry += total;
  }
  if (threadIdx.x == 0) s.sum[*n] = int(carry);
  spmvjit_sync_block();
  for (int i = int(threadIdx.x); i < *n; i += ADAPTIVE_COOP_BLOCK) {
    int e = i + 1;  // a long row, or a row whose successor does not fit
    if (s.next[i] <= ADAPTIVE_S) {
      int hi = i + ADAPTIVE_GPU_ROWS < *n ? i + ADAPTIVE_GPU_ROWS : *n;
      const int limit = s.sum[i] + ADAPTIVE_S;
      while (e < hi) {  // the last end whose rows hold at most ADAPTIVE_S nonzeros
        const int mid = (e + hi + 1) >> 1;
        if (s.sum[mid] <= limit) e = mid;
        else hi = mid - 1;
      }
    }
    s.next[i] = (unsigned short)e;
  }
  spmvjit_sync_block();
}

SPMVJIT_DEVICE bool adaptive_is_long(const AdaptiveWindow& s, int i) { return s.sum[i + 1] - s.sum[i] > ADAPTIVE_S; }

extern "C" __global__ void __launch_bounds__(ADAPTIVE_COOP_BLOCK) spmvjit_build_count_coop(const SpmvArgs a) {
  SPMVJIT_SHARED AdaptiveWindow s;
  const I* SPMVJIT_RESTRICT rp = (const I*)a.a[ADAPTIVE_BUILD_ROW_PTR];
  const i64 windows = a.n[ADAPTIVE_BUILD_N_WINDOWS];
  for (i64 w = blockIdx.x; w < windows; w += gridDim.x) {
    i64 r0;
    int n;
    adaptive_load_window(rp, a.rows, w, s, &r0, &n);
    i64 nl = 0, nc = 0;
    for (int i = int(threadIdx.x); i < n; i += ADAPTIVE_COOP_BLOCK)
      if (adaptive_is_long(s, i))
        ++nl, nc += adaptive_chunks_of(i64(spmvjit_ldg(rp + r0 + i + 1)) - i64(spmvjit_ldg(rp + r0 + i)));
    i64 long_rows, chunks;
    spmvjit_block_exclusive<ADAPTIVE_COOP_BLOCK>(nl, s.warps, &long_rows);
    spmvjit_block_exclusive<ADAPTIVE_COOP_BLOCK>(nc, s.warps, &chunks);
    if (threadIdx.x == 0) {
      i64 nb = 0;
      for (int i = 0; i < n; i = s.next[i]) ++nb;
      ((i64*)a.a[ADAPTIVE_BUILD_WIN_BLOCKS])[w] = nb;
      ((i64*)a.a[ADAPTIVE_BUILD_WIN_CHUNKS])[w] = chunks;
      ((i64*)a.a[ADAPTIVE_BUILD_WIN_LONG_ROWS])[w] = long_rows;
    }
    spmvjit_sync_block();  // the next window overwrites s
  }
}

extern "C" __global__ void __launch_bounds__(ADAPTIVE_COOP_BLOCK) spmvjit_build_write_coop(const SpmvArgs a) {
  SPMVJIT_SHARED AdaptiveWindow s;
  const I* SPMVJIT_RESTRICT rp = (const I*)a.a[ADAPTIVE_BUILD_ROW_PTR];
  const i64* boff = (const i64*)a.a[ADAPTIVE_BUILD_WIN_BLOCKS];
  const i64* coff = (const i64*)a.a[ADAPTIVE_BUILD_WIN_CHUNKS];
  I* blocks = (I*)a.a[ADAPTIVE_BUILD_ROW_BLOCKS];
  I* crow = (I*)a.a[ADAPTIVE_BUILD_CHUNK_ROW];
  I* cstart = (I*)a.a[ADAPTIVE_BUILD_CHUNK_START];
  I* bnnz = (I*)a.a[ADAPTIVE_BUILD_BLOCK_NNZ];
  const i64 windows = a.n[ADAPTIVE_BUILD_N_WINDOWS], base = a.n[DP_N_BASE];
  if (blockIdx.x == 0 && threadIdx.x == 0)
    blocks[boff[windows]] = I(a.rows), bnnz[boff[windows]] = I(a.n[ADAPTIVE_BUILD_N_NNZ]);
  for (i64 w = blockIdx.x; w < windows; w += gridDim.x) {
    i64 r0;
    int n;
    adaptive_load_window(rp, a.rows, w, s, &r0, &n);
    if (coff[w + 1] > coff[w]) {  // long rows: their chunks in row order, a scan per tile of rows
      i64 nc = coff[w];
      for (int tile = 0; tile < n; tile += ADAPTIVE_COOP_BLOCK) {
        const int i = tile + int(threadIdx.x);
        i64 b = 0, chunks = 0;
        if (i < n && adaptive_is_long(s, i)) {
          b = i64(spmvjit_ldg(rp + r0 + i)) - base;
          chunks = adaptive_chunks_of(i64(spmvjit_ldg(rp + r0 + i + 1)) - base - b);
        }
        i64 total;
        const i64 at = nc + spmvjit_block_exclusive<ADAPTIVE_COOP_BLOCK>(chunks, s.warps, &total);
        for (i64 c = 0; c < chunks; ++c) crow[at + c] = I(r0 + i), cstart[at + c] = I(b + c * ADAPTIVE_S);
        nc += total;
      }
    }
    if (threadIdx.x == 0) {
      i64 nb = boff[w];
      for (int i = 0; i < n; i = s.next[i], ++nb) {
        blocks[nb] = I(r0 + i);
        bnnz[nb] = I(spmvjit_ldg(rp + r0 + i) - base);
      }
    }
    spmvjit_sync_block();
  }
}
#endif

// Segment s's entries [*k0, *k1) (zero-based; the contract's adaptive_segment).
SPMVJIT_DEVICE void c16_segment(const SpmvArgs& a, i64 s, i64* k0, i64* k1) {
  const I* SPMVJIT_RESTRICT rp = (const I*)a.a[ADAPTIVE_C16_ROW_PTR];
  const I* SPMVJIT_RESTRICT bnnz = (const I*)a.a[ADAPTIVE_C16_BLOCK_NNZ];
  const I* SPMVJIT_RESTRICT crow = (const I*)a.a[ADAPTIVE_C16_CHUNK_ROW];
  const I* SPMVJIT_RESTRICT cstart = (const I*)a.a[ADAPTIVE_C16_CHUNK_START];
  adaptive_segment(
      s, a.n[ADAPTIVE_C16_N_BLOCKS], [&](i64 b) { return i64(spmvjit_ldg(bnnz + b)); },
      [&](i64 c) { return i64(spmvjit_ldg(cstart + c)); },
      [&](i64 c) { return i64(spmvjit_ldg(rp + spmvjit_ldg(crow + c) + 1)) - a.n[DP_N_BASE]; }, k0, k1);
}

extern "C" __global__ void spmvjit_c16_init(const SpmvArgs a) {
  const i64 segs = a.n[ADAPTIVE_C16_N_BLOCKS] + a.n[ADAPTIVE_C16_N_CHUNKS];
  i64* wide = (i64*)a.a[ADAPTIVE_C16_WORK];
  unsigned long long* span = (unsigned long long*)(wide + segs + 1);
  for (i64 s = i64(blockIdx.x) * blockDim.x + threadIdx.x; s < segs; s += i64(gridDim.x) * blockDim.x) {
    wide[s] = 0;
    span[2 * s] = ~0ull, span[2 * s + 1] = 0;
  }
}

extern "C" __global__ void spmvjit_c16_span(const SpmvArgs a) {
  const I* SPMVJIT_RESTRICT ci = (const I*)a.a[ADAPTIVE_C16_COL_IDX];
  const i64 segs = a.n[ADAPTIVE_C16_N_BLOCKS] + a.n[ADAPTIVE_C16_N_CHUNKS], base = a.n[DP_N_BASE];
  unsigned long long* span = (unsigned long long*)((i64*)a.a[ADAPTIVE_C16_WORK] + segs + 1);
  for (i64 i = i64(blockIdx.x) * blockDim.x + threadIdx.x; i < segs * ADAPTIVE_C16_PIECES;
       i += i64(gridDim.x) * blockDim.x) {
    const i64 s = i / ADAPTIVE_C16_PIECES;
    i64 k0, k1;
    c16_segment(a, s, &k0, &k1);
    k0 += (i % ADAPTIVE_C16_PIECES) * ADAPTIVE_C16_PIECE;
    if (k0 >= k1) continue;
    if (k1 > k0 + ADAPTIVE_C16_PIECE) k1 = k0 + ADAPTIVE_C16_PIECE;
    unsigned long long lo = ~0ull, hi = 0;
    for (i64 k = k0; k < k1; ++k) {
      const unsigned long long c = (unsigned long long)(i64(spmvjit_ldg(ci + k)) - base);
      lo = c < lo ? c : lo;
      hi = c > hi ? c : hi;
    }
    spmvjit_atomic_min_u64(span + 2 * s, lo);
    spmvjit_atomic_max_u64(span + 2 * s + 1, hi);
  }
}

extern "C" __global__ void spmvjit_c16_write(const SpmvArgs a) {
  const I* SPMVJIT_RESTRICT ci = (const I*)a.a[ADAPTIVE_C16_COL_IDX];
  I* cbase = (I*)a.a[ADAPTIVE_C16_COL_BASE];
  unsigned short* off = (unsigned short*)a.a[ADAPTIVE_C16_OFFSETS];
  const i64 segs = a.n[ADAPTIVE_C16_N_BLOCKS] + a.n[ADAPTIVE_C16_N_CHUNKS], base = a.n[DP_N_BASE];
  i64* wide = (i64*)a.a[ADAPTIVE_C16_WORK];
  const unsigned long long* span = (const unsigned long long*)(wide + segs + 1);
  const i64 id = i64(blockIdx.x) * blockDim.x + threadIdx.x;
  if (id == 0)
    for (i64 k = a.n[ADAPTIVE_C16_N_NNZ]; k < a.n[ADAPTIVE_C16_N_PADDED]; ++k) off[k] = 0;
  for (i64 i = id; i < segs * ADAPTIVE_C16_PIECES; i += i64(gridDim.x) * blockDim.x) {
    const i64 s = i / ADAPTIVE_C16_PIECES;
    const unsigned long long lo = span[2 * s], hi = span[2 * s + 1];
    const bool empty = lo > hi, fits = empty || hi - lo <= ADAPTIVE_C16_MAX_SPAN;
    if (i % ADAPTIVE_C16_PIECES == 0) {
      cbase[s] = I(empty ? 0 : (i64)lo);
      wide[s] = fits ? 0 : 1;
    }
    if (!fits) continue;
    i64 k0, k1;
    c16_segment(a, s, &k0, &k1);
    k0 += (i % ADAPTIVE_C16_PIECES) * ADAPTIVE_C16_PIECE;
    if (k1 > k0 + ADAPTIVE_C16_PIECE) k1 = k0 + ADAPTIVE_C16_PIECE;
    for (i64 k = k0; k < k1; ++k) off[k] = (unsigned short)(i64(spmvjit_ldg(ci + k)) - base - (i64)lo);
  }
}
