// Sliced-ELL-of-1xB-blocks kernel contract (engine/formats/sell_block.cpp fills it on the host,
// templates/gpu/sell_block_build.cu on a device; templates/*/sell_block.* read it), and the greedy
// cut of a row into blocks both builders follow, written once.
#ifndef SPMVJIT_CONTRACT_SELL_BLOCK_H
#define SPMVJIT_CONTRACT_SELL_BLOCK_H
#include "arrays.h"

// slice_ptr: first block of each slice (n[SELL_BLOCK_N_SLICES] + 1), C blocks per slice column
// block_col: first column of each block; block j of row i in slice s at slice_ptr[s] + j*C + i
// values: B per block, value b of that block at B*slice_ptr[s] + (j*B + b)*C + i
// parts: CPU slice ranges
#define SELL_BLOCK_ARRAYS(X)                \
  X(SELL_BLOCK_SLICE_PTR, slice_ptr, i64)   \
  X(SELL_BLOCK_BLOCK_COL, block_col, index) \
  X(SELL_BLOCK_VALUES, values, value)       \
  X(SELL_BLOCK_PARTS, parts, parts)
SPMVJIT_DECLARE_ARRAYS(SELL_BLOCK_ARRAYS, kSellBlockArrays)

enum { SELL_BLOCK_N_SLICES };         // n[] slots
enum { SELL_BLOCK_GPU_BLOCK = 128 };  // GPU threads per block (one per row)

// Device build (templates/gpu/sell_block_build.cu) argument slots: the input arrays (index base
// n[DP_N_BASE]); order: each row's entry positions sorted by (column, position), the host's stable
// sort (index type, nnz entries; null while rows are taken as sorted); the outputs; work: i64
// scratch, each row's block count (-1 for a row whose columns are unsorted when there is no
// order), then SELL_BLOCK_WORK_SUMS per-window sums of windows + 1 entries each (scanned in place).
enum {
  SELL_BLOCK_BUILD_ROW_PTR,
  SELL_BLOCK_BUILD_COL_IDX_IN,
  SELL_BLOCK_BUILD_VALUES_IN,
  SELL_BLOCK_BUILD_ORDER,
  SELL_BLOCK_BUILD_SLICE_PTR,
  SELL_BLOCK_BUILD_BLOCK_COL,
  SELL_BLOCK_BUILD_VALUES,
  SELL_BLOCK_BUILD_WORK
};
enum { SELL_BLOCK_BUILD_N_C, SELL_BLOCK_BUILD_N_B, SELL_BLOCK_BUILD_N_WINDOWS, SELL_BLOCK_BUILD_N_SLICES };
// The staged count (spmvjit_build_count_staged, on devices whose warps cooperate): blocks of
// this many warps, a warp per SPMVJIT_WARP rows.
enum { SELL_BLOCK_BUILD_STAGE_WARPS = 2 };
// The per-window sums in work: stored blocks (slice widths times C), blocks, unsorted rows.
enum { SELL_BLOCK_WORK_STORED, SELL_BLOCK_WORK_BLOCKS, SELL_BLOCK_WORK_UNSORTED, SELL_BLOCK_WORK_SUMS };
// Rows per window whose slice widths one thread sums (a multiple of C): a thread's walk of 4096
// rows took 0.35 ms of varband:300000's device plan on an H200, one of 256 rows a fraction.
enum { SELL_BLOCK_BUILD_WINDOW = 256 };

#if defined(__CUDACC__) || defined(__CUDACC_RTC__) || defined(__HIPCC__) || defined(__HIPCC_RTC__)
#define SPMVJIT_SELL_BLOCK_FN static __device__ __forceinline__
#else
#define SPMVJIT_SELL_BLOCK_FN static inline
#endif

// Cuts one row into 1xB blocks greedily and unaligned: col(k) is the row's k-th column in
// increasing order (len of them, zero-based); a block starts at the first column not yet covered,
// moved left to cols - B at the right edge (so x[col + B - 1] stays in range), and takes the next
// entries while their columns stay inside it and increase (a repeated column starts a new block:
// nothing is ever merged). Calls on_block(start, first, end) for the entries [first, end) of each
// block and returns the number of blocks.
template <class Col, class OnBlock>
SPMVJIT_SELL_BLOCK_FN long long sell_block_cut(long long len, long long cols, long long b, Col&& col,
                                               OnBlock&& on_block) {
  long long blocks = 0;
  for (long long k = 0; k < len; ++blocks) {
    long long prev = col(k);
    const long long start = prev < cols - b ? prev : cols - b, first = k++;
    for (; k < len; ++k) {
      const long long next = col(k);
      if (next >= start + b || next <= prev) break;
      prev = next;
    }
    on_block(start, first, k);
  }
  return blocks;
}

#endif  // SPMVJIT_CONTRACT_SELL_BLOCK_H
