// Small helpers shared by the coo, csr_vector, ell, hyb, jds and merge converters.
#pragma once

#include <algorithm>
#include <cstring>
#include <vector>

#include "engine/formats/format.hpp"

namespace spmvjit {

// Threads per GPU block of csr_vector and merge (their templates' BLOCK); formats on a kernel
// contract take theirs from templates/contract/<format>.h.
inline constexpr int kGpuBlock = 256;

// A "parts" array (excluded from matrix bytes) holding the given boundaries.
inline HostArray parts_array(const std::vector<int64_t>& bounds,
                             const std::string& name = "parts") {
  HostArray h = make_array<int64_t>(name, int64_t(bounds.size()));
  if (!bounds.empty()) std::memcpy(h.buf.data(), bounds.data(), bounds.size() * sizeof(int64_t));
  return h;
}

// Copy of a CSR array into a fresh converted array.
template <class T>
HostArray copy_array(const std::string& name, const T* src, int64_t count, bool values = false) {
  HostArray h = make_array<T>(name, count, values);
  if (count) std::memcpy(h.buf.data(), src, size_t(count) * sizeof(T));
  return h;
}

// Grid (in blocks of kGpuBlock threads) covering n items, at least 1 so a launch is always legal.
inline int64_t gpu_grid(int64_t n, int64_t per_block = kGpuBlock) {
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
