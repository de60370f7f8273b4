// Measure-mode planning: build the best few candidates, time them, keep the fastest (+ wisdom).
#pragma once

#include <memory>

#include "engine/plan.hpp"

namespace spmvjit {

// Returns the fastest of the top candidates (by estimate) for A, timed on this device. Reads
// and writes wisdom under the plan's cache directory when there is one.
std::unique_ptr<Plan> plan_by_measurement(const spmv_csr_t& a, const spmv_options_t& options);

}  // namespace spmvjit
