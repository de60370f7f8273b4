// A DeviceConverter on host memory that runs the formats' GPU build kernels on the CPU through the
// emulation prelude (templates/gpu/prelude_emu.h): device conversions are tested without a GPU.
#pragma once

#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>

#include "engine/formats/device_converter.hpp"
#include "runtime/backend.hpp"
#include "runtime/cache/kernel_cache.hpp"
#include "runtime/device_buffer.hpp"

namespace spmvjit {
#include "templates/contract/device_plan.h"
}  // namespace spmvjit

namespace spmvjit::test {

// "Device" memory of the emulated device: host memory, so DeviceBuffer owns it as on a GPU.
class HostMemoryBackend final : public Backend {
 public:
  static HostMemoryBackend& get() {
    static HostMemoryBackend b;
    return b;
  }
  BackendKind kind() const override { return BackendKind::cuda; }
  const TargetInfo& target() const override { return info_; }
  std::string compiler_version() const override { return "none"; }
  std::vector<std::string> compile_options(const KernelSpec&) const override { return {}; }
  std::vector<char> compile(const KernelSource&) override { fail(SPMV_STATUS_UNSUPPORTED, "no compiler"); }
  std::shared_ptr<LoadedModule> load(const std::vector<char>&, const std::string&) override {
    fail(SPMV_STATUS_UNSUPPORTED, "no loader");
  }
  std::unique_ptr<Executor> make_executor(int) override { fail(SPMV_STATUS_UNSUPPORTED, "no executor"); }
  void* alloc(size_t bytes) override { return std::malloc(bytes); }
  void free(void* p) override { std::free(p); }
  void upload(void* dst, const void* src, size_t bytes) override { std::memcpy(dst, src, bytes); }
  void download(void* dst, const void* src, size_t bytes) override { std::memcpy(dst, src, bytes); }
  bool is_host() const override { return false; }

 private:
  TargetInfo info_;
};

class EmulatedDevice final : public DeviceConverter {
 public:
  // `input` holds host arrays with index base `base`, as a device would hold them.
  EmulatedDevice(const CsrRef& input, int base) : in_(input), base_(base) {}

  const CsrRef& shape() const override { return in_; }
  int base() const override { return base_; }
  HostArray row_ptr() override {
    return copy(in_.row_ptr, in_.rows + 1, in_.rows + 1, size_of(in_.index), true);
  }
  HostArray col_idx(int64_t padded) override {
    return copy(in_.col_idx, in_.nnz, padded, size_of(in_.index), true);
  }
  HostArray values(int64_t padded) override {
    return copy(in_.val, in_.nnz, padded, size_of(in_.value), false);
  }
  HostArray alloc(int64_t count, size_t elem) override {
    HostArray h;
    h.count = count;
    h.elem = elem;
    const size_t bytes = size_t(count) * elem;
    // Poisoned, as fresh device memory may hold anything: a kernel that reads what it did not
    // write shows up as a byte difference from the host converter.
    h.device = DeviceBuffer(HostMemoryBackend::get(), bytes);
    if (bytes) std::memset(h.device.get(), 0xa5, bytes);
    return h;
  }
  SpmvArgs args() const override {
    SpmvArgs a{};
    a.rows = in_.rows;
    a.cols = in_.cols;
    a.n[DP_N_BASE] = base_;
    return a;
  }
  // Runs the kernel for every (block, thread) of a small odd-sized grid, one after another: the
  // kernels are grid-stride, so any grid covers the items, and an odd one exercises the strides.
  void launch(const std::string& module, const std::string& entry, int64_t items, const SpmvArgs& a,
              int block) override {
    Backend& cpu = get_backend(BackendKind::cpu, 0);
    KernelSpec spec = spec_for(cpu.target(), module, "gpu/" + module + ".cu", in_.index, in_.value);
    CacheOutcome o;
    auto m = get_kernel(cpu, spec, "", &o);
    auto fn = reinterpret_cast<void (*)(SpmvArgs)>(m->entry(entry));
    auto set =
        reinterpret_cast<void (*)(unsigned, unsigned, unsigned, unsigned)>(m->entry("spmvjit_emu_thread"));
    const unsigned bdim = unsigned(std::min(block, 3));
    const unsigned grid = unsigned(std::clamp<int64_t>((items + bdim - 1) / bdim, 1, 4));
    for (unsigned b = 0; b < grid; ++b)
      for (unsigned t = 0; t < bdim; ++t) set(b, t, bdim, grid), fn(a);
    ++launches_;
  }
  void exclusive_scan(void* v, int64_t n) override {
    int64_t* p = static_cast<int64_t*>(v);
    int64_t run = 0;
    for (int64_t i = 0; i < n; ++i) {
      const int64_t x = p[i];
      p[i] = run;
      run += x;
    }
    p[n] = run;
  }
  int64_t read_i64(const void* p) override { return *static_cast<const int64_t*>(p); }
  bool cooperative() const override { return false; }
  int launches() const { return launches_; }

 private:
  HostArray copy(const void* src, int64_t n, int64_t padded, size_t elem, bool index) {
    HostArray h = alloc(padded, elem);
    if (padded) std::memset(h.device.get(), 0, size_t(padded) * elem);
    if (n) std::memcpy(h.device.get(), src, size_t(n) * elem);
    if (index && base_) {
      for (int64_t i = 0; i < n; ++i) {
        if (elem == 4)
          static_cast<int32_t*>(h.device.get())[i] -= base_;
        else
          static_cast<int64_t*>(h.device.get())[i] -= base_;
      }
    }
    return h;
  }

  CsrRef in_;
  int base_;
  int launches_ = 0;
};

}  // namespace spmvjit::test
