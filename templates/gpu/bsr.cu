// GPU BSR kernel: G consecutive lanes of a warp share one block row; lane g takes blocks
// start+g, start+g+G, ... (the R*C values of neighbouring lanes' blocks are contiguous, so a
// step of the group reads one contiguous run), accumulating R partial sums from C consecutive
// x values; then R shuffle trees over the G lanes, and the group leader writes the R rows.
// G (a power of two <= SPMVJIT_WARP) is an argument, n[BSR_N_GROUP_LOG2], not a constant: baking
// it would multiply the 70 R x C x COL_EDGE variants by 6 (engine/formats/bsr.cpp says why).
// Launch: grid = ceil(block_rows*G / BSR_GPU_BLOCK), block = BSR_GPU_BLOCK.
#include "prelude.h"
#include "../contract/bsr.h"
#ifndef SPMVJIT_R
#define SPMVJIT_R 2
#endif
#ifndef SPMVJIT_C
#define SPMVJIT_C 2
#endif
#ifndef SPMVJIT_COL_EDGE
#define SPMVJIT_COL_EDGE 0
#endif

template <int E>
SPMVJIT_DEVICE void bsr_part(const SpmvArgs& a) {
  constexpr int R = SPMVJIT_R, C = SPMVJIT_C;
  const I* SPMVJIT_RESTRICT bp = (const I*)a.a[BSR_BLOCK_PTR];
  const I* SPMVJIT_RESTRICT bc = (const I*)a.a[BSR_BLOCK_COL];
  SPMVJIT_DECLARE_VALUES(val, a, BSR_VALUES);
  const V* SPMVJIT_RESTRICT x = (const V*)a.x;
  V* y = (V*)a.y;
  const int lg = (int)a.n[BSR_N_GROUP_LOG2];
  const int G = 1 << lg;
  const i64 tid = (i64)blockIdx.x * blockDim.x + threadIdx.x;
  const i64 b = tid >> lg;
  const int g = spmvjit_lane() & (G - 1);
  const bool live = b < a.n[BSR_N_BLOCK_ROWS];
  V acc[R];
#pragma unroll
  for (int i = 0; i < R; ++i) acc[i] = 0;
  if (live) {
    const i64 end = (i64)spmvjit_ldg(bp + b + 1);
    for (i64 k = (i64)spmvjit_ldg(bp + b) + g; k < end; k += G) {
      const spmvjit_values_t SPMVJIT_VALUES_RESTRICT v = val + k * (R * C);
      const i64 c0 = (i64)spmvjit_ld_stream(bc + k) * C;
      V xv[C];
      if (SPMVJIT_COL_EDGE && c0 + C > a.cols) {
        // Only the last block column of a matrix whose cols is not a multiple of C: its
        // columns past the end hold zeros, and x must not be read there.
#pragma unroll
        for (int j = 0; j < C; ++j) xv[j] = c0 + j < a.cols ? spmvjit_ldg(x + c0 + j) : V(0);
      } else {
#pragma unroll
        for (int j = 0; j < C; ++j) xv[j] = spmvjit_ldg(x + c0 + j);
      }
#pragma unroll
      for (int i = 0; i < R; ++i)
#pragma unroll
        for (int j = 0; j < C; ++j) acc[i] += spmvjit_ld_stream(v + i * C + j) * xv[j];
    }
  }
  // Every lane takes part in the shuffles (full mask); only group leaders use the result.
  for (int d = G / 2; d > 0; d >>= 1)
#pragma unroll
    for (int i = 0; i < R; ++i) acc[i] += spmvjit_shfl_down(acc[i], d);
  if (g == 0 && live) {
    const i64 r0 = b * R;
#pragma unroll
    for (int i = 0; i < R; ++i)
      // Rows past the matrix (the last block row's tail) are never written.
      if (R == 1 || r0 + i < a.rows)
        y[r0 + i] = spmvjit_epilogue<E>(acc[i], y, r0 + i, spmvjit_alpha(a), spmvjit_beta(a));
  }
}

SPMVJIT_EXPORT_KERNEL(bsr_part, spmvjit_part, BSR_GPU_BLOCK)
