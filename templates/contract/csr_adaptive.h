// CSR-adaptive kernel contract (engine/formats/csr_adaptive.cpp fills it on the host,
// templates/gpu/csr_adaptive_build.cu on a device; templates/*/csr_adaptive.* read it), and the
// greedy row-block rule both builders follow, written once.
#ifndef SPMVJIT_CONTRACT_CSR_ADAPTIVE_H
#define SPMVJIT_CONTRACT_CSR_ADAPTIVE_H
#include "arrays.h"

// row_ptr, col_idx, values: the input's CSR (col_idx, values padded with zeros to a multiple of
// ADAPTIVE_PAD entries, so the last 16-byte load stays inside); row_blocks: row-block starts, then
// rows (n[ADAPTIVE_N_BLOCKS] + 1); chunk_row, chunk_start: row and first nonzero of each chunk of
// a long row (n[ADAPTIVE_N_CHUNKS]); block_nnz: each row block's first nonzero, then nnz (saves
// the dependent row_ptr load before a GPU block can stream).
// With COL_BITS 16 (index compression, CSR-DU style) col_idx holds 16-bit offsets (u16) from a
// per-segment base column: col_base[b] for row block b (0 for a long row's own block, whose
// entries its chunks cover) and col_base[n[ADAPTIVE_N_BLOCKS] + c] for chunk c; every segment's
// columns then lie in [base, base + 65535]. Without it col_base is empty.
#define CSR_ADAPTIVE_ARRAYS(X)                \
  X(ADAPTIVE_ROW_PTR, row_ptr, index)         \
  X(ADAPTIVE_COL_IDX, col_idx, index)         \
  X(ADAPTIVE_VALUES, values, value)           \
  X(ADAPTIVE_ROW_BLOCKS, row_blocks, index)   \
  X(ADAPTIVE_CHUNK_ROW, chunk_row, index)     \
  X(ADAPTIVE_CHUNK_START, chunk_start, index) \
  X(ADAPTIVE_BLOCK_NNZ, block_nnz, index)     \
  X(ADAPTIVE_COL_BASE, col_base, index)
SPMVJIT_DECLARE_ARRAYS(CSR_ADAPTIVE_ARRAYS, kCsrAdaptiveArrays)

// n[] slots; on the CPU each step's grid is ADAPTIVE_N_PARTS parts (shares of blocks / chunks).
enum { ADAPTIVE_N_BLOCKS, ADAPTIVE_N_LONG_ROWS, ADAPTIVE_N_CHUNKS, ADAPTIVE_N_PARTS };
enum {
  ADAPTIVE_BLOCK = 256,  // GPU threads per block of either step
  // Rows per GPU row block at most: up to 4 rows per thread, so rows of 0-2 nonzeros still fill
  // a block with work (H100, 256-row blocks: short-2M ran 0.057 ms against scalar csr's 0.033).
  ADAPTIVE_GPU_ROWS = 1024,
  ADAPTIVE_CPU_ROWS = 256,  // the CPU runs row blocks as plain row loops: 256-row blocks
  ADAPTIVE_S = 2048,        // nonzeros per row block at most; longer rows are cut into chunks
  // The greedy restarts every ADAPTIVE_WINDOW rows (a multiple of both row limits), so a device
  // lays out windows in parallel, one thread each, and produces the host's layout exactly.
  ADAPTIVE_WINDOW = 4096,
  ADAPTIVE_PAD = 4,
  ADAPTIVE_COOP_BLOCK = 128  // threads per window of the cooperative device build
};

