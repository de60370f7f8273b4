// Helpers shared by the sliced formats of formats-b (sellp, sell_block, sell_diag, csr5).
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <numeric>
#include <string>
#include <vector>

#include "engine/formats/format.hpp"

namespace spmvjit::slice_util {

// Value slots beyond this many times the nonzeros (plus one slice of padding each) are refused
// before anything is allocated: same rule as sell.cpp.
inline constexpr int64_t kMaxPaddingFactor = 3;

// SIMD lanes of V on the CPU, warp lanes on a GPU.
inline int64_t lanes(const TargetInfo& t, size_t value_bytes) {
  return t.backend == BackendKind::cpu ? std::max<int64_t>(1, t.simd_bytes / int64_t(value_bytes))
                                       : t.warp_size;
}

// Row order after sorting each window of sigma rows by decreasing length (stable), as SELL-C-sigma.
inline std::vector<int64_t> window_order(const CsrRef& a, int64_t sigma) {
  std::vector<int64_t> order(size_t(a.rows));
  std::iota(order.begin(), order.end(), int64_t(0));
  if (sigma <= 1) return order;
  for (int64_t w = 0; w < a.rows; w += sigma) {
    const int64_t e = std::min(a.rows, w + sigma);
    std::stable_sort(order.begin() + w, order.begin() + e,
                     [&](int64_t x, int64_t y) { return a.row_len(x) > a.row_len(y); });
  }
  return order;
}

// Calls f(s) for at most `max_samples` slices spread evenly over [0, slices); returns the
// factor that scales sampled totals to all slices. Estimates stay O(sampled nonzeros).
template <class F>
double for_sampled_slices(int64_t slices, int64_t max_samples, F&& f) {
  if (slices <= 0) return 1.0;
  const int64_t n = std::min(slices, max_samples);
  for (int64_t i = 0; i < n; ++i) f(i * slices / n);
  return double(slices) / double(n);
}

// Fails with the padded size, before allocating, when padding would blow memory.
inline void check_padding(const char* format, int64_t stored, int64_t nnz, int64_t slack,
                          double slot_bytes, bool int32_index) {
  if (stored > kMaxPaddingFactor * nnz + slack)
    fail(SPMV_STATUS_UNSUPPORTED, std::string(format) + ": padding " + std::to_string(nnz) +
                                      " nonzeros to " + std::to_string(stored) + " slots (" +
                                      std::to_string(double(stored) * slot_bytes / 1e9) +
                                      " GB) exceeds " + std::to_string(kMaxPaddingFactor) +
                                      "x; refusing");
  if (int32_index && stored > INT32_MAX)
    fail(SPMV_STATUS_SIZE_OVERFLOW, std::string(format) + ": padded size " + std::to_string(stored) +
                                        " overflows int32 indices");
}

inline int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

}  // namespace spmvjit::slice_util
