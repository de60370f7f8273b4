// ValueMap: where each stored value of a converted format comes from, so that
// spmv_plan_update_values gathers the new values in one pass (about one SpMV of traffic)
// instead of converting the matrix again. Found once, by converting values that encode their
// own positions (the bits of k + 1 in entry k), and trusted only after it reproduced a real
// conversion bit for bit: a format whose value arrays are not plain copies keeps reconverting.
#pragma once

#include <memory>
#include <optional>
#include <vector>

#include "engine/formats/format.hpp"
#include "engine/value_codec.hpp"
#include "runtime/backend.hpp"
#include "runtime/device_buffer.hpp"

namespace spmvjit {

class ValueMap {
 public:
  // Host layouts: converts `pattern` (zero-based CSR; its values are ignored) with position codes.
  // nullptr when the codes do not come back as positions.
  static std::unique_ptr<ValueMap> build_host(const Format& f, const FormatParams& p, const TargetInfo& t,
                                              CsrRef pattern);
  // Host layouts that hold the pattern (rows strictly ascending, each entry in a slot of its own,
  // `held` telling those slots in value_slot_bases' numbering): the map read off the layout, in
  // parallel, with no conversion: each row's first entry and count for a sliced layout
  // (Format::sliced_values), else every slot's position as the format writes it
  // (Format::number_slots; `held` must be marks), entry (row, col) being CSR position row's
  // start + col's rank in the row. nullptr when the format has neither, or the slots cannot be
  // shape.nnz entries.
  static std::unique_ptr<ValueMap> from_layout(const Format& f, const FormatData& layout, const CsrRef& shape,
                                               const HeldSlots& held);
  // Device layouts: the same through the format's device build (`pattern` in device memory,
  // zero-based), the map kept in device memory, the gather kernel resolved once.
  static std::unique_ptr<ValueMap> build_device(Backend& b, const std::string& cache_dir, CsrRef pattern,
                                                const Format& f, const FormatParams& p, const TargetInfo& t);

  // Writes the value slots of `data` from `values` (nnz values of the plan's type, in the memory
  // the map was built for: host buffers, or device arrays HostArray::device).
  // Device maps: `layout` is the plan's layout (index arrays in device memory) for a format's own
  // gather (Format::device_gather); without it the map's generic gather runs.
  void gather(const void* values, FormatData& data, const FormatData* layout = nullptr) const;
  // The CODE8 codes (table `t`) of the values gathering `values` would give, written as new
  // one-byte value arrays of `data` (its value slots: name, kind, count; host buffers, or device
  // arrays for a device map): no plain copy on the way. False, with `data` unchanged, when a
  // value is not in the table.
  bool gather_codes(const void* values, const ValueTable& t, FormatData& data,
                    const FormatData* layout = nullptr) const;
  // True when gathering `values` gives exactly the value arrays of `expected` (a fresh conversion
  // of the same values): the check that makes the map trusted.
  bool reproduces(const void* values, const FormatData& expected) const;
  // True when a device map's gathers run the format's own kernel (Format::device_gather).
  bool format_gathers() const { return format_gather_ != nullptr; }
  // Bytes the map holds (host or device).
  int64_t bytes() const;
  // How it finds each slot's entry: "sliced" or "blocked" (computed as the slots go by, from each
  // row's first entry), "positions" (one a slot), "device" (positions in device memory).
  const char* kind() const {
    return device_ ? "device" : sliced_ ? "sliced" : blocked_ ? "blocked" : "positions";
  }

