// Plans one matrix with one format, verifies it against the reference, and times it.
#pragma once

#include <string>

#include "core/json.hpp"
#include "engine/csr.hpp"
#include "spmvjit/spmvjit.h"

namespace spmvjit::cli {

// Products (nnz x k) past which bench's SpMM checks judge a sample of rows (engine/reference.hpp
// check_vectors): the full long-double check of 8-32 vectors of a 16-27M-nonzero matrix takes
// longer than everything else bench does with it. 2^25: with scattered columns each product is a
// cache and TLB miss into X, and a bench makes about 18 checks (auto and device-input plans, their
// tiered and updated kernels, cuSPARSE's algorithms). At 2^27 short-8M and perm-16M with 32
// column-major vectors ran past 110 s on the H100; a CPU run of short-8M sat in these checks.
constexpr int64_t kSpmmCheckWork = int64_t(1) << 25;

struct MeasureResult {
  std::string format;  // as chosen (forced or auto)
  Json params;         // the format's parameters
  std::string cache;   // memory / disk / compiled
  bool ok = false;     // planned and verified
  std::string error;   // why not
  // plan_s: the plan measured; with TimingModes::second_plan, the planner's choices' second plan
  // of this matrix, and plan_first_s the first (0 when not run).
  double plan_first_s = 0;
  double plan_s = 0, validate_s = 0, stats_s = 0, estimate_s = 0, convert_s = 0, compile_s = 0, load_s = 0,
         upload_s = 0;
  double exec_s = 0;                        // median seconds of one SpMV (beta = 0), warm (back to back)
  double exec_cold_s = 0, exec_sync_s = 0;  // the same, GPU timing modes cold and sync; 0 when not run
  // Planner's choices only: spmv_plan_update_values in the input's memory, the first (finds the
  // value map) and the median of later ones; 0 when not measured.
  double update_first_s = 0, update_s = 0;
  double bytes = 0;      // bytes this format moves per SpMV
  double csr_bytes = 0;  // CSR-equivalent bytes per SpMV
  Json describe;         // the plan's describe_json()
  double gbs() const { return exec_s > 0 ? bytes / exec_s * 1e-9 : 0; }
  double csr_gbs() const { return exec_s > 0 ? csr_bytes / exec_s * 1e-9 : 0; }
};

// The GPU timing modes run besides warm (tools/spmvjit/gpu_bench.hpp's GpuTiming).
// second_plan: the planner's choices (auto and device input) are timed on a second plan of the
// matrix, the first one's time kept in plan_first_s (bench; `run` times its one plan).
struct TimingModes {
  bool cold = false, sync = false, second_plan = false;
};

// format "" = planner's choice. Never throws: failures land in `error`.
MeasureResult measure(const HostCsr<int64_t, double>& a, IndexType index, ValueType value,
                      const spmv_options_t& options, const std::string& format, int min_iters,
                      double min_seconds, TimingModes timing = {});
// The same for a complex matrix (value c32 or c64): verified against the complex reference with
// complex alpha and beta (k vectors too: engine/reference_complex.hpp), timed as above.
MeasureResult measure(const HostCsr<int64_t, std::complex<double>>& a, IndexType index, ValueType value,
                      const spmv_options_t& options, const std::string& format, int min_iters,
                      double min_seconds, TimingModes timing = {});

}  // namespace spmvjit::cli
