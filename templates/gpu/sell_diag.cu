// GPU sliced-ELL-with-diagonals kernel: one thread per row; a kept diagonal is one offset
// (broadcast to the warp) and coalesced values, x read at row + offset (coalesced too); the
// remainder is sliced ELL with explicit columns.
// Launch: grid = ceil(slices*C / SELL_DIAG_GPU_BLOCK), block = SELL_DIAG_GPU_BLOCK.
#include "prelude.h"
#include "../contract/sell_diag.h"
#ifndef SPMVJIT_C
#define SPMVJIT_C SPMVJIT_WARP
#endif

template <int E>
SPMVJIT_DEVICE void sell_diag_part(const SpmvArgs& a) {
  constexpr i64 C = SPMVJIT_C;
  const i64* SPMVJIT_RESTRICT dp = (const i64*)a.a[SELL_DIAG_DIAG_PTR];
  const I* SPMVJIT_RESTRICT doff = (const I*)a.a[SELL_DIAG_DIAG_OFFSET];
  SPMVJIT_DECLARE_VALUES(dval, a, SELL_DIAG_DIAG_VALUES);
  const i64* SPMVJIT_RESTRICT rp = (const i64*)a.a[SELL_DIAG_REM_PTR];
  const I* SPMVJIT_RESTRICT rcol = (const I*)a.a[SELL_DIAG_REM_COL];
  SPMVJIT_DECLARE_VALUES(rval, a, SELL_DIAG_REM_VALUES);
  const V* SPMVJIT_RESTRICT x = (const V*)a.x;
  V* y = (V*)a.y;
  const i64 g = i64(blockIdx.x) * i64(blockDim.x) + i64(threadIdx.x);
  const i64 s = g / C, i = g % C;
  if (s >= a.n[SELL_DIAG_N_SLICES] || g >= a.rows) return;
  V sum = 0;
  const i64 d1 = spmvjit_ldg(dp + s + 1);
  for (i64 j = spmvjit_ldg(dp + s); j < d1; ++j) {
    const i64 c = g + (i64)spmvjit_ldg(doff + j);
    const V v = spmvjit_ld_stream(dval + j * C + i);
    if (c >= 0 && c < a.cols) sum += v * spmvjit_ldg(x + c);
  }
  const i64 r0 = spmvjit_ldg(rp + s), r1 = spmvjit_ldg(rp + s + 1);
  for (i64 k = r0 + i; k < r1; k += C)
    sum += spmvjit_ld_stream(rval + k) * spmvjit_ldg(x + spmvjit_ld_stream(rcol + k));
  y[g] = spmvjit_epilogue<E>(sum, y, g, spmvjit_alpha(a), spmvjit_beta(a));
}

SPMVJIT_EXPORT_KERNEL(sell_diag_part, spmvjit_part, SELL_DIAG_GPU_BLOCK)
