// A plan's values: compression of the converted value arrays (engine/value_codec.hpp) and
// spmv_plan_update_values (new values for the plan's pattern, through a value map, one gather,
// once the first update has found one that reproduces a full reconversion).
#include <algorithm>
#include <cstring>
#include <optional>

#include "core/log.hpp"
#include "engine/device_plan.hpp"
#include "engine/plan.hpp"
#include "engine/value_map.hpp"

namespace spmvjit {

std::optional<ValueTable> Plan::code8_table(const FormatParams& p) const {
  if (codec_of(p) != ValueCodec::code8 || !choice_.sample_values || is_complex(value_)) return std::nullopt;
  ValueTable table;
  if (codec_for(*choice_.sample_values, choice_.estimate.stored_entries, nnz_, &table) != ValueCodec::code8)
    return std::nullopt;
  // The converters count and pad with code 0 as zero: -0.0 would be a second zero.
  const uint64_t negative_zero = uint64_t(1) << (8 * size_of(value_) - 1);
  if (table.bits.empty() || table.bits[0] != 0 ||
      std::find(table.bits.begin(), table.bits.end(), negative_zero) != table.bits.end())
    return std::nullopt;
  return table;
}

void Plan::finish_coded(FormatData& d, ValueTable table) {
  for (HostArray& h : d.arrays)  // empty value arrays as the encoders leave them
    if (h.is_values() && !h.count) h.elem = size_of(value_);
  d.matrix_bytes = sum_matrix_bytes(d);
  value_table_ = std::move(table);
  values_coded_ = true;
}

std::optional<FormatData> Plan::convert_coded(const Format& f, const FormatParams& p, const CsrRef& csr) {
  values_coded_ = false;
  std::optional<ValueTable> table = f.converts_codes() ? code8_table(p) : std::nullopt;
  if (!table) return std::nullopt;
  TraceSteps trace("plan on host");
  AlignedBuffer codes(size_t(std::max<int64_t>(csr.nnz, 1)));
  if (!encode_codes(csr.val, size_of(value_), csr.nnz, ValueCodeSet(*table), codes.as<uint8_t>()))
    return std::nullopt;
  trace.step("input values to codes");
  CsrRef coded = csr;
  coded.val = codes.data();
  FormatData d = f.convert_codes(coded, p, target_);
  finish_coded(d, std::move(*table));
  return d;
}

std::optional<FormatData> Plan::convert_device_coded(const Format& f, const FormatParams& p,
                                                     DevicePlanner& dp) {
  values_coded_ = false;
  std::optional<ValueTable> table = f.builds_device_codes() ? code8_table(p) : std::nullopt;
  if (!table) return std::nullopt;
  // One upload: the error count (zero), then the table's patterns.
  const AlignedBuffer patterns = table->table_values();
  AlignedBuffer staged(sizeof(uint64_t) + patterns.bytes());
  std::memset(staged.data(), 0, sizeof(uint64_t));
  std::memcpy(static_cast<char*>(staged.data()) + sizeof(uint64_t), patterns.data(), patterns.bytes());
  DeviceBuffer buf(*backend_, staged.bytes());
  backend_->upload(buf.get(), staged.data(), staged.bytes());
  char* errors = static_cast<char*>(buf.get());
  dp.set_codes(DeviceConverter::Codes{errors + sizeof(uint64_t), int64_t(table->bits.size()), errors});
  std::optional<FormatData> d;
  try {
    d = f.convert_device(dp, p, target_);
  } catch (...) {
    dp.set_codes(std::nullopt);
    throw;
  }
  dp.set_codes(std::nullopt);
  uint64_t bad = 0;
  backend_->download(&bad, errors, sizeof bad);  // waits for the build
  if (bad) {
    log_debug("plan: " + std::to_string(bad) +
              " values are not in the sample's CODE8 table; converting plain");
    return std::nullopt;
  }
  finish_coded(*d, std::move(*table));
  return d;
}

void Plan::compress_values(bool on_device) {
  ValueCodec codec = codec_of(choice_.params);
  if (codec == ValueCodec::plain) return;
  if (values_coded_) return;  // converted from codes: value_table_ is their table
  // The chosen candidate's table (wisdom may name a codec this sample does not allow).
  ValueTable table;
  bool ok = choice_.sample_values &&
            codec_for(*choice_.sample_values, choice_.estimate.stored_entries, nnz_, &table) == codec;
  auto encode = [&] {
    return on_device ? encode_values_device(*backend_, cache_dir_, target_, data_, codec, table)
                     : encode_values_host(data_, codec, table);
  };
  if (ok) ok = encode();
  if (!ok && codec == ValueCodec::uniform && table.bits.size() == 1) {
    // The conversion padded where its estimate said it would not: the value and padding's zero.
    codec = ValueCodec::code8;
    if (table.bits[0] != 0) table.bits.insert(table.bits.begin(), uint64_t(0));  // +0.0 sorts first
    ok = encode();
    if (ok) choice_.params = data_.params = with_codec(choice_.params, codec);
  }
  if (!ok) {
    // Nothing was encoded: the arrays are the plain conversion, the kernel still to be loaded.
    choice_.params = data_.params = with_codec(choice_.params, ValueCodec::plain);
    choice_.why =
        std::string("values stored plain: the matrix holds a value its sample did not; ") + choice_.why;
    log_info("plan: " + choice_.why);
    return;
  }
  value_table_ = std::move(table);
}

void Plan::set_values_table() {
  args_.values_table = nullptr;
  if (value_codec() == ValueCodec::plain) return;
  host_values_table_ = value_table_.table_values();
  if (backend_->is_host()) {
    args_.values_table = host_values_table_.data();
    return;
  }
  if (!device_values_table_) {  // room for any table: an update may bring a bigger one
    device_values_table_ = DeviceBuffer(*backend_, size_of(value_) * SPMVJIT_VALUES_TABLE_MAX);
    device_bytes_ += int64_t(device_values_table_.bytes());
  }
  backend_->upload(device_values_table_.get(), host_values_table_.data(), host_values_table_.bytes());
  args_.values_table = device_values_table_.get();
}

bool Plan::try_value_map(const std::function<std::unique_ptr<ValueMap>()>& build, const void* values,
                         const FormatData& fresh) {
  // Only the first update tries: later ones gather once the map reproduces this conversion.
  if (value_map_tried_) return false;
  value_map_tried_ = true;
  // Position codes stand in for values as one 4- or 8-byte integer: complex values reconvert.
  if (is_complex(value_)) return false;
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

FormatData plain_value_arrays(const FormatData& layout, Backend* device, bool allocate) {
  FormatData d;
  d.format = layout.format;
  d.params = layout.params;
  d.index = layout.index;
  d.value = layout.value;
  d.arrays.resize(layout.arrays.size());
  for (size_t i = 0; i < layout.arrays.size(); ++i) {
    const HostArray& l = layout.arrays[i];
    HostArray& h = d.arrays[i];
    h.name = l.name;
    h.kind = l.kind;
    if (!l.is_values()) continue;
    h.count = l.count;
    h.elem = size_of(layout.value);
    if (!allocate) continue;
    if (device)
      h.device = DeviceBuffer(*device, h.elem * size_t(h.count));
    else
      h.buf = AlignedBuffer(h.elem * size_t(h.count));
  }
  return d;
}

void Plan::update_values(const void* values, spmv_memory_t memory) {
  if (!values && nnz_ > 0) fail(SPMV_STATUS_INVALID_VALUE, "values is null");
  if (memory != SPMV_MEMORY_HOST && memory != SPMV_MEMORY_DEVICE)
    fail(SPMV_STATUS_INVALID_VALUE, "unknown memory kind " + std::to_string(int(memory)));
  AlignedBuffer expanded;  // a symmetric matrix: the triangle's values in the full matrix's order
  if (symmetric_) {
    if (!values && input_nnz_ > 0) fail(SPMV_STATUS_INVALID_VALUE, "values is null");
    expanded = expand_symmetric_update(values, memory);
    values = expanded.data();
    memory = SPMV_MEMORY_HOST;
  }
  if (transposed() && nnz_ && transposed_on_device_) {  // A's values to A^T's order on the device
    SPMVJIT_ASSERT(!conjugated(), "A^H transposed on the device");
    DeviceBuffer staged, reordered(*backend_, size_of(value_) * size_t(nnz_));
    if (memory == SPMV_MEMORY_HOST) {
      staged = DeviceBuffer(*backend_, reordered.bytes());
      backend_->upload(staged.get(), values, reordered.bytes());
      values = staged.get();
    }
    const CsrRef a{cols_, rows_, nnz_, index_, value_, nullptr, nullptr, nullptr};
    DevicePlanner dp(*backend_, a, 0, cache_dir_);
    scatter_values_on_device(dp, values, reordered.get(), device_transpose_position_.get());
    update_values_on_device(reordered.get(), SPMV_MEMORY_DEVICE);
    backend_->synchronize(nullptr);  // before `reordered` goes back to the allocator
    return;
  }
  AlignedBuffer reordered;  // op(A) = A^T (A^H) built on the host: A's values in its order
  if (transposed() && nnz_) {
    AlignedBuffer fetched;
    if (memory == SPMV_MEMORY_DEVICE) {
      if (backend_->is_host()) fail(SPMV_STATUS_INVALID_VALUE, "device values for a CPU plan");
      fetched = AlignedBuffer(size_of(value_) * size_t(nnz_));
      backend_->download(fetched.data(), values, fetched.bytes());
      values = fetched.data();
    }
    reordered = AlignedBuffer(size_of(value_) * size_t(nnz_));
    scatter_values(values, reordered.data(), transpose_position_.data(), nnz_, index_, value_, conjugated());
    values = reordered.data();
    memory = SPMV_MEMORY_HOST;
  }
  if (converted_on_device_) return update_values_on_device(values, memory);
  AlignedBuffer downloaded;
  if (nnz_ && memory == SPMV_MEMORY_DEVICE) {
    if (backend_->is_host()) fail(SPMV_STATUS_INVALID_VALUE, "device values for a CPU plan");
    downloaded = AlignedBuffer(size_of(value_) * size_t(nnz_));
    backend_->download(downloaded.data(), values, downloaded.bytes());
    values = downloaded.data();
  }
  if (!value_map_ && !value_map_tried_ && pattern_in_layout_ && !pattern_row_ptr_.data() &&
      !is_complex(value_))
    value_map_from_layout();
  const bool plain = value_codec() == ValueCodec::plain;
  if (value_map_ && plain) {  // one gather pass, straight into the plan's arrays
    value_map_->gather(values, data_);
    install_values(FormatData{}, values, SPMV_MEMORY_HOST);
    return;
  }
  if (value_map_ && value_codec() == ValueCodec::code8) {
    // Straight to codes when the table holds every new value (one pass: map, values, one byte
    // out); else with a table of the new values when they fit one (a pass over them first:
    // poisson2d:1000's update with new distinct values took 8.7 SpMVs through plain values, an
    // encode and their table), else through plain values below.
    FormatData codes = plain_value_arrays(data_, nullptr, false);
    if (value_map_->gather_codes(values, value_table_, codes)) {
      install_values(std::move(codes), values, SPMV_MEMORY_HOST, true);
      return;
    }
    if (std::optional<ValueTable> t = table_of_values(values, nnz_, value_, ValueCodec::code8)) {
      codes = plain_value_arrays(data_, nullptr, false);
      if (value_map_->gather_codes(values, *t, codes)) {
        install_values(std::move(codes), values, SPMV_MEMORY_HOST, true);
        value_table_ = std::move(*t);
        set_values_table();  // on a GPU an upload into the table's buffer, sized for any table
        return;
      }
    }
  }
  FormatData fresh;
  if (value_map_) {
    fresh = plain_value_arrays(data_, nullptr);
    value_map_->gather(values, fresh);
  } else {
    TraceSteps trace("update_values (first)");
    if (pattern_in_layout_ && !pattern_row_ptr_.data()) derive_pattern();
    trace.step("pattern");
    const bool own_pattern = pattern_row_ptr_.data() != nullptr;
    const CsrRef csr{rows_,
                     cols_,
                     nnz_,
                     index_,
                     value_,
                     own_pattern ? pattern_row_ptr_.data() : data_.arrays[0].buf.data(),
                     own_pattern ? pattern_col_idx_.data() : data_.arrays[1].buf.data(),
                     values};
    fresh = choice_.format->convert(csr, with_codec(choice_.params, ValueCodec::plain), target_);
    SPMVJIT_ASSERT(fresh.arrays.size() == data_.arrays.size(), "reconversion changed the layout");
    for (size_t i = 0; i < data_.arrays.size(); ++i)
      if (data_.arrays[i].is_values())
        SPMVJIT_ASSERT(fresh.arrays[i].count == data_.arrays[i].count, "reconversion changed a size");
    trace.step("reconvert");
    // A pattern rebuilt from the layout is not needed once a value map gathers the updates.
    if (try_value_map([&] { return ValueMap::build_host(*choice_.format, choice_.params, target_, csr); },
                      values, fresh) &&
        pattern_in_layout_)
      pattern_row_ptr_ = AlignedBuffer(), pattern_col_idx_ = AlignedBuffer();
    trace.step("value map");
  }
  install_values(std::move(fresh), values, SPMV_MEMORY_HOST);
}

void Plan::update_values_on_device(const void* values, spmv_memory_t memory) {
  // The device rebuilds the format from the kept pattern and the new values; only the value
  // arrays are swapped in, after everything succeeded (a failure changes nothing). Once a value
  // map has reproduced such a rebuild, later updates are one gather kernel.
  DeviceBuffer staged;
  const void* user_values = values;
  if (memory == SPMV_MEMORY_HOST && nnz_) {
    staged = DeviceBuffer(*backend_, size_of(value_) * size_t(nnz_));
    backend_->upload(staged.get(), values, size_of(value_) * size_t(nnz_));
    values = staged.get();
  }
  const bool plain = value_codec() == ValueCodec::plain;
  if (value_map_ && plain) {
    TraceSteps trace("update_values (device)");
    value_map_->gather(values, data_, &data_);
    trace.step("launch");
    backend_->synchronize(nullptr);  // the caller may free or change `values` on return
    trace.step("gather kernels (wait)");
    return;
  }
  if (value_map_ && value_codec() == ValueCodec::code8) {
    // Straight to codes when the table holds every new value (one kernel: map and values read
    // once, a byte written per slot), else through plain values and an encode below.
    FormatData codes = plain_value_arrays(data_, nullptr, false);
    if (value_map_->gather_codes(values, value_table_, codes, &data_)) {
      TraceSteps trace("update_values (device codes)");
      install_values(std::move(codes), user_values, memory, true);
      trace.step("install");
      return;
    }
  }
  FormatData fresh;
  if (value_map_) {
    fresh = plain_value_arrays(data_, backend_);
    value_map_->gather(values, fresh, &data_);
  } else {
    const CsrRef pattern{rows_, cols_, nnz_, index_, value_, device_pattern(0), device_pattern(1), values};
    DevicePlanner dp(*backend_, pattern, 0, cache_dir_);
    dp.analyze();
    fresh = choice_.format->convert_device(dp, with_codec(choice_.params, ValueCodec::plain), target_);
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
  }
  install_values(std::move(fresh), user_values, memory);
}

void Plan::install_values(FormatData fresh, const void* values, spmv_memory_t memory, bool encoded) {
  // `fresh` holds plain value arrays (empty: they are in data_ already, plain), or arrays encoded
  // with the plan's table already (`encoded`); `values` are the caller's nnz values, for a new
  // table when the old one lacks a value.
  const ValueCodec codec = value_codec();
  bool drop = false;
  if (!fresh.arrays.empty() && codec != ValueCodec::plain && !encoded) {
    auto encode = [&](const ValueTable& t) {
      return converted_on_device_ ? encode_values_device(*backend_, cache_dir_, target_, fresh, codec, t)
                                  : encode_values_host(fresh, codec, t);
    };
    if (!encode(value_table_)) {
      AlignedBuffer host;
      if (memory == SPMV_MEMORY_DEVICE && nnz_) {
        host = AlignedBuffer(size_of(value_) * size_t(nnz_));
        backend_->download(host.data(), values, host.bytes());
        values = host.data();
      }
      const std::optional<ValueTable> t = table_of_values(values, nnz_, value_, codec);
      if (t && encode(*t)) {
        value_table_ = *t;
        set_values_table();
      } else {
        drop = true;
      }
    }
  }
  // Plain values from here on need the plain kernel: looked up (compiled when the cache lacks it)
  // before anything changes, so a failure leaves the plan as it was.
  KernelLookup plain_kernel;
  FormatParams plain_params;
  if (drop) {
    plain_params = with_codec(choice_.params, ValueCodec::plain);
    plain_kernel = lookup_kernel(spec_with(plain_params));
  }
  const bool device_built = converted_on_device_;
  for (size_t i = 0; i < data_.arrays.size() && !fresh.arrays.empty(); ++i) {
    HostArray& h = data_.arrays[i];
    if (!h.is_values()) continue;
    HostArray& f = fresh.arrays[i];
    h.elem = f.elem;
    if (device_built) {
      h.device = std::move(f.device);  // the old values are freed here
      args_.a[i] = h.device.get();
    } else {
      h.buf = std::move(f.buf);
    }
  }
  data_.matrix_bytes = sum_matrix_bytes(data_);
  if (!device_built && !backend_->is_host()) {  // host-converted GPU plan: upload the new arrays
    for (size_t i = 0; i < data_.arrays.size(); ++i) {
      const HostArray& h = data_.arrays[i];
      if (!h.is_values()) continue;
      if (device_arrays_[i].bytes() != h.buf.bytes()) {
        device_bytes_ += int64_t(h.buf.bytes()) - int64_t(device_arrays_[i].bytes());
        device_arrays_[i] = DeviceBuffer(*backend_, h.buf.bytes());
        args_.a[i] = device_arrays_[i].get();
      }
      if (h.buf.bytes()) backend_->upload(device_arrays_[i].get(), h.buf.data(), h.buf.bytes());
    }
  }
  if (backend_->is_host())
    for (size_t i = 0; i < data_.arrays.size(); ++i)
      if (data_.arrays[i].is_values()) args_.a[i] = data_.arrays[i].buf.data();
  if (drop) {
    choice_.params = data_.params = plain_params;
    choice_.why = "values stored plain since an update needed more than a " + std::string(to_string(codec)) +
                  " table; " + choice_.why;
    log_info("update_values: values stored plain from now on (more than a " + std::string(to_string(codec)) +
             " table holds)");
    // The specialized compile of the old kernel, if still queued or running, ends with the kernel:
    // an orphaned job would outlive the plan and could still be compiling at exit.
    if (upgrade_) release_upgrade(*upgrade_);
    upgrade_.reset();
    spec_ = chosen_spec();
    use_kernel(std::move(plain_kernel));
    set_values_table();
  }
  if (device_built) backend_->synchronize(nullptr);  // the caller may free or change `values` on return
}

}  // namespace spmvjit
