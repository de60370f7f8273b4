// GPU COO kernels: spmvjit_scale writes y = beta*y (0 when beta == 0), then spmvjit_part sums
// alpha-scaled products per warp chunk with segmented reductions and atomics.
// Arrays: a[0] row_idx (I, sorted), a[1] col_idx (I), a[2] values (V). n[0] = nnz,
// n[1] = entries per warp (a multiple of the warp size).
#include "prelude.h"
#define COO_BLOCK 256

#include "coo_segments.cuh"

template <int E>
SPMVJIT_DEVICE void coo_scale(const SpmvArgs& a) {
  spmvjit_grid_launch_dependents();  // spmvjit_part streams its entries in this step's tail
  V* y = (V*)a.y;
  const i64 r = (i64)blockIdx.x * blockDim.x + threadIdx.x;
  if (r < a.rows) y[r] = (E & 1) ? V(0) : (V)a.beta * y[r];
}

template <int E>
SPMVJIT_DEVICE void coo_part(const SpmvArgs& a) {
  coo_segments<E>((const I*)a.a[0], (const I*)a.a[1], (const V*)a.a[2], (const V*)a.x, (V*)a.y,
                  a.n[0], a.n[1], (V)a.alpha);
}

SPMVJIT_EXPORT_KERNEL(coo_scale, spmvjit_scale, COO_BLOCK)
SPMVJIT_EXPORT_KERNEL(coo_part, spmvjit_part, COO_BLOCK)
