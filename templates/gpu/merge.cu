// GPU merge-path CSR kernels: spmvjit_part gives each thread n[MERGE_N_ITEMS] items of the merge
// path over (row ends, nonzeros); it finds its start and end coordinates by binary search on
// row_ptr, writes the rows that end inside its segment and leaves the partial sum of the row it
// stops in as a carry; spmvjit_fixup adds the carries (atomics: a long row collects many).
// Arrays, n[] and scratch: templates/contract/merge.h (no parts array on a GPU).
#include "prelude.h"
#include "../contract/merge.h"

// First row not ended before path diagonal `diag` (rows before it end within the diagonal).
SPMVJIT_DEVICE i64 merge_search(const I* rp, i64 rows, i64 nnz, i64 diag) {
  i64 lo = diag > nnz ? diag - nnz : 0, hi = diag < rows ? diag : rows;
  while (lo < hi) {
    const i64 mid = (lo + hi) >> 1;
    if ((i64)spmvjit_ldg(rp + mid + 1) <= diag - mid - 1) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

template <int E>
SPMVJIT_DEVICE void merge_part(const SpmvArgs& a) {
  const I* SPMVJIT_RESTRICT rp = (const I*)a.a[MERGE_ROW_PTR];
  const I* SPMVJIT_RESTRICT ci = (const I*)a.a[MERGE_COL_IDX];
  SPMVJIT_DECLARE_VALUES(va, a, MERGE_VALUES);
  const V* SPMVJIT_RESTRICT x = (const V*)a.x;
  V* y = (V*)a.y;
  spmvjit_grid_launch_dependents();
  const i64 seg = (i64)blockIdx.x * blockDim.x + threadIdx.x;
  const i64 segs = a.n[MERGE_N_SEGMENTS];
  if (seg >= segs) return;
  const i64 rows = a.rows, nnz = rows ? (i64)spmvjit_ldg(rp + rows) : 0, total = rows + nnz;
  const i64 d0 = seg * a.n[MERGE_N_ITEMS] < total ? seg * a.n[MERGE_N_ITEMS] : total;
  const i64 d1 = d0 + a.n[MERGE_N_ITEMS] < total ? d0 + a.n[MERGE_N_ITEMS] : total;
  const i64 i0 = merge_search(rp, rows, nnz, d0), i1 = merge_search(rp, rows, nnz, d1);
  i64 k = d0 - i0;
  const i64 j1 = d1 - i1;
  for (i64 r = i0; r < i1; ++r) {
    V s = 0;
    const i64 e = spmvjit_ldg(rp + r + 1);
    for (; k < e; ++k) s += spmvjit_ldg(va + k) * spmvjit_ldg(x + spmvjit_ldg(ci + k));
    y[r] = spmvjit_epilogue<E>(s, y, r, spmvjit_alpha(a), spmvjit_beta(a));
  }
  V carry = 0;
  for (; k < j1; ++k) carry += spmvjit_ldg(va + k) * spmvjit_ldg(x + spmvjit_ldg(ci + k));
  i64* carry_row = (i64*)a.scratch;
  V* carry_val = (V*)(carry_row + segs + (segs & 1));  // aligned for complex doubles
  carry_row[seg] = i1;
  carry_val[seg] = carry;
}

template <int E>
SPMVJIT_DEVICE void merge_fixup(const SpmvArgs& a) {
  const i64 seg = (i64)blockIdx.x * blockDim.x + threadIdx.x;
  if (seg >= a.n[MERGE_N_SEGMENTS]) return;
  spmvjit_grid_wait();  // launched early: the carries are the part step's
  const i64* carry_row = (const i64*)a.scratch;
  const V* carry_val = (const V*)(carry_row + a.n[MERGE_N_SEGMENTS] + (a.n[MERGE_N_SEGMENTS] & 1));
  const i64 r = carry_row[seg];
  const V c = carry_val[seg];
  if (r < a.rows && c != V(0))
    spmvjit_atomic_add((V*)a.y + r, spmvjit_alpha_one<E>(spmvjit_alpha(a)) ? c : spmvjit_alpha(a) * c);
}

SPMVJIT_EXPORT_KERNEL(merge_part, spmvjit_part, MERGE_GPU_BLOCK)
SPMVJIT_EXPORT_KERNEL(merge_fixup, spmvjit_fixup, MERGE_GPU_BLOCK)
