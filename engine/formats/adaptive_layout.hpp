// csr_adaptive's row-block layout: the greedy rule shared by the host converter, the host
// statistics (the planner's block count) and the device converter (templates/gpu/device_plan.cu,
// which must follow the same rule; tests compare the two layouts entry for entry).
#pragma once

#include <algorithm>
#include <cstdint>

namespace spmvjit::adaptive_layout {

// Must match SPMVJIT_ADAPTIVE_BLOCK / SPMVJIT_ADAPTIVE_ROWS / SPMVJIT_S in
// templates/gpu/csr_adaptive.cu and the kAdaptive* constants in templates/gpu/device_plan.cu.
inline constexpr int64_t kBlock = 256;
// Rows per GPU row block at most: up to 4 rows per thread, so rows of 0-2 nonzeros still fill a
// block with work (H100, 256-row blocks: short-2M ran 0.057 ms against scalar csr's 0.033 ms).
inline constexpr int64_t kGpuRows = 1024;
// The CPU runs row blocks as plain row loops and only splits them into parts: its layout (and
// so its cost) keeps 256-row blocks.
inline constexpr int64_t kCpuRows = 256;
// Nonzeros per row block at most; longer rows are cut into chunks of this many.
inline constexpr int64_t kS = 2048;
// The greedy restarts every kWindow rows (a multiple of both row limits), so a device can lay
// out windows in parallel, one thread each, and produce the host's layout exactly.
inline constexpr int64_t kWindow = 4096;

// Feeds the rows [r0, r1) of one window (r0 a multiple of kWindow) through the greedy rule:
// on_block(r) for every row-block start r, on_long(r, len) for every row longer than kS (a row
// block of its own, plus ceil(len / kS) chunks). `len(r)` is the row length.
template <class Len, class OnBlock, class OnLong>
void window(int64_t r0, int64_t r1, int64_t max_rows, Len&& len, OnBlock&& on_block, OnLong&& on_long) {
  int64_t start = r0, nnz = 0;
  if (r0 < r1) on_block(r0);
  for (int64_t r = r0; r < r1; ++r) {
    const int64_t l = len(r);
    if (l > kS) {
      if (r > start) on_block(r);
      on_long(r, l);
      if (r + 1 < r1) on_block(r + 1);
      start = r + 1, nnz = 0;
      continue;
    }
    if (r - start + 1 > max_rows || nnz + l > kS) {
      on_block(r);
      start = r, nnz = 0;
    }
    nnz += l;
  }
}

inline int64_t chunks_of(int64_t len) { return (len + kS - 1) / kS; }

}  // namespace spmvjit::adaptive_layout
