// Stored slots of a SELL-C-sigma layout (sell, sellp) from the statistics alone: the same estimate
// for a matrix on the host and one in device memory (whose arrays the estimates never see).
#pragma once

#include <cstdint>

#include "engine/stats.hpp"

namespace spmvjit::slice_util {

// Stored slots of SELL-C-sigma with slice widths rounded up to multiples of t (t = 1: plain SELL):
// - sigma <= 1, C a power of two <= 64: the slice maxima from the statistics (exact); the
//   rounding to t from the sample's slices (whole slices: its groups are aligned to 192 rows).
// - windows of sigma rows sorted by decreasing length: slice k of a sorted window is as wide as
//   the window's (kC+1)-th longest row, so a window stores C*t times the sum over thresholds
//   l = 1, t+1, 2t+1, ... of ceil(n(l) / C), n(l) its rows of length >= l. The rows of length
//   >= l are counted exactly below 64 (len_count), from the log2 histogram above (shaped inside
//   a bin by the sample); a window's share of them is taken as binomial (rows placed at random),
//   and a window holding every row gets them all. Clustered long rows make this an overestimate,
//   bounded by the unsorted layout (sorting never widens a window's slices).
int64_t sliced_entries(const MatrixStats& s, int64_t c, int64_t sigma, int64_t t);

}  // namespace spmvjit::slice_util
