// SELL-C-sigma device build (engine/formats/sell.cpp and sellp.cpp, convert_device): slice sizes
// (one thread per slice), their exclusive scan into slice offsets, then one thread per row
// position fills its lane. Sorted (sigma > 1), row position p
// holds row perm[p], the order built before. SELL-P (n[SELL_BUILD_N_T] = t > 1) rounds slice
// widths up to multiples of t and lays a slice out in chunks of C*t slots, row i owning
// [i*t, i*t + t) of each; t = 1 is plain SELL. Grid-stride: any grid works.
#include "../contract/device_plan.h"
#include "../contract/sell.h"
#include "prelude.h"

// The row at sorted position pos.
SPMVJIT_DEVICE i64 sell_row_at(const SpmvArgs& a, i64 pos) {
  return a.n[SELL_BUILD_N_PERMUTED] ? i64(spmvjit_ldg((const I*)a.a[SELL_BUILD_PERM] + pos)) : pos;
}

// Pass 1, one thread per slice: its size (C * longest row, rounded up to t) into slice_ptr[s]. An
// exclusive scan over the slices then makes the sizes offsets (the total at slice_ptr[slices]).
extern "C" __global__ void spmvjit_build_sizes(const SpmvArgs a) {
  const I* SPMVJIT_RESTRICT rp = (const I*)a.a[SELL_BUILD_ROW_PTR];
  const bool permuted = a.n[SELL_BUILD_N_PERMUTED] != 0;
  i64* size = (i64*)a.a[SELL_BUILD_SLICE_PTR];
  const i64 c = a.n[SELL_BUILD_N_C], slices = a.n[SELL_BUILD_N_SLICES], t = a.n[SELL_BUILD_N_T];
  for (i64 s = i64(blockIdx.x) * blockDim.x + threadIdx.x; s < slices; s += i64(gridDim.x) * blockDim.x) {
    const i64 e = (s + 1) * c < a.rows ? (s + 1) * c : a.rows;
    i64 width = 0, b = spmvjit_ldg(rp + s * c);
    for (i64 pos = s * c; pos < e; ++pos) {
      if (permuted) {  // rows in sorted order
        const i64 r = sell_row_at(a, pos), len = i64(spmvjit_ldg(rp + r + 1)) - i64(spmvjit_ldg(rp + r));
        width = len > width ? len : width;
        continue;
      }
      const i64 next = spmvjit_ldg(rp + pos + 1);  // consecutive rows share their row_ptr entries
      width = next - b > width ? next - b : width;
      b = next;
    }
    size[s] = (width + t - 1) / t * t * c;
  }
}

// Pass 2: one thread per row position fills its lane of the slice, column-major (in chunks of
// C*t slots, t per row), padding with the row's last column and zeros.
extern "C" __global__ void spmvjit_build_fill(const SpmvArgs a) {
  const I* SPMVJIT_RESTRICT rp = (const I*)a.a[SELL_BUILD_ROW_PTR];
  const I* SPMVJIT_RESTRICT ci = (const I*)a.a[SELL_BUILD_COL_IDX_IN];
  const V* SPMVJIT_RESTRICT va = (const V*)a.a[SELL_BUILD_VALUES_IN];
  const i64* SPMVJIT_RESTRICT sp = (const i64*)a.a[SELL_BUILD_SLICE_PTR];
  I* col = (I*)a.a[SELL_BUILD_COL_IDX];
  V* val = (V*)a.a[SELL_BUILD_VALUES];
  const i64 c = a.n[SELL_BUILD_N_C], slices = a.n[SELL_BUILD_N_SLICES], base = a.n[DP_N_BASE];
  const i64 t = a.n[SELL_BUILD_N_T];
  for (i64 pos = i64(blockIdx.x) * blockDim.x + threadIdx.x; pos < slices * c;
       pos += i64(gridDim.x) * blockDim.x) {
    const i64 s = pos / c, lane = pos - s * c;
    const i64 p0 = spmvjit_ldg(sp + s), width = (spmvjit_ldg(sp + s + 1) - p0) / c;
    i64 b = 0, len = 0;
    if (pos < a.rows) {
      const i64 r = sell_row_at(a, pos);
      b = i64(spmvjit_ldg(rp + r)) - base, len = i64(spmvjit_ldg(rp + r + 1)) - base - b;
    }
    const I pad = len ? I(spmvjit_ldg(ci + b + len - 1) - I(base)) : I(0);
    for (i64 j = 0; j < width; ++j) {
      const i64 slot = p0 + (j / t) * c * t + lane * t + j % t;
      col[slot] = j < len ? I(spmvjit_ldg(ci + b + j) - I(base)) : pad;
      val[slot] = j < len ? spmvjit_ldg(va + b + j) : V(0);
    }
  }
}
