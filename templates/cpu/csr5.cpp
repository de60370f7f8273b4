// CPU CSR5 kernel. spmvjit_part_<e>: part p takes an even share of the tiles (equal nonzeros);
// per tile, the SIGMA steps of OMEGA contiguous lanes give the products (SIMD: contiguous loads,
// one gather), then a segmented sum over the tile's entries in CSR order, driven by bit_flag,
// writes rows that start and end inside the tile and leaves the tile's first row (head) and a
// row still open at its end (tail) in the scratch carries. The last part also runs the CSR tail.
// spmvjit_fixup_<e>: adds the carries of rows spanning tiles and writes empty rows.
// Arrays, n[] and scratch: templates/contract/csr5.h.
#include "prelude.h"
#include "../contract/csr5.h"
#ifndef SPMVJIT_OMEGA
#define SPMVJIT_OMEGA 8
#endif
#ifndef SPMVJIT_SIGMA
#define SPMVJIT_SIGMA 16
#endif

typedef unsigned long long u64;
static_assert(SPMVJIT_SIGMA <= CSR5_MAX_SIGMA, "bit_flag has a bit per entry of a lane");

static inline i64 csr5_row(i64 v) { return v < 0 ? ~v : v; }

template <int E>
static void csr5_part(const SpmvArgs& a, i64 p) {
  constexpr i64 W = SPMVJIT_OMEGA, SG = SPMVJIT_SIGMA, S = W * SG;
  const i64* SPMVJIT_RESTRICT tp = (const i64*)a.a[CSR5_TILE_PTR];
  const u64* SPMVJIT_RESTRICT desc = (const u64*)a.a[CSR5_TILE_DESC];
  const I* SPMVJIT_RESTRICT col = (const I*)a.a[CSR5_COL_IDX];
  SPMVJIT_DECLARE_VALUES(val, a, CSR5_VALUES);
  const i64* SPMVJIT_RESTRICT eo_ptr = (const i64*)a.a[CSR5_EO_PTR];
  const I* SPMVJIT_RESTRICT aux = (const I*)a.a[CSR5_AUX];
  const V* SPMVJIT_RESTRICT x = (const V*)a.x;
  V* SPMVJIT_RESTRICT y = (V*)a.y;
  V* SPMVJIT_RESTRICT head = (V*)a.scratch;
  const i64 ntiles = a.n[CSR5_N_TILES], parts = a.n[CSR5_N_PARTS];
  V* SPMVJIT_RESTRICT tail = head + ntiles + 1;
  const V alpha = spmvjit_alpha(a), beta = spmvjit_beta(a);
  const i64 t0 = ntiles * p / parts, t1 = ntiles * (p + 1) / parts;
  V prod[S];
  for (i64 t = t0; t < t1; ++t) {
    const I* cs = col + t * S;
    const spmvjit_values_t vs = val + t * S;
#pragma clang loop vectorize(enable)
    for (i64 q = 0; q < S; ++q) prod[q] = vs[q] * x[cs[q]];
    const i64 r0 = csr5_row(tp[t]), rnext = csr5_row(tp[t + 1]);
    const I* seg_rows = tp[t] < 0 ? aux + eo_ptr[t] : (const I*)0;
    const u64* d = desc + t * W;
    i64 q = -1;
    V sum = 0, h = 0;
    for (i64 l = 0; l < W; ++l) {
      const unsigned flags = (unsigned)d[l];
      for (i64 k = 0; k < SG; ++k) {
        if ((flags >> k) & 1u) {  // a row starts here: the running segment is complete
          if (q == 0) {
            h = sum;
          } else if (q > 0) {
            const i64 r = seg_rows ? (i64)seg_rows[q] : r0 + q;
            y[r] = spmvjit_epilogue<E>(sum, y, r, alpha, beta);
          }
          ++q;
          sum = 0;
        }
        sum += prod[k * W + l];
      }
    }
    V open = 0;
    if (q == 0) {
      h = sum;
    } else {
      const i64 r = seg_rows ? (i64)seg_rows[q] : r0 + q;
      if (r == rnext) open = sum;  // continues into the next tile: the fixup finishes it
      else y[r] = spmvjit_epilogue<E>(sum, y, r, alpha, beta);
    }
    head[t] = h;
    tail[t] = open;
  }
  if (p == parts - 1) {  // the CSR tail: its first row is carried, the others written here
    const I* trp = aux + a.n[CSR5_N_EMPTY_OFFSETS] + a.n[CSR5_N_EMPTY_ROWS];
    const i64 rt = a.n[CSR5_N_TAIL_ROW], nrows = a.n[CSR5_N_TAIL_ROWS];
    V h = 0;
    for (i64 i = 0; i < nrows; ++i) {
      V s = 0;
      const I e = trp[i + 1];
      for (I k = i ? trp[i] : (I)a.n[CSR5_N_TAIL_START]; k < e; ++k) s += val[k] * x[col[k]];
      if (i == 0) h = s;
      else y[rt + i] = spmvjit_epilogue<E>(s, y, rt + i, alpha, beta);
    }
    head[ntiles] = h;
    tail[ntiles] = 0;
  }
}

template <int E>
static void csr5_fixup(const SpmvArgs& a, i64 p) {
  const i64* SPMVJIT_RESTRICT tp = (const i64*)a.a[CSR5_TILE_PTR];
  const I* SPMVJIT_RESTRICT aux = (const I*)a.a[CSR5_AUX];
  V* SPMVJIT_RESTRICT y = (V*)a.y;
  const V* SPMVJIT_RESTRICT head = (const V*)a.scratch;
  const i64 ntiles = a.n[CSR5_N_TILES], parts = a.n[CSR5_N_PARTS];
  const V* SPMVJIT_RESTRICT tail = head + ntiles + 1;
  const V alpha = spmvjit_alpha(a), beta = spmvjit_beta(a);
  // Rows that begin a tile (or the CSR tail): the tail carry of the tile before, plus the heads
  // of every tile that starts inside the row. The first tile of a run owns the write.
  const i64 t0 = (ntiles + 1) * p / parts, t1 = (ntiles + 1) * (p + 1) / parts;
  for (i64 t = t0; t < t1; ++t) {
    const i64 r = csr5_row(tp[t]);
    if (r >= a.rows || (t > 0 && csr5_row(tp[t - 1]) == r)) continue;
    V s = t > 0 ? tail[t - 1] : V(0);
    for (i64 u = t; u <= ntiles && csr5_row(tp[u]) == r; ++u) s += head[u];
    y[r] = spmvjit_epilogue<E>(s, y, r, alpha, beta);
  }
  const I* empty = aux + a.n[CSR5_N_EMPTY_OFFSETS];
  const i64 n = a.n[CSR5_N_EMPTY_ROWS], e0 = n * p / parts, e1 = n * (p + 1) / parts;
  for (i64 i = e0; i < e1; ++i) y[(i64)empty[i]] = spmvjit_epilogue<E>(V(0), y, (i64)empty[i], alpha, beta);
}

SPMVJIT_EXPORT(csr5_part, spmvjit_part)
SPMVJIT_EXPORT(csr5_fixup, spmvjit_fixup)
