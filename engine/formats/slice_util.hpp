// Helpers shared by the sliced formats (sell, sellp, sell_block, sell_diag, csr5).
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <functional>
#include <numeric>
#include <string>
#include <vector>

#include "engine/formats/format.hpp"

namespace spmvjit::slice_util {

// Value slots beyond this many times the nonzeros (plus one slice of padding each) are refused
// before anything is allocated.
inline constexpr int64_t kMaxPaddingFactor = 3;

// SIMD lanes of V on the CPU, warp lanes on a GPU.
inline int64_t lanes(const TargetInfo& t, size_t value_bytes) {
  return t.backend == BackendKind::cpu ? std::max<int64_t>(1, t.simd_bytes / int64_t(value_bytes))
                                       : t.warp_size;
}

// Row order after sorting each window of sigma rows by decreasing length (stable), as in
// SELL-C-sigma. Large windows use a counting sort on the lengths (O(rows + max length)), small
// ones a comparison sort.
inline std::vector<int64_t> window_order(const CsrRef& a, int64_t sigma) {
  std::vector<int64_t> order(static_cast<size_t>(a.rows));
  std::iota(order.begin(), order.end(), int64_t(0));
  if (sigma <= 1) return order;
  std::vector<int64_t> len(static_cast<size_t>(a.rows));
  int64_t max_len = 0;
  for (int64_t r = 0; r < a.rows; ++r) max_len = std::max(max_len, len[size_t(r)] = a.row_len(r));
  std::vector<int64_t> start;
  for (int64_t w = 0; w < a.rows; w += sigma) {
    const int64_t e = std::min(a.rows, w + sigma);
    if (e - w > 4096 && max_len < 4 * (e - w)) {
      start.assign(size_t(max_len) + 2, 0);
      for (int64_t r = w; r < e; ++r) ++start[size_t(max_len - len[size_t(r)]) + 1];
      for (size_t k = 1; k < start.size(); ++k) start[k] += start[k - 1];
      for (int64_t r = w; r < e; ++r) order[size_t(w + start[size_t(max_len - len[size_t(r)])]++)] = r;
    } else {
      std::stable_sort(order.begin() + w, order.begin() + e,
                       [&](int64_t x, int64_t y) { return len[size_t(x)] > len[size_t(y)]; });
    }
  }
  return order;
}

// Facts of a SELL-family layout for describe.
inline Json sliced_facts(int64_t slices, int64_t stored, int64_t nnz) {
  return Json::object({{"slices", slices}, {"padding_ratio", nnz ? double(stored) / double(nnz) : 1.0}});
}

// Finishes a SELL-family FormatData whose slice_ptr, col_idx and values are in their contract
// slots: fills perm_slot (sorted position -> row; empty when
// unsorted), n[slices_slot], stored entries, byte count and facts. Launch steps are the caller's.
template <class I>
void finish_sliced(FormatData& d, int perm_slot, int slices_slot, const std::vector<int64_t>& order,
                   bool permuted, int64_t rows, int64_t slices, int64_t stored, int64_t nnz) {
  I* perm = d.make<I>(perm_slot, permuted ? rows : 0);
  for (int64_t r = 0; permuted && r < rows; ++r) perm[r] = I(order[size_t(r)]);
  d.stored_entries = stored;
  d.matrix_bytes = sum_matrix_bytes(d);
  d.ints[slices_slot] = slices;
  d.facts = sliced_facts(slices, stored, nnz);
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

// Stored slots of SELL-C-sigma whose slice widths are rounded up to multiples of t (t = 1: plain
// SELL), without building the order, in O(rows) at most (the planner's budget):
// - sigma <= 1, C a power of two <= 64: the slice maxima from the statistics; the rounding to t
//   from sampled slices (bounded by t - 1 per slice row, so samples are accurate), or taken as
//   (t - 1) / 2 when row_ptr is not readable (device-resident input).
// - windows of sigma rows sorted by length: up to kSampledWindows windows sorted exactly and
//   extrapolated; rows far longer than the mean (few, heavy) found in one pass over row_ptr and
//   their slices counted exactly.
// - one window holding every row (a global sort, a CPU candidate for heavy-tailed rows only):
//   exact from the counts of each row length, O(rows).
inline constexpr int64_t kSampledSlices = 1024, kSampledWindows = 256;
inline int64_t sliced_entries(const CsrRef& a, const MatrixStats& s, int64_t c, int64_t sigma, int64_t t) {
  if (a.rows == 0) return 0;
  const int64_t slices = ceil_div(a.rows, c);
  auto round = [&](int64_t w) { return ceil_div(w, t) * t; };
  const double rounding_guess = t > 1 ? 0.5 * double(t - 1) * double(c) * double(slices) : 0.0;
  if (sigma <= 1) {
    double base = 0, rounding = rounding_guess;
    const bool pow2 = c <= 64 && (c & (c - 1)) == 0;
    if (pow2) base = double(c) * double(s.slice_width_sum[size_t(63 - __builtin_clzll(uint64_t(c)))]);
    if ((!pow2 || t > 1) && a.row_ptr) {
      double sampled_base = 0, sampled_rounding = 0;
      const double scale = for_sampled_slices(slices, kSampledSlices, [&](int64_t sl) {
        int64_t w = 0;
        for (int64_t r = sl * c; r < std::min(a.rows, (sl + 1) * c); ++r) w = std::max(w, a.row_len(r));
        sampled_base += double(w * c);
        sampled_rounding += double((round(w) - w) * c);
      });
      if (!pow2) base = sampled_base * scale;
      rounding = sampled_rounding * scale;
    }
    return int64_t(base + rounding + 0.5);
  }
  if (sigma >= a.rows) {
    // Walk the lengths from the longest down; each slice's width is its first row's.
    std::vector<int64_t> count(size_t(s.row_max) + 1, 0);
    for (int64_t r = 0; r < a.rows; ++r) ++count[size_t(a.row_len(r))];
    int64_t total = 0, pos = 0;  // pos: sorted position of the next row
    for (int64_t l = s.row_max; l >= 0; --l) {
      const int64_t n = count[size_t(l)];
      if (!n) continue;
      const int64_t first = ceil_div(pos, c), last = (pos + n - 1) / c;  // slices starting here
      if (last >= first) total += (last - first + 1) * round(l) * c;
      pos += n;
    }
    return total;
  }
  // Rows far longer than the mean are too few to sample well (and, sorted to the top of their
  // window, set the widths of its first slices): one pass over row_ptr finds them and their
  // slices are counted exactly; the samples cover the rest.
  int first_long = 1;
  while (first_long < int(s.row_hist.size()) &&
         (int64_t(1) << (first_long - 1)) <= 8 * (int64_t(s.row_mean) + 1))
    ++first_long;
  const int64_t long_min = int64_t(1) << (first_long - 1);
  double total = 0;
  int64_t long_rows = 0;
  for (size_t k = size_t(first_long); k < s.row_hist.size(); ++k) long_rows += s.row_hist[k];
  if (long_rows) {
    std::vector<std::pair<int64_t, int64_t>> longs;  // (window, length), in row order
    for (int64_t r = 0; r < a.rows; ++r)
      if (const int64_t l = a.row_len(r); l >= long_min) longs.push_back({r / sigma, l});
    std::vector<int64_t> group;
    for (size_t i = 0; i < longs.size();) {
      group.clear();
      const int64_t w = longs[i].first;
      for (; i < longs.size() && longs[i].first == w; ++i) group.push_back(longs[i].second);
      std::sort(group.begin(), group.end(), std::greater<>());
      for (size_t j = 0; j < group.size(); j += size_t(c)) total += double(round(group[j]) * c);
    }
  }
  const int64_t windows = ceil_div(a.rows, sigma);
  std::vector<int64_t> len;
  double sampled = 0;
  const double scale = for_sampled_slices(windows, kSampledWindows, [&](int64_t w) {
    len.clear();
    for (int64_t r = w * sigma, e = std::min(a.rows, (w + 1) * sigma); r < e; ++r)
      if (const int64_t l = a.row_len(r); l < long_min) len.push_back(l);
    std::sort(len.begin(), len.end(), std::greater<>());
    for (size_t i = 0; i < len.size(); i += size_t(c)) sampled += double(round(len[i]) * c);
  });
  total += sampled * scale;
  return std::max<int64_t>(int64_t(total + 0.5), s.nnz);
}

}  // namespace spmvjit::slice_util
