// CSR5 device build (engine/formats/csr5.cpp, convert_device): the host converter's arrays from a
// CSR in device memory. Tiles are independent once each finds its first row (a binary search in
// row_ptr), so a thread per tile writes tile_ptr, tile_desc and its count of empty_offset entries,
// and a thread per entry writes the transposed tiles; the empty rows before the tail are counted
// per window of rows; after exclusive scans of both counts, spmvjit_build_aux writes aux. Grid-
// stride: any grid works.
#include "../contract/csr5.h"
#include "../contract/device_plan.h"
#include "prelude.h"

static_assert(CSR5_BUILD_N_EMPTY_ROWS < DP_N_BASE, "csr5 build sizes overlap the index base slot");

namespace csr5b {

typedef unsigned long long u64;

SPMVJIT_DEVICE i64 grid_id() { return i64(blockIdx.x) * blockDim.x + threadIdx.x; }
SPMVJIT_DEVICE i64 grid_stride() { return i64(gridDim.x) * blockDim.x; }

// Zero-based row_ptr[r].
SPMVJIT_DEVICE i64 rp_at(const I* rp, i64 r, i64 base) { return i64(spmvjit_ldg(rp + r)) - base; }

// The last r in [lo, hi) with row_ptr[r] <= pos, given row_ptr[lo] <= pos < row_ptr[hi]: the
// (non-empty) row holding entry pos.
SPMVJIT_DEVICE i64 bisect(const I* rp, i64 lo, i64 hi, i64 base, i64 pos) {
  while (hi - lo > 1) {
    const i64 mid = lo + (hi - lo) / 2;
    if (rp_at(rp, mid, base) <= pos)
      lo = mid;
    else
      hi = mid;
  }
  return lo;
}

// The row holding entry pos (< nnz).
SPMVJIT_DEVICE i64 row_of(const I* rp, i64 rows, i64 base, i64 pos) { return bisect(rp, 0, rows, base, pos); }

// The row holding entry pos (< nnz), given row_ptr[lo] <= pos: a galloping search from lo, so a
// thread walking a tile's rows pays a load per row and a logarithm per run of empty rows (a run
// of millions costs one thread no more than its neighbours).
SPMVJIT_DEVICE i64 row_from(const I* rp, i64 lo, i64 rows, i64 base, i64 pos) {
  i64 step = 1, hi = lo + 1;
  while (hi < rows && rp_at(rp, hi, base) <= pos) {
    lo = hi;
    step *= 2;
    hi = lo + step;
  }
  return bisect(rp, lo, hi < rows ? hi : rows, base, pos);
}

// The rows that start inside the full tile at entry pos, after its first row r0: f(row, offset of
// the row's first entry in the tile) for each, in order. Returns true when empty rows lie between
// the tile's rows (the host's "rows spanned != segments").
template <class F>
SPMVJIT_DEVICE bool walk_tile(const I* rp, i64 rows, i64 base, i64 pos, i64 size, i64 r0, F&& f) {
  bool gaps = false;
  i64 r = r0, end = rp_at(rp, r0 + 1, base);  // row r's end: the next row's first entry
  while (end < pos + size) {                  // < nnz: a row holds it
    const i64 next = row_from(rp, r + 1, rows, base, end);
    gaps = gaps || next != r + 1;
    f(next, end - pos);
    r = next;
    end = rp_at(rp, r + 1, base);
  }
  return gaps;
}

SPMVJIT_DEVICE i64 popcount32(unsigned v) {
  v = v - ((v >> 1) & 0x55555555u);
  v = (v & 0x33333333u) + ((v >> 2) & 0x33333333u);
  return i64((((v + (v >> 4)) & 0x0f0f0f0fu) * 0x01010101u) >> 24);
}

// Rows [r0, r1) of window w, cut at the tail's first row: the empty rows counted and written are
// those before the tail.
SPMVJIT_DEVICE void window_rows(i64 w, i64 r_tail, i64* r0, i64* r1) {
  *r0 = w * CSR5_BUILD_WINDOW;
  *r1 = *r0 + CSR5_BUILD_WINDOW < r_tail ? *r0 + CSR5_BUILD_WINDOW : r_tail;
}

}  // namespace csr5b

