// GPU SELL-P kernel: one block of C*t threads per slice; thread q = i*t + l serves row i, lane l
// of t, reading slot q of every chunk (coalesced), then the t lanes of a row reduce by shuffles.
// Launch: grid = slices, block = C*t.
#include "prelude.h"
#include "../contract/sellp.h"
#ifndef SPMVJIT_C
#define SPMVJIT_C SPMVJIT_WARP
#endif
#ifndef SPMVJIT_t
#define SPMVJIT_t 4
#endif
#ifndef SPMVJIT_PERMUTED
#define SPMVJIT_PERMUTED 1
#endif
// The shuffles below run with every lane of a warp taking part: a block must be whole warps.
#if (SPMVJIT_C * SPMVJIT_t) % SPMVJIT_WARP != 0
#error "sellp: C*t must be a multiple of SPMVJIT_WARP"
#endif
static_assert(SPMVJIT_C * SPMVJIT_t <= SELLP_GPU_MAX_BLOCK, "sellp: C*t threads exceed a block");

template <int E>
SPMVJIT_DEVICE void sellp_part(const SpmvArgs& a) {
  constexpr i64 C = SPMVJIT_C, T = SPMVJIT_t, CT = C * T;
  const i64* SPMVJIT_RESTRICT sp = (const i64*)a.a[SELLP_SLICE_PTR];
  const I* SPMVJIT_RESTRICT col = (const I*)a.a[SELLP_COL_IDX];
  SPMVJIT_DECLARE_VALUES(val, a, SELLP_VALUES);
  const I* SPMVJIT_RESTRICT perm = (const I*)a.a[SELLP_PERM];
  const V* SPMVJIT_RESTRICT x = (const V*)a.x;
  V* y = (V*)a.y;
  const i64 s = i64(blockIdx.x);
  const i64 q = i64(threadIdx.x);
  const i64 begin = spmvjit_ldg(sp + s), end = spmvjit_ldg(sp + s + 1);
  V sum = 0;
  for (i64 k = begin + q; k < end; k += CT)
    sum += spmvjit_ld_stream(val + k) * spmvjit_ldg(x + spmvjit_ld_stream(col + k));
  // Every thread of the warp reaches the shuffles: groups of T lanes are T-aligned.
#pragma unroll
  for (int d = int(T) / 2; d > 0; d /= 2) sum += spmvjit_shfl_down(sum, d);
  const i64 pos = s * C + q / T;
  if (q % T == 0 && pos < a.rows) {
    const i64 r = SPMVJIT_PERMUTED ? (i64)spmvjit_ldg(perm + pos) : pos;
    y[r] = spmvjit_epilogue<E>(sum, y, r, spmvjit_alpha(a), spmvjit_beta(a));
  }
}

SPMVJIT_EXPORT_KERNEL(sellp_part, spmvjit_part, SPMVJIT_C * SPMVJIT_t)
