// GPU library piece shared by the COO and HYB templates: warp-segmented sums with atomics.
// Format-neutral: callers pass their arrays and sizes.
#ifndef SPMVJIT_COO_SEGMENTS_INCLUDED
#define SPMVJIT_COO_SEGMENTS_INCLUDED
#include "prelude.h"

// Highest set bit of a nonzero lane mask (plain C, so any prelude serves it).
SPMVJIT_DEVICE int coo_top_lane(spmvjit_lanes_t m) {
  int h = 0;
  for (int s = SPMVJIT_WARP / 2; s > 0; s >>= 1)
    if (m >> s) h += s, m >>= s;
  return h;
}

// Sums alpha * val[k] * x[col[k]] into y[row[k]] for k in this warp's chunk of entries (sorted
// by row): a segmented suffix sum over each batch of SPMVJIT_WARP entries, one atomic per row
// segment, and the batch's last segment carried into the next batch so a long row costs one
// atomic per warp rather than per batch. y must already hold beta * y: the step that wrote it may
// still run (an early launch) until spmvjit_grid_wait, before the first atomic.
template <int E>
SPMVJIT_DEVICE void coo_segments(const I* SPMVJIT_RESTRICT row, const I* SPMVJIT_RESTRICT col,
                                 spmvjit_values_t SPMVJIT_VALUES_RESTRICT val, const V* SPMVJIT_RESTRICT x,
                                 V* y, i64 nnz, i64 chunk, V alpha) {
  const i64 warp = ((i64)blockIdx.x * blockDim.x + threadIdx.x) / SPMVJIT_WARP;
  const int lane = spmvjit_lane();
  const i64 begin = warp * chunk;
  if (begin >= nnz) return;  // uniform across the warp
  const i64 end = begin + chunk < nnz ? begin + chunk : nnz;
  i64 carry_row = -1;
  V carry = 0;
  for (i64 base = begin; base < end; base += SPMVJIT_WARP) {
    const i64 k = base + lane;
    const bool ok = k < end;
    // Lanes past the end form their own segment with row -1 (never a real row).
    const i64 r = ok ? (i64)spmvjit_ld_stream(row + k) : -1;
    V v = ok ? spmvjit_ld_stream(val + k) * spmvjit_ldg(x + spmvjit_ld_stream(col + k)) : V(0);
    if (!spmvjit_alpha_one<E>(alpha)) v *= alpha;
    for (int d = 1; d < SPMVJIT_WARP; d <<= 1) {
      const V o = spmvjit_shfl_down(v, d);
      const i64 orow = spmvjit_shfl_down(r, d);
      if (lane + d < SPMVJIT_WARP && orow == r) v += o;
    }
    if (base == begin) spmvjit_grid_wait();
    const i64 prow = spmvjit_shfl_up(r, 1);
    const bool head = ok && (lane == 0 || prow != r);
    const int last_head = coo_top_lane(spmvjit_ballot(head));  // lane 0 is always a valid head
    if (lane == 0 && carry_row >= 0) {
      if (carry_row == r) v += carry;
      else spmvjit_atomic_add(y + carry_row, carry);
    }
    if (head && lane != last_head) spmvjit_atomic_add(y + r, v);
    carry = spmvjit_shfl(v, last_head);
    carry_row = spmvjit_shfl(r, last_head);
  }
  if (lane == 0) spmvjit_atomic_add(y + carry_row, carry);
}

#endif  // SPMVJIT_COO_SEGMENTS_INCLUDED
