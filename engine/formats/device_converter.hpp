// DeviceConverter: the conversion steps a device runs on CSR arrays that are already in its
// memory (engine/device_plan.cpp implements it with the kernels of templates/gpu/device_plan.cu).
// Formats that can be built from these steps implement Format::convert_device with them; the
// arrays they return live in device memory (HostArray::device) and hold no host copy.
#pragma once

#include <cstdint>

#include "engine/formats/format.hpp"

namespace spmvjit {

struct AdaptiveCounts {
  int64_t blocks = 0, long_rows = 0, chunks = 0;
};

class DeviceConverter {
 public:
  virtual ~DeviceConverter() = default;
  // The input's shape and types (its arrays are device pointers; its index base is handled here).
  virtual const CsrRef& shape() const = 0;
  // The input's arrays, zero-based; col_idx and values are padded with zeros to `padded` entries.
  virtual HostArray row_ptr() = 0;
  virtual HostArray col_idx(int64_t padded) = 0;
  virtual HostArray values(int64_t padded) = 0;
  // csr_adaptive's GPU layout (adaptive_layout.hpp): row-block starts then rows, the (row, first
  // nonzero) of every chunk of a long row, and each row block's first nonzero then nnz, all in
  // the index type.
  virtual AdaptiveCounts adaptive_layout(HostArray& blocks, HostArray& chunk_row, HostArray& chunk_start,
                                         HostArray& block_nnz) = 0;
  // SELL-C with sigma = 1 (C a power of two <= 64): slice_ptr (int64, slices + 1), then col_idx
  // and values slice by slice, column-major, padded with the row's last column and zeros.
  // Refuses blown-up padding (slice_util::check_padding) before allocating col_idx and values.
  virtual void sell(int64_t c, HostArray& slice_ptr, HostArray& col_idx, HostArray& values) = 0;
};

}  // namespace spmvjit
