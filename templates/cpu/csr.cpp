// CPU CSR kernel: each part owns a contiguous row range balanced by nonzeros.
#include "../contract/csr.h"
#include "prelude.h"

template <int E>
static void csr_part(const SpmvArgs& a, i64 p) {
  const I* SPMVJIT_RESTRICT rp = (const I*)a.a[CSR_ROW_PTR];
  const I* SPMVJIT_RESTRICT ci = (const I*)a.a[CSR_COL_IDX];
  SPMVJIT_DECLARE_VALUES(va, a, CSR_VALUES);
  const i64* parts = (const i64*)a.a[CSR_PARTS];
  const V* SPMVJIT_RESTRICT x = (const V*)a.x;
  V* SPMVJIT_RESTRICT y = (V*)a.y;
  const V alpha = spmvjit_alpha(a), beta = spmvjit_beta(a);
  for (i64 r = parts[p]; r < parts[p + 1]; ++r) {
    V sum = 0;
    const I e = rp[r + 1];
    // Scalar loads with four partial sums: the rows are short and x is gathered at random, where
    // hardware gathers lose to independent scalar loads (measured on Zen 4: 15.0 vs 19.8 ms).
#pragma clang loop vectorize(disable) interleave_count(4)
    for (I k = rp[r]; k < e; ++k) sum += va[k] * x[ci[k]];
    y[r] = spmvjit_epilogue<E>(sum, y, r, alpha, beta);
  }
}

SPMVJIT_EXPORT(csr_part, spmvjit_part)
