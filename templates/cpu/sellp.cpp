// CPU SELL-P kernel: a slice is a run of chunks of C*t slots, row i owning t consecutive slots
// of each chunk; C*t SIMD accumulators, reduced t at a time per row at the end of the slice.
#include "prelude.h"
#include "../contract/sellp.h"
#ifndef SPMVJIT_C
#define SPMVJIT_C 8
#endif
#ifndef SPMVJIT_t
#define SPMVJIT_t 2
#endif
#ifndef SPMVJIT_PERMUTED
#define SPMVJIT_PERMUTED 1
#endif

template <int E>
static void sellp_part(const SpmvArgs& a, i64 p) {
  constexpr i64 C = SPMVJIT_C, T = SPMVJIT_t, CT = C * T;
  const i64* SPMVJIT_RESTRICT sp = (const i64*)a.a[SELLP_SLICE_PTR];
  const I* SPMVJIT_RESTRICT col = (const I*)a.a[SELLP_COL_IDX];
  SPMVJIT_DECLARE_VALUES(val, a, SELLP_VALUES);
  const I* SPMVJIT_RESTRICT perm = (const I*)a.a[SELLP_PERM];
  const i64* parts = (const i64*)a.a[SELLP_PARTS];
  const V* SPMVJIT_RESTRICT x = (const V*)a.x;
  V* SPMVJIT_RESTRICT y = (V*)a.y;
  const V alpha = spmvjit_alpha(a), beta = spmvjit_beta(a);
  for (i64 s = parts[p]; s < parts[p + 1]; ++s) {
    V acc[CT];
    for (i64 q = 0; q < CT; ++q) acc[q] = 0;
    const I* cs = col + sp[s];
    const spmvjit_values_t vs = val + sp[s];
    const i64 chunks = (sp[s + 1] - sp[s]) / CT;
    for (i64 k = 0; k < chunks; ++k) {
#pragma clang loop vectorize(enable)
      for (i64 q = 0; q < CT; ++q) acc[q] += vs[k * CT + q] * x[cs[k * CT + q]];
    }
    const i64 row0 = s * C;
    const i64 lim = a.rows - row0 < C ? a.rows - row0 : C;
    for (i64 i = 0; i < lim; ++i) {
      V sum = 0;
      for (i64 l = 0; l < T; ++l) sum += acc[i * T + l];
      const i64 r = SPMVJIT_PERMUTED ? (i64)perm[row0 + i] : row0 + i;
      y[r] = spmvjit_epilogue<E>(sum, y, r, alpha, beta);
    }
  }
}

SPMVJIT_EXPORT(sellp_part, spmvjit_part)
