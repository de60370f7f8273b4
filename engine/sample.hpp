// RowSample: a few thousand rows of the matrix, in evenly spread aligned groups, that estimates
// read instead of the matrix (structure such as diagonals and blocks costs O(sample), and a
// matrix in device memory is planned from the same sample, gathered there).
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <typeindex>
#include <vector>

#include "core/buffer.hpp"
#include "engine/csr.hpp"

namespace spmvjit {

struct RowSample {
  // Rows per group: divisible by every slice height (powers of two up to 64) and block height
  // (up to 8, with 3 and 6), so a sampled group holds whole slices and whole block rows.
  static constexpr int64_t kGroupRows = 192;
  static constexpr int64_t kMaxGroups = 64;
  static constexpr int64_t kMaxEntries = 16384;  // what a device copies back to the host
  // A sample of one group of long rows (dense rows, dense blocks) keeps the group's first rows
  // that hold kLongEntries entries, in whole slices of every height (kLongRows): dense:2000's
  // 192 rows were 384,000 entries, 1.3 ms of its device plan to copy back and mark on an H200.
  static constexpr int64_t kLongEntries = 4 * kMaxEntries, kLongRows = 64;

  int64_t groups = 0;         // sampled groups
  int64_t matrix_groups = 0;  // groups in the matrix: ceil(rows / kGroupRows)
  // The sampled rows, group after group, as a zero-based int64 CSR. Columns are shifted by as
  // much as their rows moved (a multiple of kGroupRows), so every offset col - row and every
  // alignment of rows and columns to a divisor of kGroupRows is the matrix's; a shifted column
  // may be negative. Values keep the matrix's type.
  HostVector<int64_t> row_ptr{0}, col_idx;
  AlignedBuffer values;
  int64_t rows = 0, cols = 0;
  ValueType value = ValueType::f64;
  // Every sampled row's columns ascend (strictly or not): estimates skip their own checks.
  // rows_strict: strictly (no repeated column), so a row whose last column is its first plus
  // its length less one holds a consecutive run.
  bool rows_ascending = false, rows_strict = false;

  // The sample as a matrix (estimates run on it as on the whole one).
  CsrRef ref() const {
    return CsrRef{rows,  cols,           int64_t(col_idx.size()), IndexType::i64,
                  value, row_ptr.data(), col_idx.data(),          values.data()};
  }
  // Distinct offsets col - row among the sampled entries, counted up to cap + 1 (a banded matrix
  // has few; the count stops as soon as it exceeds cap). O(sampled entries).
  int64_t distinct_offsets(int64_t cap) const { return distinct_offsets(cap, rows); }
  // The same among the first `first_rows` sampled rows.
  int64_t distinct_offsets(int64_t cap, int64_t first_rows) const;
  // The fewest leading sampled rows (at least one) holding `entries` entries, or all rows.
  int64_t prefix_rows(int64_t entries) const {
    const auto it = std::lower_bound(row_ptr.begin() + 1, row_ptr.end(), entries);
    return std::min<int64_t>(rows,
                             std::max<int64_t>(int64_t(it - row_ptr.begin()), std::min<int64_t>(rows, 1)));
  }
  // Sampled rows stand for this many matrix rows each.
  double scale(int64_t matrix_rows) const { return rows ? double(matrix_rows) / double(rows) : 1.0; }

  // What estimates derive from the sample and several threads read (bsr's census): one T per
  // sample, made by the first thread that asks and kept as long as the sample. T guards its own
  // parts (a once_flag per part, say).
  template <class T>
  T& memo() const {
    std::lock_guard lock(memo_mu_);
    std::shared_ptr<void>& p = memo_[std::type_index(typeid(T))];
    if (!p) p = std::make_shared<T>();
    return *static_cast<T*>(p.get());
  }

 private:
  mutable std::mutex memo_mu_;
  mutable std::map<std::type_index, std::shared_ptr<void>> memo_;
};

// How many groups to sample for a matrix (`rows` rows, `nnz` nonzeros) and where group g starts
// (a multiple of kGroupRows, one group per stratum: templates/contract/device_plan.h): the host
// and the device gather the same rows.
int64_t sample_groups(int64_t rows, int64_t nnz);
int64_t sample_group_start(int64_t g, int64_t groups, int64_t matrix_groups);
// How many of a sampled group's `rows` rows the sample keeps (RowSample::kLongEntries), the same
// on the host and the device: entries(j) is the entries of the group's first j rows (j <= rows).
template <class Entries>
int64_t sample_kept_rows(int64_t groups, int64_t rows, Entries&& entries) {
  if (groups != 1 || entries(rows) <= RowSample::kLongEntries) return rows;
  int64_t lo = 1, hi = rows;  // the fewest rows holding kLongEntries entries
  while (lo < hi) {
    const int64_t mid = lo + (hi - lo) / 2;
    if (entries(mid) >= RowSample::kLongEntries)
      hi = mid;
    else
      lo = mid + 1;
  }
  return std::min(rows, (lo + RowSample::kLongRows - 1) / RowSample::kLongRows * RowSample::kLongRows);
}

// Sets rows_ascending and rows_strict from the sampled columns (one pass; both ways of sampling
// call it).
void mark_ascending(RowSample& s);

// The sample of a zero-based host CSR.
std::shared_ptr<const RowSample> sample_rows(const CsrRef& a);

}  // namespace spmvjit
