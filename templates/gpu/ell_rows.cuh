// GPU library piece shared by the ELL and HYB templates: one thread per row over the padded
// columns (column-major, so each step's loads are coalesced across the warp). Format-neutral:
// the caller names its slots of the column indices (I) and values (V), of the width and of the
// column stride.
#ifndef SPMVJIT_ELL_ROWS_INCLUDED
#define SPMVJIT_ELL_ROWS_INCLUDED
#include "prelude.h"

template <int E, int COL, int VAL, int WIDTH, int STRIDE>
SPMVJIT_DEVICE void ell_rows(const SpmvArgs& a) {
  const I* SPMVJIT_RESTRICT col = (const I*)a.a[COL];
  SPMVJIT_DECLARE_VALUES(val, a, VAL);
  const V* SPMVJIT_RESTRICT x = (const V*)a.x;
  V* y = (V*)a.y;
  spmvjit_grid_launch_dependents();  // HYB's tail step streams its entries in this step's tail
  const i64 r = (i64)blockIdx.x * blockDim.x + threadIdx.x;
  if (r >= a.rows) return;
  const i64 w = a.n[WIDTH], stride = a.n[STRIDE];
  V s = 0;
  for (i64 j = 0; j < w; ++j) {
    const i64 k = j * stride + r;
    s += spmvjit_ld_stream(val + k) * spmvjit_ldg(x + spmvjit_ld_stream(col + k));
  }
  y[r] = spmvjit_epilogue<E>(s, y, r, spmvjit_alpha(a), spmvjit_beta(a));
}

#endif  // SPMVJIT_ELL_ROWS_INCLUDED
