// CPU CSR-vector kernel: CSR rows with the row loop unrolled into L independent accumulators
// (L SIMD-friendly lanes), then a scalar remainder and one horizontal sum per row.
#include "../contract/csr_vector.h"
#include "prelude.h"
#ifndef SPMVJIT_L
#define SPMVJIT_L 8
#endif

template <int E>
static void csr_vector_part(const SpmvArgs& a, i64 p) {
  constexpr i64 L = SPMVJIT_L;
  const I* SPMVJIT_RESTRICT rp = (const I*)a.a[CSR_VECTOR_ROW_PTR];
  const I* SPMVJIT_RESTRICT ci = (const I*)a.a[CSR_VECTOR_COL_IDX];
  SPMVJIT_DECLARE_VALUES(va, a, CSR_VECTOR_VALUES);
  const i64* parts = (const i64*)a.a[CSR_VECTOR_PARTS];
  const V* SPMVJIT_RESTRICT x = (const V*)a.x;
  V* SPMVJIT_RESTRICT y = (V*)a.y;
  const V alpha = spmvjit_alpha(a), beta = spmvjit_beta(a);
  for (i64 r = parts[p]; r < parts[p + 1]; ++r) {
    V acc[L];
    for (i64 i = 0; i < L; ++i) acc[i] = 0;
    const i64 e = rp[r + 1];
    i64 k = rp[r];
    for (; k + L <= e; k += L) {
#pragma clang loop vectorize(enable)
      for (i64 i = 0; i < L; ++i) acc[i] += va[k + i] * x[ci[k + i]];
    }
    V sum = 0;
    for (; k < e; ++k) sum += va[k] * x[ci[k]];
    for (i64 i = 0; i < L; ++i) sum += acc[i];
    y[r] = spmvjit_epilogue<E>(sum, y, r, alpha, beta);
  }
}

SPMVJIT_EXPORT(csr_vector_part, spmvjit_part)
