// DevicePlanner: validation, statistics and conversion on the device for CSR arrays that are
// already in its memory, so a plan never copies the matrix through the host
// (templates/gpu/device_plan.cu holds the kernels; they are compiled and cached like any other).
#pragma once

#include <memory>
#include <string>

#include "engine/formats/device_converter.hpp"
#include "engine/stats.hpp"
#include "runtime/backend.hpp"

namespace spmvjit {

// The module of device-planning kernels for these types on this backend.
KernelSpec device_plan_spec(const Backend& backend, IndexType index, ValueType value);

// Device memory owned through a shared_ptr (freed with a logged, never thrown, failure).
std::shared_ptr<void> device_alloc(Backend& backend, size_t bytes);

class DevicePlanner final : public DeviceConverter {
 public:
  // `input` holds device pointers with index base `base` (0 or 1); its sizes are already checked
  // (validate_sizes).
  DevicePlanner(Backend& backend, const CsrRef& input, int base, const std::string& cache_dir);

  // Validates the arrays and computes the statistics (entry_facts false). A defect is reported
  // exactly as validate_csr reports it: only then are the arrays copied to the host, to name the
  // row and position.
  MatrixStats analyze();
  // Seconds spent compiling / loading the kernels (0 compile on a warm cache).
  double compile_seconds() const { return compile_s_; }
  double load_seconds() const { return load_s_; }

  const CsrRef& shape() const override { return in_; }
  HostArray row_ptr() override;
  HostArray col_idx(int64_t padded) override;
  HostArray values(int64_t padded) override;
  AdaptiveCounts adaptive_layout(HostArray& blocks, HostArray& chunk_row, HostArray& chunk_start,
                                 HostArray& block_nnz) override;
  void sell(int64_t c, HostArray& slice_ptr, HostArray& col_idx, HostArray& values) override;

 private:
  void launch(const char* entry, int64_t items, const SpmvArgs& args, int block = 256);
  HostArray alloc(const std::string& name, int64_t count, size_t elem, bool values = false);
  SpmvArgs args() const;
  [[noreturn]] void report_invalid();

  Backend& b_;
  CsrRef in_;
  int base_;
  std::shared_ptr<LoadedModule> module_;
  std::unique_ptr<Executor> exec_;
  double compile_s_ = 0, load_s_ = 0;
  std::shared_ptr<void> stats_;                    // the statistics block (u64 slots)
  std::shared_ptr<void> win_blocks_, win_chunks_;  // csr_adaptive's per-window counts, scanned
  int64_t windows_ = 0;
  bool analyzed_ = false;
};

}  // namespace spmvjit
