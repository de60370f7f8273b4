// The SELL-C-sigma layout (sell, and sellp with its t) built on a device: the sorted row order
// (templates/gpu/window_sort.cu), then slice sizes, their scan and the fill (sell_build.cu).
#pragma once

#include <algorithm>
#include <utility>

#include "engine/formats/device_converter.hpp"
#include "engine/formats/slice_util.hpp"

namespace spmvjit {
#include "templates/contract/sell.h"
#include "templates/contract/window_sort.h"

inline constexpr const char* kWindowSortModule = "window_sort";
inline constexpr const char* kSellBuildModule = "sell_build";

// Sorted position -> row (index type, rows entries): windows of sigma rows sorted by decreasing
// length, stable (slice_util::window_order's order), in log2(sigma) merge passes. Where sigma and
// WSORT_TILE divide one another, one launch sorts tiles of WSORT_TILE rows in shared memory first
// and the passes start from runs of a tile: a 1024-row window took 10 passes, 3.2 ms on
// short:8000000:2 (H200), for an SpMV of 0.18 ms.
inline HostArray device_window_order(DeviceConverter& dc, int64_t sigma) {
  const CsrRef& a = dc.shape();
  const size_t is = size_of(a.index);
  HostArray order = dc.alloc(a.rows, is);
  if (a.rows == 0) return order;
  const int64_t span = std::min(sigma, a.rows);  // rows a window sorts
  const bool tiled = dc.cooperative() && sigma > 1 && (sigma % WSORT_TILE == 0 || WSORT_TILE % sigma == 0);
  int first = 0;  // runs of 2^first rows are sorted before the merge passes
  if (tiled)
    while ((int64_t(1) << first) < std::min<int64_t>(WSORT_TILE, span)) ++first;
  int passes = first == 0 ? 1 : 0;  // without the tiles the first merges single rows (and copies
  while ((int64_t(1) << (first + passes)) < span) ++passes;  // a window of one row through)
  // Ping-pong between the order and a scratch array so that the last step writes the order.
  HostArray scratch = passes > 0 ? dc.alloc(a.rows, is) : HostArray{};
  void* buf[2] = {order.device.get(), scratch.device.get()};
  SpmvArgs g = dc.args();
  g.a[WSORT_ROW_PTR] = a.row_ptr;
  g.n[WSORT_N_SIGMA] = sigma;
  if (tiled) {
    g.a[WSORT_DST] = buf[passes % 2];
    dc.launch(kWindowSortModule, "spmvjit_sort_tile",
              slice_util::ceil_div(a.rows, WSORT_TILE) * (WSORT_TILE / 2), g, WSORT_TILE / 2);
  }
  for (int p = 0; p < passes; ++p) {
    g.a[WSORT_SRC] = buf[(passes - p) % 2];
    g.a[WSORT_DST] = buf[(passes - 1 - p) % 2];
    g.n[WSORT_N_RUN] = int64_t(1) << (first + p);
    dc.launch(kWindowSortModule, "spmvjit_sort_merge", a.rows, g);
  }
  return order;
}

struct SlicedArrays {
  HostArray slice_ptr, col_idx, values, perm;  // perm: empty when sigma <= 1
  int64_t slices = 0, stored = 0;
};

// The host converters' arrays for slices of c rows (c a power of two <= 128), windows of sigma
// rows sorted (sigma > 1, a multiple of c) and widths rounded up to multiples of t. Fails as the
// host does when padding passes slice_util::check_padding with `slack` slots.
inline SlicedArrays build_sliced_on_device(DeviceConverter& dc, const char* format, int64_t c, int64_t sigma,
                                           int64_t t, int64_t slack) {
  const CsrRef& a = dc.shape();
  SlicedArrays out;
  out.slices = slice_util::ceil_div(a.rows, c);
  if (sigma > 1) out.perm = device_window_order(dc, sigma);
  out.slice_ptr = dc.alloc(out.slices + 1, sizeof(int64_t));
  SpmvArgs g = dc.args();
  g.a[SELL_BUILD_ROW_PTR] = a.row_ptr;
  g.a[SELL_BUILD_COL_IDX_IN] = a.col_idx;
  g.a[SELL_BUILD_VALUES_IN] = a.val;
  g.a[SELL_BUILD_SLICE_PTR] = out.slice_ptr.device.get();
  g.a[SELL_BUILD_PERM] = out.perm.device.get();
  g.n[SELL_BUILD_N_C] = c;
  g.n[SELL_BUILD_N_SLICES] = out.slices;
  g.n[SELL_BUILD_N_PERMUTED] = sigma > 1;
  g.n[SELL_BUILD_N_T] = t;
  // Sizes by slice, scanned into offsets. One thread per window of 4096 rows took 1.9 ms of
  // short-8M's device plan on an H200 (a serial walk); a thread per slice takes a fraction.
  if (out.slices) dc.launch(kSellBuildModule, "spmvjit_build_sizes", out.slices, g);
  dc.exclusive_scan(out.slice_ptr.device.get(), out.slices);
  out.stored = dc.read_i64(static_cast<const int64_t*>(out.slice_ptr.device.get()) + out.slices);
  const size_t is = size_of(a.index), vs = size_of(a.value);
  slice_util::check_padding(format, out.stored, a.nnz, slack, double(is + vs), a.index == IndexType::i32);
  out.col_idx = dc.alloc(out.stored, is);
  out.values = dc.alloc(out.stored, vs);
  g.a[SELL_BUILD_COL_IDX] = out.col_idx.device.get();
  g.a[SELL_BUILD_VALUES] = out.values.device.get();
  if (out.slices) dc.launch(kSellBuildModule, "spmvjit_build_fill", out.slices * c, g);
  return out;
}

}  // namespace spmvjit
