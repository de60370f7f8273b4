// GPU-only cost-model terms shared by the estimates of several formats (CPU estimates: 1, unchanged).
#pragma once

#include <algorithm>
#include <cstdint>

#include "engine/formats/format.hpp"

namespace spmvjit {

// How many times too few independent rows a row-parallel GPU kernel (one thread, or t threads,
// per row) has to keep the memory pipes busy: about 512 threads per multiprocessor are needed.
// Measured on an H100: dense-2000 (2000 rows of 2000) ran 14-25x slower in sell, sell_diag,
// sell_block and ell than in row-splitting formats, while the bytes were the same.
inline double gpu_row_starvation(int64_t parallel_rows, const TargetInfo& t) {
  if (t.backend == BackendKind::cpu) return 1.0;
  return std::max(1.0, double(std::max(t.sm_count, 1)) * 512.0 / double(std::max<int64_t>(parallel_rows, 1)));
}

}  // namespace spmvjit