// Device build (templates/gpu/csr_adaptive_build.cu) argument slots: the input row_ptr (index
// base n[DP_N_BASE]), per-window counts (i64, scanned in place between the passes), the outputs.
enum {
  ADAPTIVE_BUILD_ROW_PTR,
  ADAPTIVE_BUILD_WIN_BLOCKS,
  ADAPTIVE_BUILD_WIN_CHUNKS,
  ADAPTIVE_BUILD_WIN_LONG_ROWS,
  ADAPTIVE_BUILD_ROW_BLOCKS,
  ADAPTIVE_BUILD_CHUNK_ROW,
  ADAPTIVE_BUILD_CHUNK_START,
  ADAPTIVE_BUILD_BLOCK_NNZ
};
enum { ADAPTIVE_BUILD_N_WINDOWS, ADAPTIVE_BUILD_N_NNZ };
// The 16-bit column passes (COL_BITS 16, after the layout), over segments s (row blocks, then
// chunks) cut into pieces of ADAPTIVE_C16_PIECE entries, one work item per piece:
// spmvjit_c16_init, spmvjit_c16_span (each segment's lowest and highest column, by atomics),
// spmvjit_c16_write (col_base, the offsets, the padding's zeros, and wide[s] = 1 when segment s
// spans more than ADAPTIVE_C16_MAX_SPAN; the host scans wide to count them). work: wide
// (segments + 1 entries), then lowest and highest column per segment (u64 pairs).
enum {
  ADAPTIVE_C16_ROW_PTR,  // the input's (index base n[DP_N_BASE])
  ADAPTIVE_C16_COL_IDX,  // the input's
  ADAPTIVE_C16_BLOCK_NNZ,
  ADAPTIVE_C16_CHUNK_ROW,
  ADAPTIVE_C16_CHUNK_START,
  ADAPTIVE_C16_COL_BASE,
  ADAPTIVE_C16_OFFSETS,
  ADAPTIVE_C16_WORK
};
enum { ADAPTIVE_C16_N_BLOCKS, ADAPTIVE_C16_N_CHUNKS, ADAPTIVE_C16_N_PADDED, ADAPTIVE_C16_N_NNZ };
enum { ADAPTIVE_C16_PIECE = 64, ADAPTIVE_C16_PIECES = ADAPTIVE_S / ADAPTIVE_C16_PIECE };
enum { ADAPTIVE_C16_MAX_SPAN = 65535 };

#if defined(__CUDACC__) || defined(__CUDACC_RTC__) || defined(__HIPCC__) || defined(__HIPCC_RTC__)
#define SPMVJIT_ADAPTIVE_FN static __device__ __forceinline__
#else
#define SPMVJIT_ADAPTIVE_FN static inline
#endif

// Feeds rows [r0, r1) of one window (r0 a multiple of ADAPTIVE_WINDOW) through the greedy rule:
// on_block(r) for every row-block start r, on_long(r, len) for every row longer than ADAPTIVE_S
// (a row block of its own, plus ceil(len / ADAPTIVE_S) chunks). len(r) is row r's length; a row
// block holds at most max_rows rows and ADAPTIVE_S nonzeros.
template <class Len, class OnBlock, class OnLong>
SPMVJIT_ADAPTIVE_FN void adaptive_window(long long r0, long long r1, long long max_rows, Len&& len,
                                         OnBlock&& on_block, OnLong&& on_long) {
  long long start = r0, nnz = 0;
  if (r0 < r1) on_block(r0);
  for (long long r = r0; r < r1; ++r) {
    const long long l = len(r);
    if (l > ADAPTIVE_S) {
      if (r > start) on_block(r);
      on_long(r, l);
      if (r + 1 < r1) on_block(r + 1);
      start = r + 1, nnz = 0;
      continue;
    }
    if (r - start + 1 > max_rows || nnz + l > ADAPTIVE_S) {
      on_block(r);
      start = r, nnz = 0;
    }
    nnz += l;
  }
}

SPMVJIT_ADAPTIVE_FN long long adaptive_chunks_of(long long len) {
  return (len + ADAPTIVE_S - 1) / ADAPTIVE_S;
}

// The entries [*k0, *k1) (zero-based) of COL_BITS 16's segment s: row block s below nb row
// blocks, else chunk c = s - nb. A long row's own row block is empty here: its chunks cover its
// entries. block_nnz(b) is row block b's first entry (b <= nb), chunk_start(c) chunk c's first,
// row_end(c) one past the last entry of chunk c's row.
template <class BlockNnz, class ChunkStart, class RowEnd>
SPMVJIT_ADAPTIVE_FN void adaptive_segment(long long s, long long nb, BlockNnz&& block_nnz,
                                          ChunkStart&& chunk_start, RowEnd&& row_end, long long* k0,
                                          long long* k1) {
  if (s < nb) {
    *k0 = block_nnz(s), *k1 = block_nnz(s + 1);
    if (*k1 - *k0 > ADAPTIVE_S) *k1 = *k0;
  } else {
    const long long e = row_end(s - nb);
    *k0 = chunk_start(s - nb);
    *k1 = *k0 + ADAPTIVE_S < e ? *k0 + ADAPTIVE_S : e;
  }
}

#endif  // SPMVJIT_CONTRACT_CSR_ADAPTIVE_H
