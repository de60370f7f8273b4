// csr_adaptive's device build (engine/formats/csr_adaptive.cpp, convert_device): the greedy row
// blocks of templates/contract/csr_adaptive.h laid out window by window, one thread per window,
// in two passes around an exclusive scan of the per-window counts. Grid-stride: any grid works.
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
