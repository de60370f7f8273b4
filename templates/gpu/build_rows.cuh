// GPU library piece shared by the row-layout device builds (coo_build, ell_build, hyb_build,
// jds_build): grid-stride helpers with no cooperation inside a block, so any grid is correct and
// the emulation prelude can run them one thread after another. Inputs carry index base `base`.
#ifndef SPMVJIT_BUILD_ROWS_INCLUDED
#define SPMVJIT_BUILD_ROWS_INCLUDED
#include "prelude.h"

SPMVJIT_DEVICE i64 build_first() { return i64(blockIdx.x) * blockDim.x + threadIdx.x; }
SPMVJIT_DEVICE i64 build_stride() { return i64(gridDim.x) * blockDim.x; }

SPMVJIT_DEVICE i64 build_row_len(const I* rp, i64 r) {
  return i64(spmvjit_ldg(rp + r + 1)) - i64(spmvjit_ldg(rp + r));
}

// Zeroes n entries (fresh device memory holds anything).
SPMVJIT_DEVICE void build_zero(i64* p, i64 n) {
  for (i64 i = build_first(); i < n; i += build_stride()) p[i] = 0;
}

// The longest of `rows` rows into *out (zeroed before): each thread's maximum over its rows, then
// one atomic per thread.
SPMVJIT_DEVICE void build_row_max(const I* rp, i64 rows, i64* out) {
  i64 m = 0;
  for (i64 r = build_first(); r < rows; r += build_stride()) {
    const i64 len = build_row_len(rp, r);
    m = len > m ? len : m;
  }
  if (m) spmvjit_atomic_max_u64((unsigned long long*)out, (unsigned long long)m);
}

// The last r in [0, n) with start[r] - base <= k, for non-decreasing start with start[0] - base
// <= k: the row holding entry k when start is a row pointer (empty rows are skipped).
template <class T>
SPMVJIT_DEVICE i64 build_row_of(const T* start, i64 n, i64 base, i64 k) {
  i64 lo = 0, hi = n;
  while (hi - lo > 1) {
    const i64 mid = lo + (hi - lo) / 2;
    if (i64(spmvjit_ldg(start + mid)) - base <= k)
      lo = mid;
    else
      hi = mid;
  }
  return lo;
}

// Row r's first min(len, width) entries, column-major (entry j at j * stride + r), the rest of
// its width padded with its last stored column and zeros (the host converters' ELL layout).
SPMVJIT_DEVICE void build_ell_row(const I* rp, const I* ci, const V* va, I* col, V* val, i64 r, i64 width,
                                  i64 stride, i64 base) {
  const i64 b = i64(spmvjit_ldg(rp + r)) - base, len = i64(spmvjit_ldg(rp + r + 1)) - base - b;
  const i64 stored = len < width ? len : width;
  const I pad = stored ? I(spmvjit_ldg(ci + b + stored - 1) - I(base)) : I(0);
  for (i64 j = 0; j < width; ++j) {
    col[j * stride + r] = j < stored ? I(spmvjit_ldg(ci + b + j) - I(base)) : pad;
    val[j * stride + r] = j < stored ? spmvjit_ldg(va + b + j) : V(0);
  }
}

#endif  // SPMVJIT_BUILD_ROWS_INCLUDED
