// GPU HYB kernels: spmvjit_part (one thread per row) sums the ELL part and applies the full
// epilogue (beta included); spmvjit_tail then adds alpha * the COO tail with warp segmented
// sums and atomics, so beta is applied exactly once.
// Arrays: a[0] ell_col (I, column-major, stride n[1]), a[1] ell_values (V), a[2] tail_row (I,
// sorted), a[3] tail_col (I), a[4] tail_values (V). n[0] = K, n[1] = rows, n[2] = tail
// entries, n[3] = tail entries per warp.
#include "prelude.h"
#define HYB_BLOCK 256

#include "coo_segments.cuh"
#include "ell_rows.cuh"

template <int E>
SPMVJIT_DEVICE void hyb_tail(const SpmvArgs& a) {
  coo_segments<E>((const I*)a.a[2], (const I*)a.a[3], (const V*)a.a[4], (const V*)a.x, (V*)a.y,
                  a.n[2], a.n[3], (V)a.alpha);
}

SPMVJIT_EXPORT_KERNEL(ell_rows, spmvjit_part, HYB_BLOCK)
SPMVJIT_EXPORT_KERNEL(hyb_tail, spmvjit_tail, HYB_BLOCK)
