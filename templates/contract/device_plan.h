// Device planning contract: the statistics block templates/gpu/device_plan.cu fills and
// engine/device_plan.cpp reads, and the argument conventions every device build kernel
// (templates/gpu/device_plan.cu, templates/gpu/<format>_build.cu) shares.
#ifndef SPMVJIT_CONTRACT_DEVICE_PLAN_H
#define SPMVJIT_CONTRACT_DEVICE_PLAN_H

enum {
  DP_BLOCK = 256,         // threads per block of spmvjit_dp_rows (its reductions assume it)
  DP_SCAN_BLOCK = 1024,   // spmvjit_dp_scan: one block of this many threads
  DP_WIDTHS = 7,          // row-shape facts for slices / lane groups of 2^0 .. 2^6 rows
  DP_HIST_BINS = 48,      // log2 row-length histogram
  DP_SHORT_LENGTHS = 64,  // exact counts of rows of 0 .. 63 nonzeros
  DP_N_BASE = 7           // n[DP_N_BASE]: the input's index base (0 or 1), in every kernel
};

// Slots of the statistics block (64-bit words in scratch).
enum {
  DP_ERR_ROW,   // first r with row_ptr[r + 1] < row_ptr[r] (initially ~0)
  DP_ERR_ENDS,  // 1 if row_ptr[0] != base or row_ptr[rows] != nnz + base
  DP_ERR_COL,   // first k with a column outside [base, cols + base) (initially ~0)
  DP_ROW_MIN,   // initially ~0
  DP_ROW_MAX,
  DP_EMPTY,
  DP_SUM_SQ,                              // double: sum of squared row lengths
  DP_WIDTH_SUM,                           // DP_WIDTHS slots: over slices of 2^k rows, the longest row
  DP_IDLE = DP_WIDTH_SUM + DP_WIDTHS,     // DP_WIDTHS slots: over rows, (-len) mod 2^k
  DP_REM = DP_IDLE + DP_WIDTHS,           // DP_WIDTHS slots: over rows, len mod 2^k
  DP_HIST = DP_REM + DP_WIDTHS,           // DP_HIST_BINS slots
  DP_LEN_COUNT = DP_HIST + DP_HIST_BINS,  // DP_SHORT_LENGTHS slots
  DP_SLOTS = DP_LEN_COUNT + DP_SHORT_LENGTHS
};

// Argument slots of the generic kernels (copies, scan).
enum { DP_SRC, DP_DST };           // a[]
enum { DP_N_COUNT, DP_N_PADDED };  // n[]: entries to copy, entries to write (zeros after)

#endif  // SPMVJIT_CONTRACT_DEVICE_PLAN_H
