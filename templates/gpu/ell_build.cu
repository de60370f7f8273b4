// ELL device build (engine/formats/ell.cpp, convert_device): the width (the longest row, one
// atomic maximum per thread), then one thread per row writes its padded columns, column-major so
// each step's stores are coalesced. Grid-stride: any grid works.
#include "../contract/device_plan.h"
#include "../contract/ell.h"
#include "build_rows.cuh"
#include "prelude.h"

// Pass 1: the width cell to 0.
extern "C" __global__ void spmvjit_build_width_init(const SpmvArgs a) {
  build_zero((i64*)a.a[ELL_BUILD_WIDTH], 1);
}

// Pass 2: the longest row into the width cell.
extern "C" __global__ void spmvjit_build_width(const SpmvArgs a) {
  build_row_max((const I*)a.a[ELL_BUILD_ROW_PTR], a.rows, (i64*)a.a[ELL_BUILD_WIDTH]);
}

// Pass 3: every row padded to n[ELL_BUILD_N_WIDTH] entries.
extern "C" __global__ void spmvjit_build_fill(const SpmvArgs a) {
  const I* SPMVJIT_RESTRICT rp = (const I*)a.a[ELL_BUILD_ROW_PTR];
  const I* SPMVJIT_RESTRICT ci = (const I*)a.a[ELL_BUILD_COL_IDX_IN];
  const V* SPMVJIT_RESTRICT va = (const V*)a.a[ELL_BUILD_VALUES_IN];
  I* col = (I*)a.a[ELL_BUILD_COL_IDX];
  V* val = (V*)a.a[ELL_BUILD_VALUES];
  const i64 width = a.n[ELL_BUILD_N_WIDTH], base = a.n[DP_N_BASE];
  for (i64 r = build_first(); r < a.rows; r += build_stride())
    build_ell_row(rp, ci, va, col, val, r, width, a.rows, base);
}
