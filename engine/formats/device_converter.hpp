// DeviceConverter: what a format's convert_device builds with, for CSR arrays already in a
// device's memory (engine/device_plan.cpp implements it). The shared steps (zero-based copies,
// scans) are here; a format's own build kernels live in its templates/gpu/<format>_build.cu,
// compiled and cached like any kernel, and are launched through launch(). Arrays come back in
// device memory (HostArray::device) with no host copy; FormatData::put files them by slot.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "engine/formats/format.hpp"

namespace spmvjit {

class DeviceConverter {
 public:
  virtual ~DeviceConverter() = default;
  // The input's shape and types; its arrays are device pointers with index base base().
  virtual const CsrRef& shape() const = 0;
  virtual int base() const = 0;
  // The input's arrays, zero-based; col_idx and values are padded with zeros to `padded` entries.
  virtual HostArray row_ptr() = 0;
  virtual HostArray col_idx(int64_t padded) = 0;
  virtual HostArray values(int64_t padded) = 0;
  // `count` elements of `elem` bytes of uninitialized device memory.
  virtual HostArray alloc(int64_t count, size_t elem) = 0;
  // Arguments with rows, cols and n[DP_N_BASE] (templates/contract/device_plan.h) set.
  virtual SpmvArgs args() const = 0;
  // Runs `entry` of the build module templates/gpu/<module>.cu (grid-stride kernels: enough
  // blocks of `block` threads for `items` work items, capped to fill the device).
  virtual void launch(const std::string& module, const std::string& entry, int64_t items,
                      const SpmvArgs& args, int block = 256) = 0;
  // Exclusive scan in place of the int64 device array `v` of n entries; the total lands at v[n].
  virtual void exclusive_scan(void* v, int64_t n) = 0;
  // One int64 from device memory (waits for the work queued so far).
  virtual int64_t read_i64(const void* p) = 0;
  // Whether kernels whose threads cooperate inside a block (shared memory, barriers) run: a real
  // device's do; the CPU emulation of the tests runs threads one by one and leaves them out.
  virtual bool cooperative() const { return true; }
  // The CODE8 table a build writes codes with instead of values (Format::builds_device_codes), or
  // null (plain values): the sorted patterns in device memory, how many, and a device count
  // (unsigned 64-bit) the build adds the values the table lacks to.
  struct Codes {
    const void* table;
    int64_t patterns;
    void* errors;
  };
  const Codes* codes() const { return codes_ ? &*codes_ : nullptr; }
  void set_codes(std::optional<Codes> c) { codes_ = c; }

 private:
  std::optional<Codes> codes_;
};

}  // namespace spmvjit
