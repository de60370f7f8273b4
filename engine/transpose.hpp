// A^T built at plan time for plans of op(A) = A^T (spmv_options_t::operation): a stable counting
// sort of A's entries by column, on the host (here) or on the device (engine/transpose_device.cpp).
#pragma once

#include "core/buffer.hpp"
#include "engine/csr.hpp"
#include "engine/formats/format.hpp"

namespace spmvjit {

class DeviceConverter;

// A^T, zero-based, in A's index and value types, with each row's entries in increasing column
// order (A's row order: the sort is stable, so the layout and every sum over it are the same on
// every plan of the same A). position[k] is where A's k-th entry landed in A^T's arrays: what
// spmv_plan_update_values scatters new values through.
struct HostTranspose {
  AlignedBuffer row_ptr, col_idx, values, position;
  CsrRef ref;  // the arrays above, as the engine reads a CSR
};

// `a` must be a validated CSR of index base `base` (0 or 1) in host memory. Parallel over
// ranges of A's rows, each with its own column counts while they fit in A's own index memory.
// conjugate: A^H, complex values conjugated on the way (real values are left as they are).
HostTranspose transpose_on_host(const CsrRef& a, int base, bool conjugate = false);

// The same on the device (templates/gpu/transpose_build.cu), for the matrix `dc` holds (validated):
// the arrays in device memory (HostArray::device), in the same order as the host's. Real values
// only: complex plans (A^H among them) are built on the host.
struct DeviceTranspose {
  HostArray row_ptr, col_idx, values, position;
  CsrRef ref;
};
DeviceTranspose transpose_on_device(DeviceConverter& dc);
// The device's scatter_values: `from` and `to` in device memory, launched through `dc`.
void scatter_values_on_device(DeviceConverter& dc, const void* from, void* to, const void* position);

// to[position[k]] = from[k] for k < nnz: A's values in A^T's order (conjugated for A^H).
void scatter_values(const void* from, void* to, const void* position, int64_t nnz, IndexType index,
                    ValueType value, bool conjugate = false);

}  // namespace spmvjit
