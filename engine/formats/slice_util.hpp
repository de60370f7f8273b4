// Helpers shared by the sliced formats (sell, sellp, sell_block, sell_diag, csr5).
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <functional>
#include <numeric>
#include <string>
#include <vector>

#include "core/prefetch.hpp"
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
inline HostVector<int64_t> window_order(const CsrRef& a, int64_t sigma) {
  HostVector<int64_t> order(static_cast<size_t>(a.rows));
  std::iota(order.begin(), order.end(), int64_t(0));
  if (sigma <= 1) return order;
  HostVector<int64_t> len(static_cast<size_t>(a.rows));
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

// Prefetches the entries (column indices and values) of the rows at sorted positions
// [first, first + count) (clipped to rows): sorted rows are read in an order no hardware
// prefetcher follows.
template <class I, class V>
inline void prefetch_rows(const I* rp, const I* ci, const V* av, const HostVector<int64_t>& order,
                          int64_t first, int64_t count, int64_t rows) {
  for (int64_t pos = first; pos < std::min(rows, first + count); ++pos) {
    const int64_t r = order[size_t(pos)], b = rp[r], e = rp[r + 1];
    if (b == e) continue;
    for (int64_t k = b; k < e; k += 64 / int64_t(sizeof(I))) prefetch_line(ci + k);
    prefetch_line(ci + e - 1);
    for (int64_t k = b; k < e; k += 64 / int64_t(sizeof(V))) prefetch_line(av + k);
    prefetch_line(av + e - 1);
  }
}

// Facts of a SELL-family layout for describe.
inline Json sliced_facts(int64_t slices, int64_t stored, int64_t nnz) {
  return Json::object({{"slices", slices}, {"padding_ratio", nnz ? double(stored) / double(nnz) : 1.0}});
}

// Finishes a SELL-family FormatData whose slice_ptr, col_idx and values are in their contract
// slots: fills perm_slot (sorted position -> row; empty when
// unsorted), n[slices_slot], stored entries, byte count and facts. Launch steps are the caller's.
template <class I>
void finish_sliced(FormatData& d, int perm_slot, int slices_slot, const HostVector<int64_t>& order,
                   bool permuted, int64_t rows, int64_t slices, int64_t stored, int64_t nnz) {
  I* perm = d.make<I>(perm_slot, permuted ? rows : 0);
  for (int64_t r = 0; permuted && r < rows; ++r) perm[r] = I(order[size_t(r)]);
  d.stored_entries = stored;
  d.matrix_bytes = sum_matrix_bytes(d);
  d.ints[slices_slot] = slices;
  d.facts = sliced_facts(slices, stored, nnz);
}

// Fails with the padded size, before allocating, when padding would blow memory.
inline void check_padding(const char* format, int64_t stored, int64_t nnz, int64_t slack, double slot_bytes,
                          bool int32_index) {
  if (stored > kMaxPaddingFactor * nnz + slack)
    fail(SPMV_STATUS_UNSUPPORTED, std::string(format) + ": padding " + std::to_string(nnz) + " nonzeros to " +
                                      std::to_string(stored) + " slots (" +
                                      std::to_string(double(stored) * slot_bytes / 1e9) + " GB) exceeds " +
                                      std::to_string(kMaxPaddingFactor) + "x; refusing");
  if (int32_index && stored > INT32_MAX)
    fail(SPMV_STATUS_SIZE_OVERFLOW,
         std::string(format) + ": padded size " + std::to_string(stored) + " overflows int32 indices");
}

inline int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

}  // namespace spmvjit::slice_util
