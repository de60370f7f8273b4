// CPU CSR-adaptive kernel: the GPU format's row blocks and long-row chunks run as plain scalar
// CSR loops, so the format works (and is tested) on every backend; each step's grid is
// n[ADAPTIVE_N_PARTS] parts.
// spmvjit_part_<e>: part p takes an equal share of the row blocks and skips long rows;
// spmvjit_long_<e>: part p takes an equal share of the chunks and computes, for each chunk that
// starts a long row, that whole row.
#include "../contract/csr_adaptive.h"
#include "prelude.h"

template <int E>
static inline void adaptive_row(const SpmvArgs& a, i64 r) {
  const I* SPMVJIT_RESTRICT rp = (const I*)a.a[ADAPTIVE_ROW_PTR];
  const I* SPMVJIT_RESTRICT ci = (const I*)a.a[ADAPTIVE_COL_IDX];
  SPMVJIT_DECLARE_VALUES(va, a, ADAPTIVE_VALUES);
  const V* SPMVJIT_RESTRICT x = (const V*)a.x;
  V* SPMVJIT_RESTRICT y = (V*)a.y;
  V sum = 0;
  const I e = rp[r + 1];
  for (I k = rp[r]; k < e; ++k) sum += va[k] * x[ci[k]];
  y[r] = spmvjit_epilogue<E>(sum, y, r, (V)a.alpha, (V)a.beta);
}

template <int E>
static void adaptive_stream(const SpmvArgs& a, i64 p) {
  const I* rp = (const I*)a.a[ADAPTIVE_ROW_PTR];
  const I* blk = (const I*)a.a[ADAPTIVE_ROW_BLOCKS];
  const i64 nb = a.n[ADAPTIVE_N_BLOCKS], parts = a.n[ADAPTIVE_N_PARTS];
  for (i64 b = nb * p / parts; b < nb * (p + 1) / parts; ++b) {
    const i64 r0 = blk[b], r1 = blk[b + 1];
    if (i64(rp[r1]) - i64(rp[r0]) > ADAPTIVE_S) continue;  // a long row: the long step's
    for (i64 r = r0; r < r1; ++r) adaptive_row<E>(a, r);
  }
}

template <int E>
static void adaptive_long(const SpmvArgs& a, i64 p) {
  const I* rp = (const I*)a.a[ADAPTIVE_ROW_PTR];
  const I* crow = (const I*)a.a[ADAPTIVE_CHUNK_ROW];
  const I* cstart = (const I*)a.a[ADAPTIVE_CHUNK_START];
  const i64 nc = a.n[ADAPTIVE_N_CHUNKS], parts = a.n[ADAPTIVE_N_PARTS];
  for (i64 c = nc * p / parts; c < nc * (p + 1) / parts; ++c)
    if (cstart[c] == rp[crow[c]]) adaptive_row<E>(a, crow[c]);
}

SPMVJIT_EXPORT(adaptive_stream, spmvjit_part)
SPMVJIT_EXPORT(adaptive_long, spmvjit_long)
