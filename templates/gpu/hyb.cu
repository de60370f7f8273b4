// GPU HYB kernels: spmvjit_part (one thread per row) sums the ELL part and applies the full
// epilogue (beta included); spmvjit_tail then adds alpha * the COO tail with warp segmented
// sums and atomics, so beta is applied exactly once.
// Arrays: a[0] ell_col (I, column-major, stride n[1]), a[1] ell_values (V), a[2] tail_row (I,
// sorted), a[3] tail_col (I), a[4] tail_values (V). n[0] = K, n[1] = rows, n[2] = tail
// entries, n[3] = tail entries per warp.
#ifndef SPMVJIT_PRELUDE_INCLUDED
#include "prelude_cuda.h"
#endif
#define HYB_BLOCK 256

#ifndef SPMVJIT_COO_SEGMENTS_INCLUDED
#include "coo_segments.cuh"
#endif

template <int E>
SPMVJIT_DEVICE void hyb_ell(const SpmvArgs& a) {
  const I* SPMVJIT_RESTRICT col = (const I*)a.a[0];
  const V* SPMVJIT_RESTRICT val = (const V*)a.a[1];
  const V* SPMVJIT_RESTRICT x = (const V*)a.x;
  V* y = (V*)a.y;
  const i64 r = (i64)blockIdx.x * blockDim.x + threadIdx.x;
  if (r >= a.rows) return;
  const i64 k = a.n[0], stride = a.n[1];
  V s = 0;
  for (i64 j = 0; j < k; ++j) {
    const i64 q = j * stride + r;
    s += spmvjit_ld_stream(val + q) * spmvjit_ldg(x + spmvjit_ld_stream(col + q));
  }
  y[r] = spmvjit_epilogue<E>(s, y, r, (V)a.alpha, (V)a.beta);
}

template <int E>
SPMVJIT_DEVICE void hyb_tail(const SpmvArgs& a) {
  coo_segments<E>((const I*)a.a[2], (const I*)a.a[3], (const V*)a.a[4], (const V*)a.x, (V*)a.y,
                  a.n[2], a.n[3], (V)a.alpha);
}

SPMVJIT_EXPORT_KERNEL(hyb_ell, spmvjit_part, HYB_BLOCK)
SPMVJIT_EXPORT_KERNEL(hyb_tail, spmvjit_tail, HYB_BLOCK)
