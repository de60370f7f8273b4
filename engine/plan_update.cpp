// spmv_plan_update_values: new values for the plan's pattern, through a value map (one gather)
// once the first update has found one that reproduces a full reconversion.
#include <cstring>

#include "core/log.hpp"
#include "engine/device_plan.hpp"
#include "engine/plan.hpp"
#include "engine/value_map.hpp"

namespace spmvjit {

bool Plan::try_value_map(const std::function<std::unique_ptr<ValueMap>()>& build, const void* values,
                         const FormatData& fresh) {
  // Only the first update tries: later ones gather once the map reproduces this conversion.
  if (value_map_tried_) return false;
  value_map_tried_ = true;
  try {
    auto m = build();
    if (!m || !m->reproduces(values, fresh)) return false;
    value_map_ = std::move(m);
    return true;
  } catch (const Error& e) {
    log_debug(std::string("update_values: no value map (") + e.what() + "); later updates reconvert");
    return false;
  }
}

void Plan::update_values(const void* values, spmv_memory_t memory) {
  if (!values && nnz_ > 0) fail(SPMV_STATUS_INVALID_VALUE, "values is null");
  if (memory != SPMV_MEMORY_HOST && memory != SPMV_MEMORY_DEVICE)
    fail(SPMV_STATUS_INVALID_VALUE, "unknown memory kind " + std::to_string(int(memory)));
  if (converted_on_device_) return update_values_on_device(values, memory);
  AlignedBuffer downloaded;
  if (nnz_ && memory == SPMV_MEMORY_DEVICE) {
    if (backend_->is_host()) fail(SPMV_STATUS_INVALID_VALUE, "device values for a CPU plan");
    downloaded = AlignedBuffer(size_of(value_) * size_t(nnz_));
    backend_->download(downloaded.data(), values, downloaded.bytes());
    values = downloaded.data();
  }
  auto upload_values = [&] {
    for (size_t i = 0; i < data_.arrays.size(); ++i)
      if (data_.arrays[i].is_values() && !backend_->is_host() && device_arrays_[i].get())
        backend_->upload(device_arrays_[i].get(), data_.arrays[i].buf.data(), data_.arrays[i].buf.bytes());
  };
  if (value_map_) {  // one gather pass
    value_map_->gather(values, data_);
    upload_values();
    return;
  }
  const bool own_pattern = pattern_row_ptr_.data() != nullptr;
  const CsrRef csr{rows_,
                   cols_,
                   nnz_,
                   index_,
                   value_,
                   own_pattern ? pattern_row_ptr_.data() : data_.arrays[0].buf.data(),
                   own_pattern ? pattern_col_idx_.data() : data_.arrays[1].buf.data(),
                   values};
  FormatData fresh = choice_.format->convert(csr, choice_.params, target_);
  SPMVJIT_ASSERT(fresh.arrays.size() == data_.arrays.size(), "reconversion changed the layout");
  for (size_t i = 0; i < data_.arrays.size(); ++i)
    if (data_.arrays[i].is_values())
      SPMVJIT_ASSERT(fresh.arrays[i].buf.bytes() == data_.arrays[i].buf.bytes(),
                     "reconversion changed a size");
  try_value_map([&] { return ValueMap::build_host(*choice_.format, choice_.params, target_, csr); }, values,
                fresh);
  for (size_t i = 0; i < data_.arrays.size(); ++i)
    if (data_.arrays[i].is_values())
      std::memcpy(data_.arrays[i].buf.data(), fresh.arrays[i].buf.data(), data_.arrays[i].buf.bytes());
  upload_values();
}

void Plan::update_values_on_device(const void* values, spmv_memory_t memory) {
  // The device rebuilds the format from the kept pattern and the new values; only the value
  // arrays are swapped in, after everything succeeded (a failure changes nothing). Once a value
  // map has reproduced such a rebuild, later updates are one gather kernel.
  DeviceBuffer staged;
  if (memory == SPMV_MEMORY_HOST && nnz_) {
    staged = DeviceBuffer(*backend_, size_of(value_) * size_t(nnz_));
    backend_->upload(staged.get(), values, size_of(value_) * size_t(nnz_));
    values = staged.get();
  }
  if (value_map_) {
    value_map_->gather(values, data_);
    backend_->synchronize(nullptr);  // the caller may free or change `values` on return
    return;
  }
  const CsrRef pattern{rows_, cols_, nnz_, index_, value_, device_pattern(0), device_pattern(1), values};
  DevicePlanner dp(*backend_, pattern, 0, cache_dir_);
  dp.analyze();
  FormatData fresh = choice_.format->convert_device(dp, choice_.params, target_);
  SPMVJIT_ASSERT(fresh.arrays.size() == data_.arrays.size(), "reconversion changed the layout");
  for (size_t i = 0; i < data_.arrays.size(); ++i) {
    if (!data_.arrays[i].is_values()) continue;
    SPMVJIT_ASSERT(fresh.arrays[i].count == data_.arrays[i].count, "reconversion changed a size");
  }
  backend_->synchronize(nullptr);
  if (try_value_map(
          [&] {
            return ValueMap::build_device(*backend_, cache_dir_, pattern, *choice_.format, choice_.params,
                                          target_);
          },
          values, fresh))
    device_bytes_ += value_map_->bytes();
  for (size_t i = 0; i < data_.arrays.size(); ++i) {
    if (!data_.arrays[i].is_values()) continue;
    data_.arrays[i].device = std::move(fresh.arrays[i].device);  // the old values are freed here
    args_.a[i] = data_.arrays[i].device.get();
  }
}

std::string Plan::values_update() const {
  if (!value_map_tried_) return "not yet updated";
  return value_map_ ? "gather through a value map" : "reconversion";
}

}  // namespace spmvjit
