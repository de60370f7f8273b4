// Plan: everything one matrix needs at execute time (converted arrays, kernels, executor).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "engine/planner.hpp"
#include "engine/stats.hpp"
#include "runtime/backend.hpp"
#include "runtime/cache/kernel_cache.hpp"

namespace spmvjit {

struct PlanTimings {
  double validate = 0, stats = 0, plan = 0, convert = 0, codegen = 0, compile = 0, load = 0,
         upload = 0, total = 0;
};

class Plan {
 public:
  Plan(const spmv_csr_t& a, const spmv_options_t& options);
  ~Plan();
  Plan(const Plan&) = delete;
  Plan& operator=(const Plan&) = delete;

  void execute(const void* alpha, const void* x, const void* beta, void* y, void* stream);
  void update_values(const void* values, spmv_memory_t memory);
  const std::string& describe();

  const FormatData& data() const { return data_; }
  const MatrixStats& stats() const { return stats_; }
  const PlanTimings& timings() const { return timings_; }
  BackendKind backend_kind() const { return backend_->kind(); }
  ValueType value_type() const { return value_; }
  // Bytes one SpMV moves in this format (matrix arrays + x + y read and written).
  int64_t bytes_per_spmv(bool beta_zero) const;
  // The same for plain CSR with this matrix's types: the common yardstick for GB/s.
  int64_t csr_equivalent_bytes(bool beta_zero) const;

 private:
  void upload_arrays();
  void bind_entries();

  Backend* backend_ = nullptr;
  TargetInfo target_;
  IndexType index_;
  ValueType value_;
  int64_t rows_ = 0, cols_ = 0, nnz_ = 0;
  MatrixStats stats_;
  PlanChoice choice_;
  FormatData data_;
  KernelSpec spec_;
  CacheOutcome cache_;
  std::shared_ptr<LoadedModule> module_;
  std::unique_ptr<Executor> executor_;
  std::vector<void*> entries_[kEpilogueVariants];  // per epilogue, one per launch step
  std::vector<void*> device_arrays_;                // GPU copies of data_.arrays (owned)
  void* device_scratch_ = nullptr;
  int64_t device_bytes_ = 0;                         // device memory the plan holds
  AlignedBuffer host_scratch_;
  AlignedBuffer pattern_row_ptr_, pattern_col_idx_;  // zero-based pattern, for update_values
  SpmvArgs args_{};
  PlanTimings timings_;
  std::string describe_;
};

// The Plan behind a C handle (tools and tests inspect plans through it).
Plan& plan_impl(spmv_plan_t plan);

}  // namespace spmvjit
