// GPU JDS kernel: one thread per sorted row walks the jagged diagonals (coalesced: neighbouring
// threads read neighbouring entries) until the diagonal no longer reaches it; y[perm[i]].
#include "prelude.h"
#include "../contract/jds.h"

template <int E>
SPMVJIT_DEVICE void jds_part(const SpmvArgs& a) {
  const i64* SPMVJIT_RESTRICT jd = (const i64*)a.a[JDS_JD_PTR];
  const I* SPMVJIT_RESTRICT col = (const I*)a.a[JDS_COL_IDX];
  SPMVJIT_DECLARE_VALUES(val, a, JDS_VALUES);
  const I* SPMVJIT_RESTRICT perm = (const I*)a.a[JDS_PERM];
  const V* SPMVJIT_RESTRICT x = (const V*)a.x;
  V* y = (V*)a.y;
  const i64 i = (i64)blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= a.rows) return;
  const i64 w = a.n[JDS_N_DIAGONALS];
  V s = 0;
  i64 start = spmvjit_ldg(jd);
  for (i64 j = 0; j < w; ++j) {
    const i64 next = spmvjit_ldg(jd + j + 1);
    if (next - start <= i) break;
    s += spmvjit_ld_stream(val + start + i) * spmvjit_ldg(x + spmvjit_ld_stream(col + start + i));
    start = next;
  }
  const i64 r = spmvjit_ldg(perm + i);
  y[r] = spmvjit_epilogue<E>(s, y, r, spmvjit_alpha(a), spmvjit_beta(a));
}

SPMVJIT_EXPORT_KERNEL(jds_part, spmvjit_part, JDS_GPU_BLOCK)