// Entry j of the tile region comes from lane l, step k of its tile (the host's transpose); the
// CSR tail is copied as is.
extern "C" __global__ void spmvjit_build_entries(const SpmvArgs a) {
  const I* SPMVJIT_RESTRICT ci = (const I*)a.a[CSR5_BUILD_COL_IDX_IN];
  const V* SPMVJIT_RESTRICT va = (const V*)a.a[CSR5_BUILD_VALUES_IN];
  I* col = (I*)a.a[CSR5_BUILD_COL_IDX];
  V* val = (V*)a.a[CSR5_BUILD_VALUES];
  const i64 w = a.n[CSR5_BUILD_N_OMEGA], sg = a.n[CSR5_BUILD_N_SIGMA], S = w * sg;
  const i64 tail_start = a.n[CSR5_BUILD_N_TILES] * S, nnz = a.n[CSR5_BUILD_N_NNZ], base = a.n[DP_N_BASE];
  for (i64 j = csr5b::grid_id(); j < nnz; j += csr5b::grid_stride()) {
    i64 src = j;
    if (j < tail_start) {
      const i64 t = j / S, o = j - t * S, k = o / w, l = o - k * w;
      src = t * S + l * sg + k;
    }
    col[j] = I(i64(spmvjit_ldg(ci + src)) - base);
    val[j] = spmvjit_ldg(va + src);
  }
}

// A thread per tile: its first row (~row when empty rows lie between its segments), the
// descriptor of each lane, and in eo_ptr[t] its count of empty_offset entries (every segment's
// row, or none). Item `tiles` writes the tail's first row (rows when there is no tail) at
// tile_ptr[tiles].
extern "C" __global__ void spmvjit_build_tiles(const SpmvArgs a) {
  const I* SPMVJIT_RESTRICT rp = (const I*)a.a[CSR5_BUILD_ROW_PTR];
  i64* tile_ptr = (i64*)a.a[CSR5_BUILD_TILE_PTR];
  csr5b::u64* desc = (csr5b::u64*)a.a[CSR5_BUILD_TILE_DESC];
  i64* eo_count = (i64*)a.a[CSR5_BUILD_EO_PTR];
  const i64 w = a.n[CSR5_BUILD_N_OMEGA], sg = a.n[CSR5_BUILD_N_SIGMA], S = w * sg;
  const i64 ntiles = a.n[CSR5_BUILD_N_TILES], nnz = a.n[CSR5_BUILD_N_NNZ], base = a.n[DP_N_BASE];
  for (i64 t = csr5b::grid_id(); t <= ntiles; t += csr5b::grid_stride()) {
    const i64 pos = t * S;
    if (t == ntiles) {
      tile_ptr[t] = pos < nnz ? csr5b::row_of(rp, a.rows, base, pos) : a.rows;
      continue;
    }
    const i64 r0 = csr5b::row_of(rp, a.rows, base, pos);
    unsigned flags[CSR5_MAX_OMEGA];
    for (i64 l = 0; l < w; ++l) flags[l] = 0;
    flags[0] = 1;  // the first entry of a tile always opens segment 0 (row r0)
    i64 nseg = 1;
    const bool gaps = csr5b::walk_tile(rp, a.rows, base, pos, S, r0, [&](i64, i64 e) {
      flags[e / sg] |= 1u << (e % sg);
      ++nseg;
    });
    tile_ptr[t] = gaps ? ~r0 : r0;
    eo_count[t] = gaps ? nseg : 0;
    i64 before = 0, nz = 0;  // nz: the first lane after l with a row start, or w
    for (i64 l = 0; l < w; ++l) {
      if (nz <= l)
        for (nz = l + 1; nz < w && flags[nz] == 0;) ++nz;
      desc[t * w + l] = csr5b::u64(flags[l]) | (csr5b::u64(before) << CSR5_Y_OFFSET_SHIFT) |
                        (csr5b::u64(nz - l - 1) << CSR5_SEG_OFFSET_SHIFT);
      before += csr5b::popcount32(flags[l]);
    }
  }
}

