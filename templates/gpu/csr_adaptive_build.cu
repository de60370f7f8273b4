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
// The same two passes with a block of ADAPTIVE_COOP_BLOCK threads per window: the block loads the
// window's row lengths into shared memory (clamped to ADAPTIVE_S + 1, which is all the rule asks
// of a row that is not long), then its first warp runs the greedy rule SPMVJIT_WARP rows a step:
// a prefix sum of the lengths from the current row block's count finds the first row that starts
// a new block (too many rows, too many nonzeros, or a long row), the rows before it join the
// block, and the walk goes on after it. The steps are the window's rows / SPMVJIT_WARP plus one
// per row block, where a thread alone took one dependent load per row. on_block(r) and
// on_long(r) are called by every lane of the warp alike.
template <class OnBlock, class OnLong>
SPMVJIT_DEVICE void adaptive_window_warp(i64 r0, i64 r1, const unsigned short* len, OnBlock&& on_block,
                                         OnLong&& on_long) {
  const int lane = spmvjit_lane();
  i64 start = r0;
  int nnz = 0;  // the current row block's, at most ADAPTIVE_S
  if (r0 < r1) on_block(r0);
  for (i64 pos = r0; pos < r1;) {
    const i64 r = pos + lane;
    const bool in = r < r1;
    const int l = in ? int(len[r - r0]) : 0;
    int p = l;  // inclusive prefix sum over the lanes
    for (int d = 1; d < SPMVJIT_WARP; d <<= 1) {
      const int q = spmvjit_shfl_up(p, d);
      if (lane >= d) p += q;
    }
    const bool starts = in && (l > ADAPTIVE_S || r - start + 1 > ADAPTIVE_GPU_ROWS || nnz + p > ADAPTIVE_S);
    const spmvjit_lanes_t m = spmvjit_ballot(starts);
    if (!m) {
      nnz += spmvjit_shfl(p, SPMVJIT_WARP - 1);
      pos += SPMVJIT_WARP;
      continue;
    }
    const int f = spmvjit_lowest_lane(m);
    const i64 rf = pos + f;
    const int lf = spmvjit_shfl(l, f);
    if (lf > ADAPTIVE_S) {
      if (rf > start) on_block(rf);
      on_long(rf);
      if (rf + 1 < r1) on_block(rf + 1);
      start = rf + 1, nnz = 0;
    } else {
      on_block(rf);
      start = rf, nnz = lf;
    }
    pos = rf + 1;
  }
}

// Window w's row lengths into len (clamped), by the whole block; returns its rows [*r0, *r1).
SPMVJIT_DEVICE void adaptive_load_window(const I* SPMVJIT_RESTRICT rp, i64 rows, i64 w, unsigned short* len,
                                         i64* r0, i64* r1) {
  *r0 = w * ADAPTIVE_WINDOW;
  *r1 = *r0 + ADAPTIVE_WINDOW < rows ? *r0 + ADAPTIVE_WINDOW : rows;
  for (i64 r = *r0 + threadIdx.x; r < *r1; r += blockDim.x) {
    const i64 l = i64(spmvjit_ldg(rp + r + 1)) - i64(spmvjit_ldg(rp + r));
    len[r - *r0] = (unsigned short)(l > ADAPTIVE_S ? ADAPTIVE_S + 1 : l);
  }
  spmvjit_sync_block();
}

extern "C" __global__ void __launch_bounds__(ADAPTIVE_COOP_BLOCK) spmvjit_build_count_coop(const SpmvArgs a) {
  SPMVJIT_SHARED unsigned short len[ADAPTIVE_WINDOW];
  const I* SPMVJIT_RESTRICT rp = (const I*)a.a[ADAPTIVE_BUILD_ROW_PTR];
  const i64 windows = a.n[ADAPTIVE_BUILD_N_WINDOWS];
  for (i64 w = blockIdx.x; w < windows; w += gridDim.x) {
    i64 r0, r1;
    adaptive_load_window(rp, a.rows, w, len, &r0, &r1);
    if (threadIdx.x < SPMVJIT_WARP) {
      i64 nb = 0, nc = 0, nl = 0;
      adaptive_window_warp(
          r0, r1, len, [&](i64) { ++nb; },
          [&](i64 r) {
            ++nl, nc += adaptive_chunks_of(i64(spmvjit_ldg(rp + r + 1)) - i64(spmvjit_ldg(rp + r)));
          });
      if (threadIdx.x == 0) {
        ((i64*)a.a[ADAPTIVE_BUILD_WIN_BLOCKS])[w] = nb;
        ((i64*)a.a[ADAPTIVE_BUILD_WIN_CHUNKS])[w] = nc;
        ((i64*)a.a[ADAPTIVE_BUILD_WIN_LONG_ROWS])[w] = nl;
      }
    }
    spmvjit_sync_block();  // the next window overwrites len
  }
}

extern "C" __global__ void __launch_bounds__(ADAPTIVE_COOP_BLOCK) spmvjit_build_write_coop(const SpmvArgs a) {
  SPMVJIT_SHARED unsigned short len[ADAPTIVE_WINDOW];
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
  const int lane = spmvjit_lane();
  for (i64 w = blockIdx.x; w < windows; w += gridDim.x) {
    i64 r0, r1;
    adaptive_load_window(rp, a.rows, w, len, &r0, &r1);
    if (threadIdx.x < SPMVJIT_WARP) {
      i64 nb = boff[w], nc = coff[w];
      adaptive_window_warp(
          r0, r1, len,
          [&](i64 r) {
            if (lane == 0) bnnz[nb] = I(spmvjit_ldg(rp + r) - base), blocks[nb] = I(r);
            ++nb;
          },
          [&](i64 r) {
            const i64 b = i64(spmvjit_ldg(rp + r)) - base,
                      n = adaptive_chunks_of(i64(spmvjit_ldg(rp + r + 1)) - base - b);
            for (i64 c = lane; c < n; c += SPMVJIT_WARP)
              crow[nc + c] = I(r), cstart[nc + c] = I(b + c * ADAPTIVE_S);
            nc += n;
          });
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
