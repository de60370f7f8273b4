// HYB device build (engine/formats/hyb.cpp, convert_device): tail sizes per window of
// HYB_BUILD_WINDOW rows, an exclusive scan of the window sums (the host's), each row's first
// tail entry, then one thread per row writes its ELL columns and one thread per tail entry finds
// its row (a search of the tail offsets) and copies it. Grid-stride: any grid works.
#include "../contract/device_plan.h"
#include "../contract/hyb.h"
#include "build_rows.cuh"
#include "prelude.h"

SPMVJIT_DEVICE i64 hyb_tail_of(const I* rp, i64 r, i64 k) {
  const i64 extra = build_row_len(rp, r) - k;
  return extra > 0 ? extra : 0;
}

// Pass 1: the tail entries of each window of rows.
extern "C" __global__ void spmvjit_build_sizes(const SpmvArgs a) {
  const I* SPMVJIT_RESTRICT rp = (const I*)a.a[HYB_BUILD_ROW_PTR];
  i64* wsum = (i64*)a.a[HYB_BUILD_WINDOW_SUMS];
  const i64 k = a.n[HYB_BUILD_N_WIDTH], windows = a.n[HYB_BUILD_N_WINDOWS];
  for (i64 w = build_first(); w < windows; w += build_stride()) {
    const i64 r1 = (w + 1) * HYB_BUILD_WINDOW < a.rows ? (w + 1) * HYB_BUILD_WINDOW : a.rows;
    i64 sum = 0;
    for (i64 r = w * HYB_BUILD_WINDOW; r < r1; ++r) sum += hyb_tail_of(rp, r, k);
    wsum[w] = sum;
  }
}

// Pass 2: each row's first tail entry from the scanned window sums (total at [windows], also
// written at tail_ptr[rows]).
extern "C" __global__ void spmvjit_build_offsets(const SpmvArgs a) {
  const I* SPMVJIT_RESTRICT rp = (const I*)a.a[HYB_BUILD_ROW_PTR];
  const i64* woff = (const i64*)a.a[HYB_BUILD_WINDOW_SUMS];
  i64* tp = (i64*)a.a[HYB_BUILD_TAIL_PTR];
  const i64 k = a.n[HYB_BUILD_N_WIDTH], windows = a.n[HYB_BUILD_N_WINDOWS];
  if (build_first() == 0) tp[a.rows] = woff[windows];
  for (i64 w = build_first(); w < windows; w += build_stride()) {
    const i64 r1 = (w + 1) * HYB_BUILD_WINDOW < a.rows ? (w + 1) * HYB_BUILD_WINDOW : a.rows;
    i64 run = woff[w];
    for (i64 r = w * HYB_BUILD_WINDOW; r < r1; ++r) {
      tp[r] = run;
      run += hyb_tail_of(rp, r, k);
    }
  }
}

// Pass 3: every row's first K entries, padded, column-major.
extern "C" __global__ void spmvjit_build_ell(const SpmvArgs a) {
  const I* SPMVJIT_RESTRICT rp = (const I*)a.a[HYB_BUILD_ROW_PTR];
  const I* SPMVJIT_RESTRICT ci = (const I*)a.a[HYB_BUILD_COL_IDX_IN];
  const V* SPMVJIT_RESTRICT va = (const V*)a.a[HYB_BUILD_VALUES_IN];
  I* col = (I*)a.a[HYB_BUILD_OUT_COL];
  V* val = (V*)a.a[HYB_BUILD_OUT_VALUES];
  const i64 k = a.n[HYB_BUILD_N_WIDTH], base = a.n[DP_N_BASE];
  for (i64 r = build_first(); r < a.rows; r += build_stride())
    build_ell_row(rp, ci, va, col, val, r, k, a.rows, base);
}

// Pass 4: tail entry e belongs to the last row whose first tail entry is at most e; it is that
// row's entry K + e - tail_ptr[row].
extern "C" __global__ void spmvjit_build_tail(const SpmvArgs a) {
  const I* SPMVJIT_RESTRICT rp = (const I*)a.a[HYB_BUILD_ROW_PTR];
  const I* SPMVJIT_RESTRICT ci = (const I*)a.a[HYB_BUILD_COL_IDX_IN];
  const V* SPMVJIT_RESTRICT va = (const V*)a.a[HYB_BUILD_VALUES_IN];
  const i64* SPMVJIT_RESTRICT tp = (const i64*)a.a[HYB_BUILD_TAIL_PTR];
  I* row = (I*)a.a[HYB_BUILD_OUT_ROW];
  I* col = (I*)a.a[HYB_BUILD_OUT_COL];
  V* val = (V*)a.a[HYB_BUILD_OUT_VALUES];
  const i64 k = a.n[HYB_BUILD_N_WIDTH], tail = a.n[HYB_BUILD_N_TAIL], base = a.n[DP_N_BASE];
  for (i64 e = build_first(); e < tail; e += build_stride()) {
    const i64 r = build_row_of(tp, a.rows, 0, e);
    const i64 src = i64(spmvjit_ldg(rp + r)) - base + k + e - spmvjit_ldg(tp + r);
    row[e] = I(r);
    col[e] = I(spmvjit_ldg(ci + src) - I(base));
    val[e] = spmvjit_ldg(va + src);
  }
}
