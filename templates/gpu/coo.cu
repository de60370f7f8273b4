// GPU COO kernels: spmvjit_scale writes y = beta*y (0 when beta == 0), then spmvjit_part sums
// alpha-scaled products per warp chunk with segmented reductions and atomics.
#include "prelude.h"

#include "../contract/coo.h"
#include "coo_segments.cuh"

template <int E>
SPMVJIT_DEVICE void coo_scale(const SpmvArgs& a) {
  spmvjit_grid_launch_dependents();  // spmvjit_part streams its entries in this step's tail
  V* y = (V*)a.y;
  const i64 r = (i64)blockIdx.x * blockDim.x + threadIdx.x;
  if (r < a.rows) y[r] = spmvjit_beta_zero<E>(spmvjit_beta(a)) ? V(0) : spmvjit_beta(a) * y[r];
}

template <int E>
SPMVJIT_DEVICE void coo_part(const SpmvArgs& a) {
  coo_segments<E>((const I*)a.a[COO_ROW_IDX], (const I*)a.a[COO_COL_IDX], SPMVJIT_VALUES_AT(a, COO_VALUES),
                  (const V*)a.x, (V*)a.y, a.n[COO_N_NNZ], a.n[COO_N_WARP_ENTRIES], spmvjit_alpha(a));
}

SPMVJIT_EXPORT_KERNEL(coo_scale, spmvjit_scale, COO_GPU_BLOCK)
SPMVJIT_EXPORT_KERNEL(coo_part, spmvjit_part, COO_GPU_BLOCK)
