// GPU CSR for k vectors (spmm_execute); each row's entries are read once for all k vectors.
// Row-major X and Y: CSR_MM_LANES(k) neighbouring lanes per row, lane j computing vector j (the
// row's column index and value are the same address for them all, the x loads one coalesced run
// per column). Column-major: one thread per row with its k sums in registers. k (SPMVJIT_VECTORS,
// up to 32) is baked; SPMVJIT_VECTORS 0: any k, 32 vectors (row-major) or CSR_MM_BLOCK_VECTORS
// (column-major) per pass over a row.
// Launch: ceil(rows / (CSR_MM_GPU_BLOCK / lanes)) blocks of CSR_MM_GPU_BLOCK threads.
#include "../contract/csr_mm.h"
#include "prelude.h"

#ifndef SPMVJIT_VECTORS
#define SPMVJIT_VECTORS 4
#endif
#ifndef SPMVJIT_LAYOUT
#define SPMVJIT_LAYOUT 1
#endif

// Sums vectors j0 .. j0 + K - 1 of row r (column-major: element (c, j) at j * ldx + c), or the one
// vector j0 (row-major, K == 1: a lane's own).
template <int E, int K>
SPMVJIT_DEVICE void csr_mm_sum(const SpmvArgs& a, i64 r, i64 j0) {
  const I* SPMVJIT_RESTRICT rp = (const I*)a.a[CSR_ROW_PTR];
  const I* SPMVJIT_RESTRICT ci = (const I*)a.a[CSR_COL_IDX];
  SPMVJIT_DECLARE_VALUES(va, a, CSR_VALUES);
  const V* SPMVJIT_RESTRICT x = (const V*)a.x;
  V* SPMVJIT_RESTRICT y = (V*)a.y;
  const i64 ldx = a.ldx, ldy = a.ldy;
  const i64 b = spmvjit_ldg(rp + r), e = spmvjit_ldg(rp + r + 1);
  V sum[K];
#pragma unroll
  for (int j = 0; j < K; ++j) sum[j] = 0;
  for (i64 k = b; k < e; ++k) {
    const V v = spmvjit_ldg(va + k);
    const i64 c = spmvjit_ldg(ci + k);
#pragma unroll
    for (int j = 0; j < K; ++j)
      sum[j] += v * spmvjit_ldg(x + (SPMVJIT_LAYOUT ? c * ldx + j0 + j : (j0 + j) * ldx + c));
  }
  const V alpha = (V)a.alpha, beta = (V)a.beta;
#pragma unroll
  for (int j = 0; j < K; ++j) {
    const i64 at = SPMVJIT_LAYOUT ? r * ldy + j0 + j : (j0 + j) * ldy + r;
    y[at] = spmvjit_epilogue<E>(sum[j], y, at, alpha, beta);
  }
}

template <int E>
SPMVJIT_DEVICE void csr_mm(const SpmvArgs& a) {
  constexpr int kLanes = CSR_MM_LANES(SPMVJIT_VECTORS, SPMVJIT_LAYOUT);
  const i64 r = i64(blockIdx.x) * (CSR_MM_GPU_BLOCK / kLanes) + threadIdx.x / kLanes;
  if (r >= a.rows) return;
#if SPMVJIT_LAYOUT
  const int lane = int(threadIdx.x) % kLanes;
  const i64 k = SPMVJIT_VECTORS > 0 ? i64(SPMVJIT_VECTORS) : a.vectors;
  for (i64 j = lane; j < k; j += kLanes) csr_mm_sum<E, 1>(a, r, j);
#elif SPMVJIT_VECTORS > 0
  csr_mm_sum<E, SPMVJIT_VECTORS>(a, r, 0);
#else
  i64 j = 0;
  for (; j + CSR_MM_BLOCK_VECTORS <= a.vectors; j += CSR_MM_BLOCK_VECTORS)
    csr_mm_sum<E, CSR_MM_BLOCK_VECTORS>(a, r, j);
  for (; j < a.vectors; ++j) csr_mm_sum<E, 1>(a, r, j);
#endif
}

SPMVJIT_EXPORT_KERNEL(csr_mm, spmvjit_part, CSR_MM_GPU_BLOCK)
