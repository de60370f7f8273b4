// COO device build (engine/formats/coo.cpp, convert_device): the row index of every nonzero, one
// thread per nonzero searching row_ptr, so a long row costs no more than many short ones.
// Grid-stride: any grid works.
#include "../contract/coo.h"
#include "../contract/device_plan.h"
#include "build_rows.cuh"
#include "prelude.h"

extern "C" __global__ void spmvjit_build_rows(const SpmvArgs a) {
  const I* SPMVJIT_RESTRICT rp = (const I*)a.a[COO_BUILD_ROW_PTR];
  I* row = (I*)a.a[COO_BUILD_ROW_IDX];
  const i64 nnz = a.n[COO_BUILD_N_NNZ], base = a.n[DP_N_BASE];
  for (i64 k = build_first(); k < nnz; k += build_stride()) row[k] = I(build_row_of(rp, a.rows, base, k));
}
