// Device transpose: the launches of templates/gpu/transpose_build.cu (steps in
// templates/contract/transpose.h).
#include "engine/formats/device_converter.hpp"
#include "engine/transpose.hpp"

namespace spmvjit {
#include "templates/contract/device_plan.h"
#include "templates/contract/transpose.h"

namespace {
constexpr const char* kModule = "transpose_build";
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
    if (long_columns) {
      scratch = dc.alloc(a.nnz, is);
      g.a[TR_OUT] = scratch.device.get();
      g.n[TR_N_LONG] = long_columns;
      dc.launch(kModule, "spmvjit_tr_sort_long", long_columns * TR_SORT_BLOCK, g, TR_SORT_BLOCK);
    }
    g.a[TR_POSITION] = t.position.device.get();
    dc.launch(kModule, "spmvjit_tr_position", a.nnz, g);
    g.a[TR_OUT] = t.col_idx.device.get();
    g.a[TR_T_VALUES] = t.values.device.get();
    dc.launch(kModule, "spmvjit_tr_scatter", a.rows, g);
    // perm and the scratch are freed on return: launches are in order, so after their last use.
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
