// GPU symmetric diagonal kernel: a thread per row; each kept upper diagonal is one offset
// (broadcast to the warp) read twice with coalesced values: the row's own entry and, mirrored, the
// entry of row i - d (a read the cache serves: row i - d's thread loaded it moments before).
// Values are read with the default (caching) load for that second use. A block whose rows are all
// at least the largest offset from both ends of the matrix (all of them but a band's worth at each
// end) takes the branch-free loop, its loads issued back to back; an empty remainder leaves
// rem_ptr unread (4 bytes a row in int32). Both took 7-13% off the stencils' time on an H100
// (docs/PERFORMANCE.md).
// DIAGS (real values, 2 to 16 diagonals): their count baked in, the interior loop fully unrolled
// (2-5% off the stencils on an H100).
// HERMITIAN (complex values): the mirror is conj(A(i - d, i)).
// Launch: grid = ceil(rows / SYM_DIAG_GPU_BLOCK), block = SYM_DIAG_GPU_BLOCK.
#include "prelude.h"
#include "../contract/sym_diag.h"

#ifndef SPMVJIT_HERMITIAN
#define SPMVJIT_HERMITIAN 0
#endif
// The mirrored entry A(i, i - d) from the stored A(i - d, i).
SPMVJIT_DEVICE V sym_diag_mirror(V v) {
#if SPMVJIT_HERMITIAN
  return V(v.re, -v.im);
#else
  return v;
#endif
}

template <int E>
SPMVJIT_DEVICE void sym_diag_part(const SpmvArgs& a) {
  const I* SPMVJIT_RESTRICT off = (const I*)a.a[SYM_DIAG_OFFSET];
  SPMVJIT_DECLARE_VALUES(dval, a, SYM_DIAG_VALUES);
  const I* SPMVJIT_RESTRICT rp = (const I*)a.a[SYM_DIAG_REM_PTR];
  const I* SPMVJIT_RESTRICT rcol = (const I*)a.a[SYM_DIAG_REM_COL];
  SPMVJIT_DECLARE_VALUES(rval, a, SYM_DIAG_REM_VALUES);
  const V* SPMVJIT_RESTRICT x = (const V*)a.x;
  V* y = (V*)a.y;
  const i64 n = a.rows, stride = a.n[SYM_DIAG_N_STRIDE];
#ifdef SPMVJIT_DIAGS
  constexpr int diags = SPMVJIT_DIAGS;  // = n[SYM_DIAG_N_DIAGS] (engine/formats/sym_diag.cpp)
#else
  const int diags = int(a.n[SYM_DIAG_N_DIAGS]);  // at most SYM_DIAG_MAX: an int loop unrolls cheaper
#endif
  const i64 b0 = i64(blockIdx.x) * SYM_DIAG_GPU_BLOCK, i = b0 + i64(threadIdx.x);
  const i64 dmax = (i64)spmvjit_ldg(off + diags - 1);                       // offsets ascend
  const bool interior = b0 >= dmax && b0 + SYM_DIAG_GPU_BLOCK + dmax <= n;  // the same for the block
  if (i >= n) return;
  V sum = spmvjit_ldg(dval + i) * spmvjit_ldg(x + i);  // offset[0] = 0: the main diagonal
  if (interior) {
#ifdef SPMVJIT_DIAGS
#pragma unroll
#else
#pragma unroll 2
#endif
    for (int j = 1; j < diags; ++j) {
      const i64 d = (i64)spmvjit_ldg(off + j), base = j * stride + i;
      sum += spmvjit_ldg(dval + base) * spmvjit_ldg(x + i + d);
      sum += sym_diag_mirror(spmvjit_ldg(dval + (base - d))) * spmvjit_ldg(x + i - d);
    }
  } else {
    for (int j = 1; j < diags; ++j) {
      const i64 d = (i64)spmvjit_ldg(off + j), base = j * stride + i;
      if (i + d < n) sum += spmvjit_ldg(dval + base) * spmvjit_ldg(x + i + d);
      if (i >= d) sum += sym_diag_mirror(spmvjit_ldg(dval + (base - d))) * spmvjit_ldg(x + i - d);
    }
  }
  if (a.n[SYM_DIAG_N_REM_ENTRIES] != 0) {
    const i64 r1 = (i64)spmvjit_ldg(rp + i + 1);
    for (i64 k = (i64)spmvjit_ldg(rp + i); k < r1; ++k)
      sum += spmvjit_ld_stream(rval + k) * spmvjit_ldg(x + spmvjit_ld_stream(rcol + k));
  }
  y[i] = spmvjit_epilogue<E>(sum, y, i, spmvjit_alpha(a), spmvjit_beta(a));
}

SPMVJIT_EXPORT_KERNEL(sym_diag_part, spmvjit_part, SYM_DIAG_GPU_BLOCK)
