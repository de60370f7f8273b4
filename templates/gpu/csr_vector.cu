// GPU CSR-vector kernel: L consecutive threads of a warp share one row (strided over its
// nonzeros), then a shuffle tree sums the L partial sums. L is a power of two <= warp size.
#include "../contract/csr_vector.h"
#include "prelude.h"
#ifndef SPMVJIT_L
#define SPMVJIT_L 8
#endif

template <int E>
SPMVJIT_DEVICE void csr_vector_part(const SpmvArgs& a) {
  constexpr int L = SPMVJIT_L;
  static_assert(L >= 1 && L <= SPMVJIT_WARP && (L & (L - 1)) == 0, "L: power of two <= warp");
  const I* SPMVJIT_RESTRICT rp = (const I*)a.a[CSR_VECTOR_ROW_PTR];
  const I* SPMVJIT_RESTRICT ci = (const I*)a.a[CSR_VECTOR_COL_IDX];
  SPMVJIT_DECLARE_VALUES(va, a, CSR_VECTOR_VALUES);
  const V* SPMVJIT_RESTRICT x = (const V*)a.x;
  V* y = (V*)a.y;
  const i64 tid = (i64)blockIdx.x * blockDim.x + threadIdx.x;
  const i64 r = tid / L;
  const int g = spmvjit_lane() & (L - 1);
  V s = 0;
  if (r < a.rows) {
    const i64 e = spmvjit_ldg(rp + r + 1);
    for (i64 k = spmvjit_ldg(rp + r) + g; k < e; k += L)
      s += spmvjit_ld_stream(va + k) * spmvjit_ldg(x + spmvjit_ld_stream(ci + k));
  }
  // Every lane takes part in the shuffles (full mask); only group leaders use the result.
  for (int d = L / 2; d > 0; d >>= 1) s += spmvjit_shfl_down(s, d);
  if (g == 0 && r < a.rows) y[r] = spmvjit_epilogue<E>(s, y, r, spmvjit_alpha(a), spmvjit_beta(a));
}

SPMVJIT_EXPORT_KERNEL(csr_vector_part, spmvjit_part, CSR_VECTOR_GPU_BLOCK)
