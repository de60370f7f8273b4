// Device planning contract: the statistics block templates/gpu/device_plan.cu fills and
// engine/device_plan.cpp reads, and the argument conventions every device build kernel
// (templates/gpu/device_plan.cu, templates/gpu/<format>_build.cu) shares.
#ifndef SPMVJIT_CONTRACT_DEVICE_PLAN_H
#define SPMVJIT_CONTRACT_DEVICE_PLAN_H

enum {
  DP_BLOCK = 256,         // threads per block of spmvjit_dp_rows (its reductions assume it)
  DP_SCAN_BLOCK = 1024,   // spmvjit_dp_scan*: blocks of this many threads
  DP_SCAN_TILE = 8192,    // entries a block scans; longer arrays take the three-kernel scan
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

// Row sample (engine/sample.hpp): groups of DP_SAMPLE_GROUP_ROWS rows; a[] and n[] slots of the
// two gather kernels (lengths, then entries at the scanned offsets).
enum { DP_SAMPLE_GROUP_ROWS = 192 };
#if defined(__CUDACC__) || defined(__CUDACC_RTC__) || defined(__HIPCC__) || defined(__HIPCC_RTC__)
#define SPMVJIT_DP_FN static __device__ __forceinline__
#else
#define SPMVJIT_DP_FN static inline
#endif
// First row of sampled group g of `groups` among `matrix_groups`: one group from each of `groups`
// equal strata, at a pseudo-random place inside it (evenly spaced groups alias with grid-shaped
// matrices: every sample of a 3D stencil could land on one face).
SPMVJIT_DP_FN long long dp_sample_group_start(long long g, long long groups, long long matrix_groups) {
  const long long lo = g * matrix_groups / groups, hi = (g + 1) * matrix_groups / groups;
  unsigned long long z = (unsigned long long)g * 0x9e3779b97f4a7c15ULL + 0x632be59bd9b4e019ULL;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  z ^= z >> 31;
  return (lo + (long long)(z % (unsigned long long)(hi - lo))) * DP_SAMPLE_GROUP_ROWS;
}
enum {
  DP_SAMPLE_ROW_PTR,
  DP_SAMPLE_COL_IDX,
  DP_SAMPLE_VALUES,
  DP_SAMPLE_OFFSETS,
  DP_SAMPLE_COLS,
  DP_SAMPLE_VALS
};
enum { DP_N_SAMPLE_GROUPS, DP_N_MATRIX_GROUPS };

// Value maps (engine/value_map.hpp; kernels in templates/gpu/value_map.cu): position codes (the
// bits of k + 1 in entry k, an unsigned integer as wide as V), a map from converted codes (I
// positions, -1 for padding, codes past nnz counted in errors[0]), and the gather out[j] = map[j]
// < 0 ? 0 : values[map[j]], which with n[DP_VM_N_CHECK] compares with out instead and counts
// differences in errors[0]; spmvjit_vm_gather_codes writes each gathered value's CODE8 code
// instead (a byte: its position in the sorted table a[DP_VM_TABLE] of n[DP_VM_N_TABLE] patterns,
// values missing from it counted in errors[0]).
enum { DP_VM_VALUES, DP_VM_MAP, DP_VM_OUT, DP_VM_ERRORS, DP_VM_TABLE };  // a[]
enum { DP_VM_N_COUNT, DP_VM_N_NNZ, DP_VM_N_CHECK, DP_VM_N_TABLE };       // n[]
enum { DP_VM_SLOTS = 4 };  // slots a thread of the two gathers takes per step

// Value compression (engine/value_codec.hpp; the kernel in templates/gpu/value_map.cu): codes[j] =
// the position of values[j]'s bits in the sorted table of n[DP_VC_N_TABLE] patterns, values
// missing from it counted in errors[0]; with no codes array (a uniform table of one value) only
// the count.
enum { DP_VC_VALUES, DP_VC_CODES, DP_VC_TABLE, DP_VC_ERRORS };  // a[]
enum { DP_VC_N_COUNT, DP_VC_N_TABLE };                          // n[]

// Argument slots of the generic kernels (copies, scan).
enum { DP_SRC, DP_DST };           // a[]
enum { DP_N_COUNT, DP_N_PADDED };  // n[]: entries to copy, entries to write (zeros after)

#endif  // SPMVJIT_CONTRACT_DEVICE_PLAN_H
