// GPU CSR5 kernel (OMEGA = SPMVJIT_WARP). spmvjit_part_<e>: one warp per tile; lane l walks its
// SIGMA entries (coalesced: step k of the tile is OMEGA contiguous slots) keeping the sum of its
// current segment; a segment closed inside the lane is written at once (its segment number is
// y_offset + starts - 1), and the partial sums that cross lanes are joined by a segmented shuffle
// scan. The tile's first row (head) and a row still open at its end (tail) go to the scratch
// carries; the warp after the last tile runs the CSR tail. spmvjit_fixup_<e>: one thread per tile
// start row (adds the carries) or per empty row. Arrays, n[] and scratch: templates/contract/csr5.h.
// Launch: part grid = ceil((tiles + 1) * OMEGA / CSR5_GPU_BLOCK); fixup block CSR5_GPU_FIXUP_BLOCK.
#include "prelude.h"
#include "../contract/csr5.h"
#ifndef SPMVJIT_OMEGA
#define SPMVJIT_OMEGA SPMVJIT_WARP
#endif
#if SPMVJIT_OMEGA != SPMVJIT_WARP
#error "csr5: a GPU tile is one warp (omega must be the warp width)"
#endif
#ifndef SPMVJIT_SIGMA
#define SPMVJIT_SIGMA 16
#endif

typedef unsigned long long u64;
static_assert(SPMVJIT_SIGMA <= CSR5_MAX_SIGMA, "bit_flag has a bit per entry of a lane");

SPMVJIT_DEVICE i64 csr5_row(i64 v) { return v < 0 ? ~v : v; }

template <int E>
SPMVJIT_DEVICE void csr5_part(const SpmvArgs& a) {
  constexpr i64 W = SPMVJIT_OMEGA, SG = SPMVJIT_SIGMA, S = W * SG;
  const i64* SPMVJIT_RESTRICT tp = (const i64*)a.a[CSR5_TILE_PTR];
  const u64* SPMVJIT_RESTRICT desc = (const u64*)a.a[CSR5_TILE_DESC];
  const I* SPMVJIT_RESTRICT col = (const I*)a.a[CSR5_COL_IDX];
  SPMVJIT_DECLARE_VALUES(val, a, CSR5_VALUES);
  const i64* SPMVJIT_RESTRICT eo_ptr = (const i64*)a.a[CSR5_EO_PTR];
  const I* SPMVJIT_RESTRICT aux = (const I*)a.a[CSR5_AUX];
  const V* SPMVJIT_RESTRICT x = (const V*)a.x;
  V* y = (V*)a.y;
  V* head = (V*)a.scratch;
  const i64 ntiles = a.n[CSR5_N_TILES];
  V* tail = head + ntiles + 1;
  const V alpha = spmvjit_alpha(a), beta = spmvjit_beta(a);
  const i64 t = (i64(blockIdx.x) * i64(blockDim.x) + i64(threadIdx.x)) / SPMVJIT_WARP;
  const int lane = spmvjit_lane();
  if (t > ntiles) return;  // warp-uniform
  if (t == ntiles) {       // the CSR tail, a row per lane; its first row is carried
    const I* trp = aux + a.n[CSR5_N_EMPTY_OFFSETS] + a.n[CSR5_N_EMPTY_ROWS];
    const i64 rt = a.n[CSR5_N_TAIL_ROW], nrows = a.n[CSR5_N_TAIL_ROWS];
    if (lane == 0) head[ntiles] = 0, tail[ntiles] = 0;
    for (i64 i = lane; i < nrows; i += SPMVJIT_WARP) {
      V s = 0;
      const i64 e = (i64)spmvjit_ldg(trp + i + 1);
      for (i64 k = i ? (i64)spmvjit_ldg(trp + i) : a.n[CSR5_N_TAIL_START]; k < e; ++k)
        s += spmvjit_ldg(val + k) * spmvjit_ldg(x + spmvjit_ldg(col + k));
      if (i == 0) head[ntiles] = s;
      else y[rt + i] = spmvjit_epilogue<E>(s, y, rt + i, alpha, beta);
    }
    return;
  }
  const i64 tpv = spmvjit_ldg(tp + t);
  const i64 r0 = csr5_row(tpv), rnext = csr5_row(spmvjit_ldg(tp + t + 1));
  const I* seg_rows = tpv < 0 ? aux + spmvjit_ldg(eo_ptr + t) : (const I*)0;
  const u64 dl = spmvjit_ldg(desc + t * W + lane);
  const unsigned flags = (unsigned)dl;
  i64 q = i64((dl >> CSR5_Y_OFFSET_SHIFT) & CSR5_OFFSET_MASK) - 1;  // segment open when the lane begins
  bool has = false;
  V first = 0, sum = 0;
#pragma unroll 4
  for (i64 k = 0; k < SG; ++k) {
    const i64 at = t * S + k * W + lane;
    const V pr = spmvjit_ld_stream(val + at) * spmvjit_ldg(x + spmvjit_ld_stream(col + at));
    if ((flags >> k) & 1u) {
      if (!has) {
        first = sum;  // belongs to the segment begun in an earlier lane
      } else if (q == 0) {
        head[t] = sum;
      } else {
        const i64 r = seg_rows ? (i64)seg_rows[q] : r0 + q;
        y[r] = spmvjit_epilogue<E>(sum, y, r, alpha, beta);
      }
      has = true;
      ++q;
      sum = 0;
    }
    sum += pr;
  }
  // Segmented inclusive scan of the trailing partial sums over lanes; a lane with a row start
  // begins a new segment.
  V run = sum;
  bool f = has;
#pragma unroll
  for (int d = 1; d < SPMVJIT_WARP; d *= 2) {
    const V rv = spmvjit_shfl_up(run, d);
    const bool fv = spmvjit_shfl_up(int(f), d) != 0;
    if (lane >= d && !f) run += rv, f = fv;
  }
  const V before = spmvjit_shfl_up(run, 1);
  if (has && lane > 0) {  // close the segment that crossed into this lane
    const i64 qc = i64((dl >> CSR5_Y_OFFSET_SHIFT) & CSR5_OFFSET_MASK) - 1;
    const V v = first + before;
    if (qc == 0) {
      head[t] = v;
    } else {
      const i64 r = seg_rows ? (i64)seg_rows[qc] : r0 + qc;
      y[r] = spmvjit_epilogue<E>(v, y, r, alpha, beta);
    }
  }
  if (lane == SPMVJIT_WARP - 1) {  // the last segment of the tile
    V open = 0;
    if (q == 0) {
      head[t] = run;
    } else {
      const i64 r = seg_rows ? (i64)seg_rows[q] : r0 + q;
      if (r == rnext) open = run;
      else y[r] = spmvjit_epilogue<E>(run, y, r, alpha, beta);
    }
    tail[t] = open;
  }
}

