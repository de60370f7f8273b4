// Small helpers shared by the converters (GPU grids, COO warp chunks, ...).
#pragma once

#include <algorithm>
#include <vector>

#include "engine/formats/format.hpp"

namespace spmvjit {

// Grid (in blocks of per_block items) covering n items, at least 1 so a launch is always legal.
inline int64_t gpu_grid(int64_t n, int64_t per_block) {
  return std::max<int64_t>(1, (n + per_block - 1) / per_block);
}

// Entries per warp for the GPU segmented-reduction COO kernels: a multiple of the warp size,
// sized so about 64 warps per multiprocessor cover the entries (fewer atomics than one batch
// per warp, enough warps to hide latency).
inline int64_t coo_warp_chunk(int64_t entries, const TargetInfo& t) {
  const int64_t ws = std::max(1, t.warp_size);
  const int64_t warps = int64_t(std::max(1, t.sm_count > 0 ? t.sm_count : 132)) * 64;
  const int64_t chunk = (entries + warps - 1) / warps;
  return std::max<int64_t>(ws, (chunk + ws - 1) / ws * ws);
}

// Lower bound of the worst part over the mean when parts are row ranges and one row is
// indivisible: the longest row alone can exceed its share.
inline double row_split_imbalance(const MatrixStats& s, const TargetInfo& t) {
  if (t.backend != BackendKind::cpu || s.nnz + s.rows == 0) return 1.0;
  const double share = double(s.nnz + s.rows) / std::max(1, t.threads);
  return std::max(1.0, double(s.row_max + 1) / share);
}

}  // namespace spmvjit
