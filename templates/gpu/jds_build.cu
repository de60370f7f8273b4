// JDS device build (engine/formats/jds.cpp, convert_device): rows sorted stably by decreasing
// length without a sort. The longest row W; a key per length present (flags scanned: the number
// of longer lengths present); per window of rows, its rows of each key, scanned key-major into
// the sorted position of each window's first row of each key, so one thread per window places
// its rows in order (the host's counting sort exactly). The jagged diagonals' sizes are read off
// the same scan; then one thread per stored entry finds its diagonal and copies it.
// Grid-stride, no cooperation inside a block: any grid works.
#include "../contract/device_plan.h"
#include "../contract/jds.h"
#include "build_rows.cuh"
#include "prelude.h"

SPMVJIT_DEVICE i64 jds_window_end(i64 w, i64 window, i64 rows) {
  return (w + 1) * window < rows ? (w + 1) * window : rows;
}

// Clears n[JDS_BUILD_N_ZERO] entries of a[JDS_BUILD_ZERO].
extern "C" __global__ void spmvjit_build_zero(const SpmvArgs a) {
  build_zero((i64*)a.a[JDS_BUILD_ZERO], a.n[JDS_BUILD_N_ZERO]);
}

// The longest row W into the width cell (zeroed before).
extern "C" __global__ void spmvjit_build_width(const SpmvArgs a) {
  build_row_max((const I*)a.a[JDS_BUILD_ROW_PTR], a.rows, (i64*)a.a[JDS_BUILD_WIDTH]);
}

// Flags the lengths present (at W - length, so the scan numbers them from the longest). Rows of
// one length store the same 1: no atomics needed.
extern "C" __global__ void spmvjit_build_keys(const SpmvArgs a) {
  const I* SPMVJIT_RESTRICT rp = (const I*)a.a[JDS_BUILD_ROW_PTR];
  i64* keys = (i64*)a.a[JDS_BUILD_KEYS];
  const i64 w = a.n[JDS_BUILD_N_WIDTH];
  for (i64 r = build_first(); r < a.rows; r += build_stride()) {
    i64* flag = keys + w - build_row_len(rp, r);
    if (!*flag) *flag = 1;
  }
}

// Per window, its rows of each key into ranks[key * windows + window] (each thread clears and
// counts its own window's entries only).
extern "C" __global__ void spmvjit_build_rank_counts(const SpmvArgs a) {
  const I* SPMVJIT_RESTRICT rp = (const I*)a.a[JDS_BUILD_ROW_PTR];
  const i64* SPMVJIT_RESTRICT keys = (const i64*)a.a[JDS_BUILD_KEYS];
  i64* ranks = (i64*)a.a[JDS_BUILD_RANKS];
  const i64 w = a.n[JDS_BUILD_N_WIDTH], nkeys = a.n[JDS_BUILD_N_KEYS], window = a.n[JDS_BUILD_N_WINDOW];
  const i64 windows = a.n[JDS_BUILD_N_WINDOWS];
  for (i64 win = build_first(); win < windows; win += build_stride()) {
    for (i64 k = 0; k < nkeys; ++k) ranks[k * windows + win] = 0;
    for (i64 r = win * window, e = jds_window_end(win, window, a.rows); r < e; ++r)
      ++ranks[spmvjit_ldg(keys + w - build_row_len(rp, r)) * windows + win];
  }
}

// Diagonal j holds one entry of every row longer than j: those rows are the keys before the
// key of length j's first longer length, whose first sorted position the scanned ranks give
// (at key * windows; the total, rows, at nkeys * windows). Scanned afterwards into jd_ptr.
extern "C" __global__ void spmvjit_build_diagonals(const SpmvArgs a) {
  const i64* SPMVJIT_RESTRICT keys = (const i64*)a.a[JDS_BUILD_KEYS];
  const i64* SPMVJIT_RESTRICT ranks = (const i64*)a.a[JDS_BUILD_RANKS];
  i64* jd = (i64*)a.a[JDS_BUILD_JD_PTR];
  const i64 w = a.n[JDS_BUILD_N_WIDTH], windows = a.n[JDS_BUILD_N_WINDOWS];
  for (i64 j = build_first(); j < w; j += build_stride()) jd[j] = ranks[keys[w - j] * windows];
}

// Each window's rows at their sorted positions, in row order (stable).
extern "C" __global__ void spmvjit_build_perm(const SpmvArgs a) {
  const I* SPMVJIT_RESTRICT rp = (const I*)a.a[JDS_BUILD_ROW_PTR];
  const i64* SPMVJIT_RESTRICT keys = (const i64*)a.a[JDS_BUILD_KEYS];
  i64* ranks = (i64*)a.a[JDS_BUILD_RANKS];
  I* perm = (I*)a.a[JDS_BUILD_PERM];
  const i64 w = a.n[JDS_BUILD_N_WIDTH], window = a.n[JDS_BUILD_N_WINDOW], windows = a.n[JDS_BUILD_N_WINDOWS];
  for (i64 win = build_first(); win < windows; win += build_stride())
    for (i64 r = win * window, e = jds_window_end(win, window, a.rows); r < e; ++r)
      perm[ranks[spmvjit_ldg(keys + w - build_row_len(rp, r)) * windows + win]++] = I(r);
}

// Stored entry e lies in the last diagonal j starting at or before it: entry j of sorted row
// e - jd_ptr[j].
extern "C" __global__ void spmvjit_build_fill(const SpmvArgs a) {
  const I* SPMVJIT_RESTRICT rp = (const I*)a.a[JDS_BUILD_ROW_PTR];
  const I* SPMVJIT_RESTRICT ci = (const I*)a.a[JDS_BUILD_COL_IDX_IN];
  const V* SPMVJIT_RESTRICT va = (const V*)a.a[JDS_BUILD_VALUES_IN];
  const i64* SPMVJIT_RESTRICT jd = (const i64*)a.a[JDS_BUILD_JD_PTR];
  const I* SPMVJIT_RESTRICT perm = (const I*)a.a[JDS_BUILD_PERM];
  I* col = (I*)a.a[JDS_BUILD_COL_IDX];
  V* val = (V*)a.a[JDS_BUILD_VALUES];
  const i64 w = a.n[JDS_BUILD_N_WIDTH], nnz = a.n[JDS_BUILD_N_NNZ], base = a.n[DP_N_BASE];
  for (i64 e = build_first(); e < nnz; e += build_stride()) {
    const i64 j = build_row_of(jd, w, 0, e);
    const i64 src = i64(spmvjit_ldg(rp + spmvjit_ldg(perm + e - spmvjit_ldg(jd + j)))) - base + j;
    col[e] = I(spmvjit_ldg(ci + src) - I(base));
    val[e] = spmvjit_ldg(va + src);
  }
}
