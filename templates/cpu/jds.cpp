// CPU JDS kernel: blocks of B sorted rows; each jagged diagonal contributes a unit-stride run to
// the block's accumulators (vectorized across rows) until the diagonal is shorter than the
// block's first row; results land in original order through perm.
#include "prelude.h"
#include "../contract/jds.h"

template <int E>
static void jds_part(const SpmvArgs& a, i64 p) {
  constexpr i64 B = JDS_CPU_ROWS;
  const i64* SPMVJIT_RESTRICT jd = (const i64*)a.a[JDS_JD_PTR];
  const I* SPMVJIT_RESTRICT col = (const I*)a.a[JDS_COL_IDX];
  SPMVJIT_DECLARE_VALUES(val, a, JDS_VALUES);
  const I* SPMVJIT_RESTRICT perm = (const I*)a.a[JDS_PERM];
  const i64* parts = (const i64*)a.a[JDS_PARTS];
  const V* SPMVJIT_RESTRICT x = (const V*)a.x;
  V* SPMVJIT_RESTRICT y = (V*)a.y;
  const V alpha = spmvjit_alpha(a), beta = spmvjit_beta(a);
  const i64 w = a.n[JDS_N_DIAGONALS];
  for (i64 sb = parts[p]; sb < parts[p + 1]; sb += B) {
    const i64 n = parts[p + 1] - sb < B ? parts[p + 1] - sb : B;
    V acc[B];
    for (i64 i = 0; i < B; ++i) acc[i] = 0;
    for (i64 j = 0; j < w; ++j) {
      const i64 cnt = jd[j + 1] - jd[j];
      if (cnt <= sb) break;  // diagonals only get shorter
      const i64 m = cnt - sb < n ? cnt - sb : n;
      const I* SPMVJIT_RESTRICT c = col + jd[j] + sb;
      const spmvjit_values_t SPMVJIT_VALUES_RESTRICT v = val + jd[j] + sb;
#pragma clang loop vectorize(enable)
      for (i64 i = 0; i < m; ++i) acc[i] += v[i] * x[c[i]];
    }
    for (i64 i = 0; i < n; ++i) {
      const i64 r = perm[sb + i];
      y[r] = spmvjit_epilogue<E>(acc[i], y, r, alpha, beta);
    }
  }
}

SPMVJIT_EXPORT(jds_part, spmvjit_part)
