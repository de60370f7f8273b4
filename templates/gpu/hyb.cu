// GPU HYB kernels: spmvjit_part (one thread per row) sums the ELL part and applies the full
// epilogue (beta included); spmvjit_tail then adds alpha * the COO tail with warp segmented
// sums and atomics, so beta is applied exactly once.
#include "prelude.h"

#include "../contract/hyb.h"
#include "coo_segments.cuh"
#include "ell_rows.cuh"

template <int E>
SPMVJIT_DEVICE void hyb_part(const SpmvArgs& a) {
  ell_rows<E, HYB_ELL_COL, HYB_ELL_VALUES, HYB_N_WIDTH, HYB_N_STRIDE>(a);
}

template <int E>
SPMVJIT_DEVICE void hyb_tail(const SpmvArgs& a) {
  coo_segments<E>((const I*)a.a[HYB_TAIL_ROW], (const I*)a.a[HYB_TAIL_COL],
                  SPMVJIT_VALUES_AT(a, HYB_TAIL_VALUES), (const V*)a.x, (V*)a.y, a.n[HYB_N_TAIL],
                  a.n[HYB_N_WARP_ENTRIES], spmvjit_alpha(a));
}

SPMVJIT_EXPORT_KERNEL(hyb_part, spmvjit_part, HYB_GPU_BLOCK)
SPMVJIT_EXPORT_KERNEL(hyb_tail, spmvjit_tail, HYB_GPU_BLOCK)
