// GPU CSR (scalar): one thread per row; the baseline. Rows of very different lengths idle lanes.
// Launch: ceil(rows / CSR_GPU_BLOCK) blocks.
#include "../contract/csr.h"
#include "prelude.h"

template <int E>
SPMVJIT_DEVICE void csr_scalar(const SpmvArgs& a) {
  const i64 r = i64(blockIdx.x) * CSR_GPU_BLOCK + threadIdx.x;
  if (r >= a.rows) return;
  const I* SPMVJIT_RESTRICT rp = (const I*)a.a[CSR_ROW_PTR];
  const I* SPMVJIT_RESTRICT ci = (const I*)a.a[CSR_COL_IDX];
  SPMVJIT_DECLARE_VALUES(va, a, CSR_VALUES);
  const V* SPMVJIT_RESTRICT x = (const V*)a.x;
  V* SPMVJIT_RESTRICT y = (V*)a.y;
  const i64 b = spmvjit_ldg(rp + r), e = spmvjit_ldg(rp + r + 1);
  V sum = 0;
  i64 k = b;
  // Four independent loads in flight before their first use.
  for (; k + 4 <= e; k += 4) {
    const I c0 = spmvjit_ld_stream(ci + k), c1 = spmvjit_ld_stream(ci + k + 1);
    const I c2 = spmvjit_ld_stream(ci + k + 2), c3 = spmvjit_ld_stream(ci + k + 3);
    const V v0 = spmvjit_ld_stream(va + k), v1 = spmvjit_ld_stream(va + k + 1);
    const V v2 = spmvjit_ld_stream(va + k + 2), v3 = spmvjit_ld_stream(va + k + 3);
    sum += v0 * spmvjit_ldg(x + c0);
    sum += v1 * spmvjit_ldg(x + c1);
    sum += v2 * spmvjit_ldg(x + c2);
    sum += v3 * spmvjit_ldg(x + c3);
  }
  for (; k < e; ++k) sum += spmvjit_ld_stream(va + k) * spmvjit_ldg(x + spmvjit_ld_stream(ci + k));
  y[r] = spmvjit_epilogue<E>(sum, y, r, spmvjit_alpha(a), spmvjit_beta(a));
}

SPMVJIT_EXPORT_KERNEL(csr_scalar, spmvjit_part, CSR_GPU_BLOCK)
