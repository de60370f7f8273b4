// GPU ELL kernel: one thread per row walks the W padded columns; column-major storage makes
// each step's loads coalesced across the warp.
#include "prelude.h"

#include "../contract/ell.h"
#include "ell_rows.cuh"

template <int E>
SPMVJIT_DEVICE void ell_part(const SpmvArgs& a) {
  ell_rows<E, ELL_COL_IDX, ELL_VALUES, ELL_N_WIDTH, ELL_N_STRIDE>(a);
}

SPMVJIT_EXPORT_KERNEL(ell_part, spmvjit_part, ELL_GPU_BLOCK)
