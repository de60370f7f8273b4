// Device transpose: the launches of templates/gpu/transpose_build.cu (steps in
// templates/contract/transpose.h).
#include <utility>

#include "engine/formats/device_converter.hpp"
#include "engine/transpose.hpp"

namespace spmvjit {
#include "templates/contract/device_plan.h"
#include "templates/contract/transpose.h"

namespace {
constexpr const char* kModule = "transpose_build";

// Step 5 of templates/contract/transpose.h: the columns of more than TR_SHORT entries, listed in
// g.a[TR_COUNTS], sorted in tiles, then merged in passes between perm and `scratch`.
void sort_long_columns(DeviceConverter& dc, const SpmvArgs& g, int64_t long_columns, int64_t nnz, size_t is,
                       HostArray& scratch) {
  HostArray entries = dc.alloc(long_columns + 1, sizeof(int64_t));
  HostArray tiles = dc.alloc(long_columns + 1, sizeof(int64_t));
  HostArray longest = dc.alloc(1, sizeof(int64_t));
  SpmvArgs z = g;  // tr_zero of one entry
  z.a[TR_COUNTS] = longest.device.get();
  z.cols = 0;
  dc.launch(kModule, "spmvjit_tr_zero", 1, z);
  SpmvArgs h = g;
  h.a[TR_LONG_ENTRIES] = entries.device.get();
  h.a[TR_LONG_TILES] = tiles.device.get();
  h.a[TR_LONG_MAX] = longest.device.get();
  h.n[TR_N_LONG] = long_columns;
  dc.launch(kModule, "spmvjit_tr_long_sizes", long_columns, h);
  dc.exclusive_scan(entries.device.get(), long_columns);
  dc.exclusive_scan(tiles.device.get(), long_columns);
  const int64_t tile_count = dc.read_i64(static_cast<const int64_t*>(tiles.device.get()) + long_columns);
  dc.launch(kModule, "spmvjit_tr_sort_tiles", tile_count * TR_SORT_BLOCK, h, TR_SORT_BLOCK);
  const int64_t max_len = dc.read_i64(longest.device.get());
  if (max_len <= TR_TILE) return;
  const int64_t total = dc.read_i64(static_cast<const int64_t*>(entries.device.get()) + long_columns);
  scratch = dc.alloc(nnz, is);
  const void* perm = g.a[TR_PERM];
  const void* src = perm;
  const void* dst = scratch.device.get();
  for (int64_t run = TR_TILE; run < max_len; run *= 2) {
    h.a[TR_PERM] = src;
    h.a[TR_OUT] = dst;
    h.n[TR_N_RUN] = run;
    dc.launch(kModule, "spmvjit_tr_merge", total, h);
    std::swap(src, dst);
  }
  if (src != perm) {  // an odd number of passes: copied back (every column fits one run)
    h.a[TR_PERM] = src;
    h.a[TR_OUT] = perm;
    h.n[TR_N_RUN] = max_len;
    dc.launch(kModule, "spmvjit_tr_merge", total, h);
  }
  dc.read_i64(longest.device.get());  // waits: the arrays above go back to the allocator on return
}
}  // namespace

DeviceTranspose transpose_on_device(DeviceConverter& dc) {
  const CsrRef& a = dc.shape();
  const size_t is = size_of(a.index), vs = size_of(a.value);
  DeviceTranspose t;
  SpmvArgs g = dc.args();
  g.a[TR_ROW_PTR] = a.row_ptr;
  g.a[TR_COL_IDX] = a.col_idx;
  g.a[TR_VALUES] = a.val;
  g.n[TR_N_NNZ] = a.nnz;
  HostArray counts = dc.alloc(a.cols + 1, sizeof(int64_t));
  g.a[TR_COUNTS] = counts.device.get();
  dc.launch(kModule, "spmvjit_tr_zero", a.cols + 1, g);
  if (a.nnz) dc.launch(kModule, "spmvjit_tr_count", a.nnz, g);
  dc.exclusive_scan(counts.device.get(), a.cols);
  t.row_ptr = dc.alloc(a.cols + 1, is);
  g.a[TR_T_ROW_PTR] = t.row_ptr.device.get();
  dc.launch(kModule, "spmvjit_tr_row_ptr", a.cols + 1, g);
  t.col_idx = dc.alloc(a.nnz, is);
  t.values = dc.alloc(a.nnz, vs);
  t.position = dc.alloc(a.nnz, is);
  if (a.nnz) {
    HostArray perm = dc.alloc(a.nnz, is);
    g.a[TR_PERM] = perm.device.get();
    dc.launch(kModule, "spmvjit_tr_fill", a.nnz, g);
    dc.launch(kModule, "spmvjit_tr_sort_short", a.cols, g);
    const int64_t long_columns = dc.read_i64(static_cast<const int64_t*>(counts.device.get()) + a.cols);
    HostArray scratch;
    if (long_columns) sort_long_columns(dc, g, long_columns, a.nnz, is, scratch);
    g.a[TR_POSITION] = t.position.device.get();
    dc.launch(kModule, "spmvjit_tr_position", a.nnz, g);
    g.a[TR_OUT] = t.col_idx.device.get();
    g.a[TR_T_VALUES] = t.values.device.get();
    dc.launch(kModule, "spmvjit_tr_scatter", a.rows, g);
    dc.read_i64(counts.device.get());  // waits: perm and the scratch go back to the allocator here
  }
  t.ref = CsrRef{a.cols,
                 a.rows,
                 a.nnz,
                 a.index,
                 a.value,
                 t.row_ptr.device.get(),
                 t.col_idx.device.get(),
                 t.values.device.get()};
  return t;
}

void scatter_values_on_device(DeviceConverter& dc, const void* from, void* to, const void* position) {
  const CsrRef& a = dc.shape();
  if (!a.nnz) return;
  SpmvArgs g = dc.args();
  g.a[TR_VALUES] = from;
  g.a[TR_POSITION] = position;
  g.a[TR_OUT] = to;
  g.n[TR_N_NNZ] = a.nnz;
  dc.launch(kModule, "spmvjit_tr_scatter_values", a.nnz, g);
}

}  // namespace spmvjit
