// GPU ELL kernel: one thread per row walks the W padded columns; column-major storage makes
// each step's loads coalesced across the warp.
// Arrays: a[0] col_idx (I, column-major, stride n[1]), a[1] values (V). n[0] = W, n[1] = rows.
#ifndef SPMVJIT_PRELUDE_INCLUDED
#include "prelude_cuda.h"
#endif
#define ELL_BLOCK 256

template <int E>
SPMVJIT_DEVICE void ell_part(const SpmvArgs& a) {
  const I* SPMVJIT_RESTRICT col = (const I*)a.a[0];
  const V* SPMVJIT_RESTRICT val = (const V*)a.a[1];
  const V* SPMVJIT_RESTRICT x = (const V*)a.x;
  V* y = (V*)a.y;
  const i64 r = (i64)blockIdx.x * blockDim.x + threadIdx.x;
  if (r >= a.rows) return;
  const i64 w = a.n[0], stride = a.n[1];
  V s = 0;
  for (i64 j = 0; j < w; ++j) {
    const i64 k = j * stride + r;
    s += spmvjit_ld_stream(val + k) * spmvjit_ldg(x + spmvjit_ld_stream(col + k));
  }
  y[r] = spmvjit_epilogue<E>(s, y, r, (V)a.alpha, (V)a.beta);
}

SPMVJIT_EXPORT_KERNEL(ell_part, spmvjit_part, ELL_BLOCK)