template <int E>
SPMVJIT_DEVICE void csr5_fixup(const SpmvArgs& a) {
  const i64* SPMVJIT_RESTRICT tp = (const i64*)a.a[CSR5_TILE_PTR];
  const I* SPMVJIT_RESTRICT aux = (const I*)a.a[CSR5_AUX];
  V* y = (V*)a.y;
  const V* head = (const V*)a.scratch;
  const i64 ntiles = a.n[CSR5_N_TILES];
  const V* tail = head + ntiles + 1;
  const V alpha = spmvjit_alpha(a), beta = spmvjit_beta(a);
  const i64 g = i64(blockIdx.x) * i64(blockDim.x) + i64(threadIdx.x);
  if (g <= ntiles) {
    const i64 r = csr5_row(tp[g]);
    if (r >= a.rows || (g > 0 && csr5_row(tp[g - 1]) == r)) return;
    spmvjit_grid_wait();  // launched early: the carries are the part step's
    V s = g > 0 ? tail[g - 1] : V(0);
    for (i64 u = g; u <= ntiles && csr5_row(tp[u]) == r; ++u) s += head[u];
    y[r] = spmvjit_epilogue<E>(s, y, r, alpha, beta);
  } else if (g - ntiles - 1 < a.n[CSR5_N_EMPTY_ROWS]) {
    const i64 r = (i64)aux[a.n[CSR5_N_EMPTY_OFFSETS] + g - ntiles - 1];
    spmvjit_grid_wait();
    y[r] = spmvjit_epilogue<E>(V(0), y, r, alpha, beta);
  }
}

SPMVJIT_EXPORT_KERNEL(csr5_part, spmvjit_part, CSR5_GPU_BLOCK)
SPMVJIT_EXPORT_KERNEL(csr5_fixup, spmvjit_fixup, CSR5_GPU_FIXUP_BLOCK)
