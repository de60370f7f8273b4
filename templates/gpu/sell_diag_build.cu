// sell_diag's device build (engine/formats/sell_diag.cpp, convert_device): one thread per slice
// chooses its diagonals as the host does (the contract's sell_diag_table; a slice with more
// distinct offsets than the table sorts them in scratch) and counts its diagonals and remainder
// width; after the scans of the counts, the same thread writes the slice. Grid-stride: any grid
// works.
#include "../contract/device_plan.h"
#include "../contract/sell_diag.h"
#include "prelude.h"

namespace sd {

// Index of x in the ascending v[0, n), or -1.
template <class T>
SPMVJIT_DEVICE i64 find(const T* v, i64 n, i64 x) {
  i64 lo = 0, hi = n;
  while (lo < hi) {
    const i64 mid = (lo + hi) >> 1;
    if (i64(v[mid]) < x)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo < n && i64(v[lo]) == x ? lo : -1;
}

// Heap sort of v[0, n), ascending: one thread, no memory beyond the array.
SPMVJIT_DEVICE void sift(I* v, i64 root, i64 n) {
  const I x = v[root];
  for (i64 child = 2 * root + 1; child < n; child = 2 * root + 1) {
    if (child + 1 < n && v[child + 1] > v[child]) ++child;
    if (!(v[child] > x)) break;
    v[root] = v[child];
    root = child;
  }
  v[root] = x;
}
SPMVJIT_DEVICE void heap_sort(I* v, i64 n) {
  for (i64 i = n / 2; i-- > 0;) sift(v, i, n);
  for (i64 e = n - 1; e > 0; --e) {
    const I t = v[0];
    v[0] = v[e];
    v[e] = t;
    sift(v, 0, e);
  }
}

// One slice of the input: rows [r0, r1) of row_ptr / col_idx with index base `base`.
struct Slice {
  const I* rp;
  const I* ci;
  i64 base, r0, r1;

  __device__ __forceinline__ i64 begin(i64 r) const { return i64(spmvjit_ldg(rp + r)) - base; }
  // Calls f(offset) for each entry until f returns false: the walk sell_diag_table takes (a
  // functor, as NVRTC gives generic lambdas no execution space).
  template <class F>
  __device__ __forceinline__ void operator()(F&& f) const {
    for (i64 r = r0; r < r1; ++r)
      for (i64 k = begin(r), e = begin(r + 1); k < e; ++k)
        if (!f(i64(spmvjit_ldg(ci + k)) - base - r)) return;
  }
  // Whether entry k is the first of row [b, e) with its column: a repeated column goes to the
  // remainder, as on the host. Rows in column order answer from the neighbour; others look back.
  __device__ __forceinline__ bool first(i64 b, i64 k, bool in_order) const {
    const I col = spmvjit_ldg(ci + k);
    if (in_order) return k == b || spmvjit_ldg(ci + k - 1) != col;
    for (i64 q = b; q < k; ++q)
      if (spmvjit_ldg(ci + q) == col) return false;
    return true;
  }
  __device__ __forceinline__ bool ordered(i64 b, i64 e) const {
    for (i64 k = b + 1; k < e; ++k)
      if (spmvjit_ldg(ci + k) < spmvjit_ldg(ci + k - 1)) return false;
    return true;
  }
  // The kept offsets of a slice whose table overflowed: its offsets sorted in sc (its own entry
  // range of scratch), runs of at least min_count compacted to the front. Returns how many.
  __device__ i64 sorted_kept(I* sc, i64 min_count) const {
    i64 n = 0;
    (*this)([&](i64 d) {
      sc[n++] = I(d);
      return true;
    });
    heap_sort(sc, n);
    i64 kept = 0;
    for (i64 i = 0; i < n;) {
      i64 j = i;
      while (j < n && sc[j] == sc[i]) ++j;
      if (j - i >= min_count) sc[kept++] = sc[i];
      i = j;
    }
    return kept;
  }
};

SPMVJIT_DEVICE Slice slice_of(const SpmvArgs& a, i64 s, i64 c) {
  const i64 r0 = s * c;
  return Slice{(const I*)a.a[SELL_DIAG_BUILD_ROW_PTR], (const I*)a.a[SELL_DIAG_BUILD_COL_IDX_IN],
               a.n[DP_N_BASE], r0, r0 + c < a.rows ? r0 + c : a.rows};
}

// Calls f(k, j) for each entry k of row r in the row's order, with j its kept diagonal (index into
// kept[0, nk)), or -1 when it goes to the remainder.
template <class T, class F>
SPMVJIT_DEVICE void place_row(const Slice& sl, i64 r, const T* kept, i64 nk, F&& f) {
  const i64 b = sl.begin(r), e = sl.begin(r + 1);
  const bool ord = sl.ordered(b, e);
  for (i64 k = b; k < e; ++k) {
    const i64 j = find(kept, nk, i64(spmvjit_ldg(sl.ci + k)) - sl.base - r);
    f(k, j >= 0 && sl.first(b, k, ord) ? j : -1);
  }
}

// Longest remainder of the slice's rows: their entries not stored on a kept diagonal.
template <class T>
SPMVJIT_DEVICE i64 rem_width(const Slice& sl, const T* kept, i64 nk) {
  i64 width = 0;
  for (i64 r = sl.r0; r < sl.r1; ++r) {
    i64 rem = 0;
    place_row(sl, r, kept, nk, [&](i64, i64 j) { rem += j < 0 ? 1 : 0; });
    width = rem > width ? rem : width;
  }
  return width;
}

// Writes slice s's kept offsets (kept[0, nd)) and its diagonals' values at the scanned offsets.
template <class T>
SPMVJIT_DEVICE void write_diagonals(const SpmvArgs& a, const Slice& sl, i64 s, const T* kept) {
  const V* SPMVJIT_RESTRICT va = (const V*)a.a[SELL_DIAG_BUILD_VALUES_IN];
  const i64* dptr = (const i64*)a.a[SELL_DIAG_BUILD_DIAG_PTR];
  I* doff = (I*)a.a[SELL_DIAG_BUILD_DIAG_OFFSET];
  V* dval = (V*)a.a[SELL_DIAG_BUILD_DIAG_VALUES];
  const i64 c = a.n[SELL_DIAG_BUILD_N_C], dp = dptr[s], nd = dptr[s + 1] - dp;
  for (i64 j = 0; j < nd; ++j) doff[dp + j] = I(kept[j]);
  for (i64 j = dp * c; j < (dp + nd) * c; ++j) dval[j] = V(0);
  for (i64 r = sl.r0; r < sl.r1; ++r)
    place_row(sl, r, kept, nd, [&](i64 k, i64 j) {
      if (j >= 0) dval[(dp + j) * c + r - sl.r0] = spmvjit_ldg(va + k);
    });
}

}  // namespace sd

// Pass 1: diagonals and remainder slots (C * longest remainder) of each slice, into diag_ptr[s]
// and rem_ptr[s]. Without scratch, a slice whose table overflows is marked (diag_ptr[s] = -1) and
// counted in rem_ptr[slices]; the launch with scratch then counts only the marked slices.
extern "C" __global__ void spmvjit_build_count(const SpmvArgs a) {
  i64* dcount = (i64*)a.a[SELL_DIAG_BUILD_DIAG_PTR];
  i64* rcount = (i64*)a.a[SELL_DIAG_BUILD_REM_PTR];
  I* scratch = (I*)a.a[SELL_DIAG_BUILD_SCRATCH];
  const i64 c = a.n[SELL_DIAG_BUILD_N_C], slices = a.n[SELL_DIAG_BUILD_N_SLICES];
  const i64 min_count = a.n[SELL_DIAG_BUILD_N_MIN_COUNT];
  for (i64 s = i64(blockIdx.x) * blockDim.x + threadIdx.x; s < slices; s += i64(gridDim.x) * blockDim.x) {
    const sd::Slice sl = sd::slice_of(a, s, c);
    i64 nk, width;
    if (scratch) {
      if (dcount[s] >= 0) continue;
      I* sc = scratch + sl.begin(sl.r0);
      nk = sl.sorted_kept(sc, min_count);
      width = sd::rem_width(sl, sc, nk);
    } else {
      long long off[SELL_DIAG_TABLE], count[SELL_DIAG_TABLE];
      nk = sell_diag_table(sl, min_count, off, count);
      if (nk < 0) {
        dcount[s] = -1;
        spmvjit_atomic_add_u64((unsigned long long*)(rcount + slices), 1ull);
        continue;
      }
      width = sd::rem_width(sl, off, nk);
    }
    dcount[s] = nk;
    rcount[s] = width * c;
  }
}

// Pass 2: each slice's kept offsets and diagonal values at the scanned offsets (totals at
// [slices]); a slice whose table overflows finds its kept offsets where pass 1 left them.
extern "C" __global__ void spmvjit_build_diagonals(const SpmvArgs a) {
  I* scratch = (I*)a.a[SELL_DIAG_BUILD_SCRATCH];
  const i64 c = a.n[SELL_DIAG_BUILD_N_C], slices = a.n[SELL_DIAG_BUILD_N_SLICES];
  const i64 min_count = a.n[SELL_DIAG_BUILD_N_MIN_COUNT];
  for (i64 s = i64(blockIdx.x) * blockDim.x + threadIdx.x; s < slices; s += i64(gridDim.x) * blockDim.x) {
    const sd::Slice sl = sd::slice_of(a, s, c);
    long long off[SELL_DIAG_TABLE], count[SELL_DIAG_TABLE];
    if (sell_diag_table(sl, min_count, off, count) >= 0)
      sd::write_diagonals(a, sl, s, off);
    else
      sd::write_diagonals(a, sl, s, scratch + sl.begin(sl.r0));
  }
}

// Pass 3: the remainder of each slice (entries off the kept diagonals, pass 2's diag_offset),
// column-major, each row in its order, padded with its last remainder column (or its own row)
// and zeros.
extern "C" __global__ void spmvjit_build_remainder(const SpmvArgs a) {
  const V* SPMVJIT_RESTRICT va = (const V*)a.a[SELL_DIAG_BUILD_VALUES_IN];
  const i64* dptr = (const i64*)a.a[SELL_DIAG_BUILD_DIAG_PTR];
  const i64* rptr = (const i64*)a.a[SELL_DIAG_BUILD_REM_PTR];
  const I* doff = (const I*)a.a[SELL_DIAG_BUILD_DIAG_OFFSET];
  I* rcol = (I*)a.a[SELL_DIAG_BUILD_REM_COL];
  V* rval = (V*)a.a[SELL_DIAG_BUILD_REM_VALUES];
  const i64 c = a.n[SELL_DIAG_BUILD_N_C], slices = a.n[SELL_DIAG_BUILD_N_SLICES];
  const i64 last_col = a.cols > 0 ? a.cols - 1 : 0;
  for (i64 s = i64(blockIdx.x) * blockDim.x + threadIdx.x; s < slices; s += i64(gridDim.x) * blockDim.x) {
    const sd::Slice sl = sd::slice_of(a, s, c);
    const i64 dp = dptr[s], q0 = rptr[s], width = (rptr[s + 1] - q0) / c;
    for (i64 i = 0; i < c; ++i) {
      const i64 r = s * c + i;
      i64 q = 0;  // row i's remainder slots filled
      if (r < a.rows)
        sd::place_row(sl, r, doff + dp, dptr[s + 1] - dp, [&](i64 k, i64 j) {
          if (j >= 0) return;
          rcol[q0 + q * c + i] = I(spmvjit_ldg(sl.ci + k) - I(sl.base));
          rval[q0 + q * c + i] = spmvjit_ldg(va + k);
          ++q;
        });
      const I pad = q ? rcol[q0 + (q - 1) * c + i] : I(r < last_col ? r : last_col);
      for (; q < width; ++q) {
        rcol[q0 + q * c + i] = pad;
        rval[q0 + q * c + i] = V(0);
      }
    }
  }
}
