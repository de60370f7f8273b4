// Small matrix builders and triplet views shared by the format and kernel tests.
#pragma once

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

#include "engine/csr.hpp"
#include "engine/formats/format.hpp"

namespace spmvjit::test {

using Csr64 = HostCsr<int64_t, double>;
using RowLists = std::vector<std::vector<std::pair<int64_t, double>>>;

// Rows given as (col, value) lists, columns kept in the given order; rows past r.size() are empty.
inline Csr64 from_rows(int64_t rows, int64_t cols, const RowLists& r) {
  Csr64 a;
  a.rows = rows;
  a.cols = cols;
  for (int64_t i = 0; i < rows; ++i) {
    if (size_t(i) < r.size())
      for (const auto& [c, v] : r[size_t(i)]) {
        a.col_idx.push_back(c);
        a.val.push_back(v);
      }
    a.row_ptr.push_back(int64_t(a.col_idx.size()));
  }
  return a;
}

// Rows out of column order and with repeated columns (the API allows both): every third row
// reversed, every fifth with its middle entry repeated next to it, every seventh with its first
// entry repeated at the end.
inline Csr64 scrambled(const Csr64& a) {
  RowLists rows(static_cast<size_t>(a.rows));
  for (int64_t r = 0; r < a.rows; ++r) {
    auto& row = rows[size_t(r)];
    for (int64_t k = a.row_ptr[size_t(r)]; k < a.row_ptr[size_t(r) + 1]; ++k)
      row.push_back({a.col_idx[size_t(k)], a.val[size_t(k)]});
    if (row.empty()) continue;
    if (r % 3 == 0) std::reverse(row.begin(), row.end());
    if (r % 5 == 0)
      row.insert(row.begin() + std::ptrdiff_t(row.size() / 2), {row[row.size() / 2].first, -0.5});
    if (r % 7 == 0) row.push_back({row.front().first, 0.25});
  }
  return from_rows(a.rows, a.cols, rows);
}

// Sorts by (row, col, value, imag) so lists with duplicate (row, col) entries compare equal.
inline void sort_triplets(std::vector<Triplet>& t) {
  std::sort(t.begin(), t.end(), [](const Triplet& x, const Triplet& y) {
    return x < y || (!(y < x) && (x.value < y.value || (x.value == y.value && x.imag < y.imag)));
  });
}

// The nonzero entries (explicit zeros dropped), sorted as sort_triplets does: what a converter's
// to_triplets must give back.
template <class I, class V>
std::vector<Triplet> triplets_of(const HostCsr<I, V>& a) {
  std::vector<Triplet> t;
  for (int64_t r = 0; r < a.rows; ++r)
    for (int64_t k = a.row_ptr[size_t(r)]; k < a.row_ptr[size_t(r) + 1]; ++k)
      if (a.val[size_t(k)] != V(0))
        t.push_back(make_triplet(r, int64_t(a.col_idx[size_t(k)]), a.val[size_t(k)]));
  sort_triplets(t);
  return t;
}

}  // namespace spmvjit::test