// A thread per window of rows: the empty rows before the tail's first row (tile_ptr[tiles]).
extern "C" __global__ void spmvjit_build_empty_count(const SpmvArgs a) {
  const I* SPMVJIT_RESTRICT rp = (const I*)a.a[CSR5_BUILD_ROW_PTR];
  const i64* tile_ptr = (const i64*)a.a[CSR5_BUILD_TILE_PTR];
  i64* count = (i64*)a.a[CSR5_BUILD_WINDOW_EMPTY];
  const i64 base = a.n[DP_N_BASE], r_tail = tile_ptr[a.n[CSR5_BUILD_N_TILES]];
  const i64 windows = (a.rows + CSR5_BUILD_WINDOW - 1) / CSR5_BUILD_WINDOW;
  for (i64 w = csr5b::grid_id(); w < windows; w += csr5b::grid_stride()) {
    i64 r0, r1, n = 0;
    csr5b::window_rows(w, r_tail, &r0, &r1);
    for (i64 r = r0, b = r0 < r1 ? csr5b::rp_at(rp, r0, base) : 0; r < r1; ++r) {
      const i64 e = csr5b::rp_at(rp, r + 1, base);
      n += e == b;
      b = e;
    }
    count[w] = n;
  }
}

// aux = [empty_offset][empty rows before the tail][the tail's row_ptr], from three item ranges:
// a thread per tile with gaps (its segments' rows at eo_ptr[t]), per window of rows (its empty
// rows at the scanned window offset), per tail row_ptr entry.
extern "C" __global__ void spmvjit_build_aux(const SpmvArgs a) {
  const I* SPMVJIT_RESTRICT rp = (const I*)a.a[CSR5_BUILD_ROW_PTR];
  const i64* tile_ptr = (const i64*)a.a[CSR5_BUILD_TILE_PTR];
  const i64* eo_ptr = (const i64*)a.a[CSR5_BUILD_EO_PTR];
  const i64* woff = (const i64*)a.a[CSR5_BUILD_WINDOW_EMPTY];
  I* aux = (I*)a.a[CSR5_BUILD_AUX];
  const i64 S = a.n[CSR5_BUILD_N_OMEGA] * a.n[CSR5_BUILD_N_SIGMA], ntiles = a.n[CSR5_BUILD_N_TILES];
  const i64 n_eo = a.n[CSR5_BUILD_N_EMPTY_OFFSETS], n_empty = a.n[CSR5_BUILD_N_EMPTY_ROWS];
  const i64 base = a.n[DP_N_BASE], r_tail = tile_ptr[ntiles], tail_rows = a.rows - r_tail;
  const i64 windows = (a.rows + CSR5_BUILD_WINDOW - 1) / CSR5_BUILD_WINDOW;
  const i64 items = ntiles + windows + (tail_rows ? tail_rows + 1 : 0);
  for (i64 id = csr5b::grid_id(); id < items; id += csr5b::grid_stride()) {
    if (id < ntiles) {
      const i64 tp = tile_ptr[id];
      if (tp >= 0) continue;
      i64 at = eo_ptr[id];
      aux[at++] = I(~tp);
      csr5b::walk_tile(rp, a.rows, base, id * S, S, ~tp, [&](i64 r, i64) { aux[at++] = I(r); });
    } else if (id < ntiles + windows) {
      i64 r0, r1, at = n_eo + woff[id - ntiles];
      csr5b::window_rows(id - ntiles, r_tail, &r0, &r1);
      for (i64 r = r0, b = r0 < r1 ? csr5b::rp_at(rp, r0, base) : 0; r < r1; ++r) {
        const i64 e = csr5b::rp_at(rp, r + 1, base);
        if (e == b) aux[at++] = I(r);
        b = e;
      }
    } else {
      const i64 i = id - ntiles - windows;
      aux[n_eo + n_empty + i] = I(csr5b::rp_at(rp, r_tail + i, base));
    }
  }
}