 private:
  struct Slot {
    size_t array = 0;     // slot in FormatData::arrays
    int64_t count = 0;    // stored values
    AlignedBuffer host;   // positions (int32 or int64; -1: padding) for host layouts
    DeviceBuffer device;  // the same in device memory (the plan's index type)
  };
  ValueMap() = default;
  // A map of one value array (sliced or blocked), its rows' starts zeroed (value_map_computed.cpp).
  static std::unique_ptr<ValueMap> one_array(const FormatData& d, size_t array, const CsrRef& shape);
  void launch(void* entry, int64_t items, const SpmvArgs& a) const;
  // Sliced layouts (Format::sliced_values): each row's first entry and count, no positions.
  static std::unique_ptr<ValueMap> from_slices(SlicedValues sv, const FormatData& d, const CsrRef& shape,
                                               const HeldSlots& held);
  // Blocked layouts (Format::blocked_values): each row's first entry and each block's held slots
  // (a bit mask; blocks of up to 64 slots), no positions.
  static std::unique_ptr<ValueMap> from_blocks(BlockedValues bv, const FormatData& d, const CsrRef& shape,
                                               const HeldSlots& held);
  template <class Make>
  void each_slice_unit(Make&& make) const;
  template <class Make>
  void each_sliced_slot(Make&& make, const void* values, size_t elem) const;
  template <class Make>
  void each_blocked_slot(Make&& make) const;
  // Maps whose positions are computed as the slots go by (sliced or blocked): slot(k, position)
  // for every slot k of the one value array, position -1 for padding, a run per thread (make()
  // gives each thread its own).
  bool computed() const { return sliced_ || blocked_; }
  template <class Make>
  void each_computed_slot(Make&& make, const void* values) const;
  void gather_computed(const void* values, void* out) const;
  bool gather_codes_computed(const void* values, const ValueCodeSet& lookup, FormatData& data) const;
  bool gather_codes_device(const void* values, const ValueTable& t, FormatData& data,
                           const FormatData* layout) const;
  // The format's gather (templates/contract/value_gather.h) over every value array: outs[i] for
  // slots_[i] (none for VG_CHECK), errors counted at `errors`.
  void launch_format_gather(const FormatData& layout, const void* values, void* const* outs, int mode,
                            int64_t table_patterns, void* errors) const;
  int64_t row_at(int64_t position) const {  // a sliced layout's row at a position, -1 past the rows
    if (position >= rows_) return -1;
    return sliced_->perm.empty() ? position : sliced_->perm[size_t(position)];
  }
  static constexpr int64_t kSliceRows = 512;    // positions of one slice a unit of work
  static constexpr int64_t kPrefetchRows = 64;  // how far ahead a sorted sliced gather prefetches
  static constexpr int64_t kPrefetchLines = 8;  // and how many of a row's cache lines
  std::optional<SlicedValues> sliced_;
  std::optional<BlockedValues> blocked_;
  HostVector<uint64_t> masks_;     // a blocked layout's blocks: bit i * C + j for slot (i, j) held
  HostVector<int64_t> row_start_;  // rows + 1: each row's first entry, then nnz (blocked layouts)
  // Sliced layouts: each position's (< rows) row's first entry and count, in position order.
  HostVector<int64_t> pos_first_, pos_len_;
  int64_t rows_ = 0;
  bool device_ = false;
  size_t value_bytes_ = 8, pos_bytes_ = 8;
  int64_t nnz_ = 0;
  std::vector<Slot> slots_;
  // Device layouts: the device_plan module and what runs its kernels.
  Backend* backend_ = nullptr;
  std::shared_ptr<LoadedModule> module_;
  void* gather_ = nullptr;
  void* gather_codes_ = nullptr;
  // The format's own gather, once it computed the map's positions (null: the generic gather), and
  // what it reads besides the layout: the pattern's row_ptr (the plan's, kept for its life).
  DeviceGather format_spec_;  // the format's device_gather for the plan's layout (fixed by it)
  std::shared_ptr<LoadedModule> format_module_;
  void* format_gather_ = nullptr;
  const void* pattern_row_ptr_ = nullptr;
  int64_t pattern_rows_ = 0;
  // gather_codes_device's, kept from update to update: the table's buffer and the patterns it
  // holds, the error count and its value after the last call.
  mutable DeviceBuffer table_, errors_;
  mutable std::vector<uint64_t> table_bits_;
  mutable uint64_t errors_seen_ = 0;
  std::unique_ptr<Executor> exec_;
  TargetInfo target_;
};

}  // namespace spmvjit
