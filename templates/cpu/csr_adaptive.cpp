// CPU CSR-adaptive kernel: the GPU format's row blocks and long-row chunks run as plain scalar
// CSR loops, so the format works (and is tested) on every backend; each step's grid is
// n[ADAPTIVE_N_PARTS] parts.
// spmvjit_part_<e>: part p takes an equal share of the row blocks and skips long rows;
// spmvjit_long_<e>: part p takes an equal share of the chunks and computes, for each chunk that
// starts a long row, that whole row (chunk by chunk).
// With COL_BITS 16 the column indices are 16-bit offsets from each row block's or chunk's base.
#include "../contract/csr_adaptive.h"
#include "prelude.h"

#ifndef SPMVJIT_COL_BITS
#define SPMVJIT_COL_BITS 0
#endif
#if SPMVJIT_COL_BITS == 16
typedef unsigned short adaptive_col_t;
static inline i64 adaptive_col_base(const SpmvArgs& a, i64 s) {
  return ((const I*)a.a[ADAPTIVE_COL_BASE])[s];
}
#elif SPMVJIT_COL_BITS == 0
typedef I adaptive_col_t;
static inline i64 adaptive_col_base(const SpmvArgs&, i64) { return 0; }
#else
#error "SPMVJIT_COL_BITS must be 0 or 16"
#endif

// sum plus values[k] * x[cb + col[k]] for k in [k0, k1), in order.
static inline V adaptive_sum(const SpmvArgs& a, i64 cb, i64 k0, i64 k1, V sum) {
  const adaptive_col_t* SPMVJIT_RESTRICT ci = (const adaptive_col_t*)a.a[ADAPTIVE_COL_IDX];
  SPMVJIT_DECLARE_VALUES(va, a, ADAPTIVE_VALUES);
  const V* SPMVJIT_RESTRICT x = (const V*)a.x + cb;
  for (i64 k = k0; k < k1; ++k) sum += va[k] * x[ci[k]];
  return sum;
}

template <int E>
static void adaptive_stream(const SpmvArgs& a, i64 p) {
  const I* rp = (const I*)a.a[ADAPTIVE_ROW_PTR];
  const I* blk = (const I*)a.a[ADAPTIVE_ROW_BLOCKS];
  V* SPMVJIT_RESTRICT y = (V*)a.y;
  const i64 nb = a.n[ADAPTIVE_N_BLOCKS], parts = a.n[ADAPTIVE_N_PARTS];
  for (i64 b = nb * p / parts; b < nb * (p + 1) / parts; ++b) {
    const i64 r0 = blk[b], r1 = blk[b + 1];
    if (i64(rp[r1]) - i64(rp[r0]) > ADAPTIVE_S) continue;  // a long row: the long step's
    const i64 cb = adaptive_col_base(a, b);
    for (i64 r = r0; r < r1; ++r)
      y[r] = spmvjit_epilogue<E>(adaptive_sum(a, cb, rp[r], rp[r + 1], V(0)), y, r, spmvjit_alpha(a),
                                 spmvjit_beta(a));
  }
}

template <int E>
static void adaptive_long(const SpmvArgs& a, i64 p) {
  const I* rp = (const I*)a.a[ADAPTIVE_ROW_PTR];
  const I* crow = (const I*)a.a[ADAPTIVE_CHUNK_ROW];
  const I* cstart = (const I*)a.a[ADAPTIVE_CHUNK_START];
  V* SPMVJIT_RESTRICT y = (V*)a.y;
  const i64 nb = a.n[ADAPTIVE_N_BLOCKS], nc = a.n[ADAPTIVE_N_CHUNKS], parts = a.n[ADAPTIVE_N_PARTS];
  for (i64 c = nc * p / parts; c < nc * (p + 1) / parts; ++c) {
    const i64 r = crow[c], e = rp[r + 1];
    if (cstart[c] != rp[r]) continue;  // not the row's first chunk
    V sum = 0;
    for (i64 d = c; d < nc && crow[d] == r; ++d) {
      const i64 k0 = cstart[d], k1 = k0 + ADAPTIVE_S < e ? k0 + ADAPTIVE_S : e;
      sum = adaptive_sum(a, adaptive_col_base(a, nb + d), k0, k1, sum);
    }
    y[r] = spmvjit_epilogue<E>(sum, y, r, spmvjit_alpha(a), spmvjit_beta(a));
  }
}

SPMVJIT_EXPORT(adaptive_stream, spmvjit_part)
SPMVJIT_EXPORT(adaptive_long, spmvjit_long)
