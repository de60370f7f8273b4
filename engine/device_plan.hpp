// DevicePlanner: validation, statistics and conversion on the device for CSR arrays that are
// already in its memory, so a plan never copies the matrix through the host
// (templates/gpu/device_plan.cu holds the shared kernels, templates/gpu/<format>_build.cu a
// format's own; they are compiled and cached like any other).
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>

#include "core/log.hpp"
#include "engine/formats/device_converter.hpp"
#include "engine/stats.hpp"
#include "runtime/backend.hpp"
#include "runtime/device_buffer.hpp"

namespace spmvjit {

// A device-planning module for these types on this target: "device_plan" (validation,
// statistics, copies, scans) or a format's build module (Format::device_build_modules).
KernelSpec device_module_spec(const TargetInfo& t, const std::string& module, IndexType index,
                              ValueType value);

// Every kernel module a plan on target `t` may ask for (each format's variants for both types and
// every value codec, and on GPUs the device-planning and build modules, each once): what `warmup`
// compiles ahead of time.
std::vector<KernelSpec> all_kernel_specs(const TargetInfo& t);

// A launch of a grid-stride kernel: enough blocks of `block` threads to fill the device, never
// more than `items` need.
LaunchStep grid_stride_step(const TargetInfo& t, const std::string& entry, int64_t items, int block);

class DevicePlanner final : public DeviceConverter {
 public:
  // `input` holds device pointers with index base `base` (0 or 1); its sizes are already checked
  // (validate_sizes).
  DevicePlanner(Backend& backend, const CsrRef& input, int base, const std::string& cache_dir);

  // Validates the arrays and computes the statistics (entry_facts false). A defect is reported
  // exactly as validate_csr reports it: only then are the arrays copied to the host, to name the
  // row and position.
  MatrixStats analyze();
  // Starts the copies of the CSR pattern (row_ptr, and col_idx padded to kPatternPad entries)
  // that every plan of device input keeps: as its format's own arrays (row_ptr(), col_idx(), which
  // hand them over) or as the pattern update_values rebuilds values from. Launched once the
  // arrays are valid and before the host's choice, they run while it estimates. The copies the
  // plan does not take are freed with the planner.
  void prefetch_pattern();
  // Seconds spent compiling / loading kernels so far (0 compile on a warm cache).
  double compile_seconds() const { return compile_s_; }
  double load_seconds() const { return load_s_; }

  const CsrRef& shape() const override { return in_; }
  int base() const override { return base_; }
  HostArray row_ptr() override;
  HostArray col_idx(int64_t padded) override;
  HostArray values(int64_t padded) override;
  HostArray alloc(int64_t count, size_t elem) override;
  SpmvArgs args() const override;
  void launch(const std::string& module, const std::string& entry, int64_t items, const SpmvArgs& args,
              int block = 256) override;
  void exclusive_scan(void* v, int64_t n) override;
  int64_t read_i64(const void* p) override;

 private:
  LoadedModule& module(const std::string& name);
  struct SampleStart {
    std::shared_ptr<RowSample> smp;  // sizes and groups set
    HostArray offsets;               // the sampled rows' scanned lengths, being computed
  };
  SampleStart start_sample();
  std::shared_ptr<const RowSample> finish_sample(SampleStart& st);
  [[noreturn]] void report_invalid();

  Backend& b_;
  CsrRef in_;
  int base_;
  std::string cache_dir_;
  std::map<std::string, std::shared_ptr<LoadedModule>> modules_;  // device_plan + build modules
  std::unique_ptr<Executor> exec_;
  double compile_s_ = 0, load_s_ = 0;
  DeviceBuffer stats_;                                  // the statistics block (u64 slots)
  std::optional<HostArray> pre_row_ptr_, pre_col_idx_;  // prefetch_pattern's copies, until taken
  TraceSteps trace_{"device plan"};
};

}  // namespace spmvjit
