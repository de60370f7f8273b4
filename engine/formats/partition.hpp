// Balanced splitting of work units by a monotone cumulative-weight function.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

namespace spmvjit {

// cum(u) = weight of units [0, u), non-decreasing. Returns parts + 1 boundaries in [0, units]
// such that each range carries about cum(units) / parts weight (binary search per boundary).
template <class Cum>
std::vector<int64_t> split_prefix(int64_t units, int parts, Cum&& cum) {
  parts = std::max(1, parts);
  std::vector<int64_t> b(size_t(parts) + 1, 0);
  b[size_t(parts)] = units;
  const int64_t total = cum(units);
  for (int p = 1; p < parts; ++p) {
    const long double target = (long double)total * p / parts;
    int64_t lo = b[size_t(p) - 1], hi = units;
    while (lo < hi) {
      const int64_t mid = lo + (hi - lo) / 2;
      if ((long double)cum(mid) < target) lo = mid + 1; else hi = mid;
    }
    b[size_t(p)] = lo;
  }
  return b;
}

}  // namespace spmvjit
