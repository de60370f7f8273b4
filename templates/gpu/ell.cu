// GPU ELL kernel: one thread per row walks the W padded columns; column-major storage makes
// each step's loads coalesced across the warp.
// Arrays: a[0] col_idx (I, column-major, stride n[1]), a[1] values (V). n[0] = W, n[1] = rows.
#include "prelude.h"
#define ELL_BLOCK 256

#include "ell_rows.cuh"

SPMVJIT_EXPORT_KERNEL(ell_rows, spmvjit_part, ELL_BLOCK)
