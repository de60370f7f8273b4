// csr_adaptive's device build (engine/formats/csr_adaptive.cpp, convert_device): the greedy row
// blocks of templates/contract/csr_adaptive.h laid out window by window, one thread per window,
// in two passes around an exclusive scan of the per-window counts; with COL_BITS 16 three more
// passes write the 16-bit column offsets. Grid-stride: any grid works.
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
