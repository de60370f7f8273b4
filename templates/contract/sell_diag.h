// Sliced-ELL-with-diagonals kernel contract (engine/formats/sell_diag.cpp fills it,
// templates/*/sell_diag.* read it; templates/gpu/sell_diag_build.cu builds it on a device).
#ifndef SPMVJIT_CONTRACT_SELL_DIAG_H
#define SPMVJIT_CONTRACT_SELL_DIAG_H
#include "arrays.h"

// diag_ptr: first kept diagonal of each slice (n[SELL_DIAG_N_SLICES] + 1)
// diag_offset: column - row of each kept diagonal
// diag_values: C per kept diagonal (row i of the slice at j*C + i), zero where a row has no entry
// rem_ptr: first remainder slot of each slice (n[SELL_DIAG_N_SLICES] + 1)
// rem_col, rem_values: remainder entries as sliced ELL, slot q of row i at rem_ptr[s] + q*C + i
// parts: CPU slice ranges
#define SELL_DIAG_ARRAYS(X)                    \
  X(SELL_DIAG_DIAG_PTR, diag_ptr, i64)         \
  X(SELL_DIAG_DIAG_OFFSET, diag_offset, index) \
  X(SELL_DIAG_DIAG_VALUES, diag_values, value) \
  X(SELL_DIAG_REM_PTR, rem_ptr, i64)           \
  X(SELL_DIAG_REM_COL, rem_col, index)         \
  X(SELL_DIAG_REM_VALUES, rem_values, value)   \
  X(SELL_DIAG_PARTS, parts, parts)
SPMVJIT_DECLARE_ARRAYS(SELL_DIAG_ARRAYS, kSellDiagArrays)

enum { SELL_DIAG_N_SLICES };  // n[] slots
enum {
  SELL_DIAG_GPU_BLOCK = 128,  // GPU threads per block (one per row)
  // Distinct offsets a slice's choice counts in a fixed table (a GPU thread's local memory); a
  // slice with more (scattered columns) sorts its offsets instead: the host with std::sort, a
  // device in scratch (templates/gpu/sell_diag_build.cu).
  SELL_DIAG_TABLE = 64
};

// Device build (templates/gpu/sell_diag_build.cu) argument slots: the input arrays (index base
// n[DP_N_BASE]), per-slice diagonal and remainder counts (i64, scanned in place into diag_ptr and
// rem_ptr), the outputs, and scratch (index type, one entry per nonzero: each slice's kept
// offsets, from its first entry). The last two slots differ by kernel: a[] holds eight arrays.
enum {
  SELL_DIAG_BUILD_ROW_PTR,
  SELL_DIAG_BUILD_COL_IDX_IN,
  SELL_DIAG_BUILD_VALUES_IN,
  SELL_DIAG_BUILD_DIAG_PTR,
  SELL_DIAG_BUILD_REM_PTR,
  SELL_DIAG_BUILD_DIAG_OFFSET,
  SELL_DIAG_BUILD_DIAG_VALUES = 6,  // spmvjit_build_diagonals (scratch: _count and _width too)
  SELL_DIAG_BUILD_SCRATCH = 7,
  SELL_DIAG_BUILD_REM_COL = 6,  // spmvjit_build_remainder
  SELL_DIAG_BUILD_REM_VALUES = 7
};
enum { SELL_DIAG_BUILD_N_C, SELL_DIAG_BUILD_N_SLICES, SELL_DIAG_BUILD_N_MIN_COUNT, SELL_DIAG_BUILD_N_TABLE };
// Beyond a[]: SpmvArgs::y holds a byte per slice, set by the count where the slice is full (none of
// its rows past the matrix, every one holding the slice's kept diagonals, in order, and nothing
// else: its entries are C * diagonals contiguous values), so the later passes skip it and
// spmvjit_build_diagonals_full places it. values_table, when set, is the sorted CODE8 table
// (n[SELL_DIAG_BUILD_N_TABLE] patterns, code 0 the zero): the value arrays then receive codes, one
// byte per slot, and SpmvArgs::scratch (an unsigned 64-bit count) the number of values the table
// lacks.
// spmvjit_build_diagonals_full: threads per block, and per slice (a group of them takes a slice).
enum { SELL_DIAG_SLICE_BLOCK = 128, SELL_DIAG_FULL_GROUP = 32 };

#if defined(__CUDACC__) || defined(__CUDACC_RTC__) || defined(__HIPCC__) || defined(__HIPCC_RTC__)
#define SPMVJIT_SELL_DIAG_FN static __device__ __forceinline__
#else
#define SPMVJIT_SELL_DIAG_FN static inline
#endif

// One slice's diagonals, the same on the host and a device: the offsets (col - row) holding at
// least min_count of its entries, ascending, into off[0, kept). each(f) calls f(offset) for every
// entry of the slice and stops when f returns false. Counted in a sorted table of
// SELL_DIAG_TABLE distinct offsets (off, count: that many entries each); returns the number kept,
// or -1 when the slice has more distinct offsets than that. The choice depends on the slice alone,
// so slices are chosen in parallel. T holds an offset and a slice's entry count: a device takes
// its index type, as the table is a thread's local memory.
template <class T, class Each>
SPMVJIT_SELL_DIAG_FN long long sell_diag_table(Each&& each, long long min_count, T* off, T* count) {
  long long m = 0, next = 0;  // next: the slot after the last one found (rows run in column order)
  bool full = false;
  each([&](long long d) {
    if (next < m && off[next] == d) {
      ++count[next++];
      return true;
    }
    long long lo = 0, hi = m;
    while (lo < hi) {
      const long long mid = (lo + hi) >> 1;
      if (off[mid] < d)
        lo = mid + 1;
      else
        hi = mid;
    }
    next = lo + 1;
    if (lo < m && off[lo] == d) {
      ++count[lo];
      return true;
    }
    if (m == SELL_DIAG_TABLE) {
      full = true;
      return false;
    }
    for (long long j = m; j > lo; --j) off[j] = off[j - 1], count[j] = count[j - 1];
    off[lo] = T(d), count[lo] = 1, ++m;
    return true;
  });
  if (full) return -1;
  long long kept = 0;
  for (long long j = 0; j < m; ++j)
    if (count[j] >= min_count) off[kept++] = off[j];
  return kept;
}

#endif  // SPMVJIT_CONTRACT_SELL_DIAG_H
