// BSR's blocks, shared by its census (engine/formats/bsr_census.cpp: the shapes' fill on the row
// sample) and its converter (engine/formats/bsr.cpp): the block sides, a block row's rows in
// column order, and the walk of its blocks.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <iterator>
#include <limits>
#include <type_traits>
#include <utility>
#include <vector>

#include "engine/csr.hpp"
#include "engine/sample.hpp"

namespace spmvjit::bsr_blocks {

// Block sides; the kernels are compiled for every pair but 1 x 1 (that is CSR with a block
// pointer per row).
constexpr int64_t kSides[] = {1, 2, 3, 4, 6, 8};
constexpr int kMaxSide = 8;

// Calls f(std::integral_constant<int64_t, C>) for a block width C in kSides (others: 8, which
// build() then refuses): the walks below divide by C once per entry, and a constant divisor is a
// multiply. The census dispatches block heights through it too (a merge of R rows unrolled).
template <class F>
decltype(auto) with_width(int64_t c, F&& f) {
  switch (c) {
    case 1: return f(std::integral_constant<int64_t, 1>{});
    case 2: return f(std::integral_constant<int64_t, 2>{});
    case 3: return f(std::integral_constant<int64_t, 3>{});
    case 4: return f(std::integral_constant<int64_t, 4>{});
    case 6: return f(std::integral_constant<int64_t, 6>{});
    default: return f(std::integral_constant<int64_t, 8>{});
  }
}

// The rows of one block row with ascending columns: pointers into the CSR, or sorted copies
// (stable: duplicates keep their order) of the rows that are not ascending.
template <class I, class V>
struct BlockRowView {
  int n = 0;  // rows in this block row (fewer than R in the last one)
  const I* col[kMaxSide];
  const V* val[kMaxSide];
  int64_t len[kMaxSide];
  std::vector<std::pair<I, V>> tmp;
  std::vector<I> cbuf[kMaxSide];
  std::vector<V> vbuf[kMaxSide];

  // `ascending`: the caller knows every row's columns ascend (RowSample::rows_ascending).
  void load(const CsrRef& a, int64_t r0, int64_t r, bool ascending = false) {
    n = int(std::min(r, a.rows - r0));
    for (int i = 0; i < n; ++i) {
      const int64_t b = int64_t(a.rp<I>()[r0 + i]);
      len[i] = int64_t(a.rp<I>()[r0 + i + 1]) - b;
      col[i] = a.ci<I>() + b;
      val[i] = a.vals<V>() + b;
      if (ascending || std::is_sorted(col[i], col[i] + len[i])) continue;
      tmp.resize(size_t(len[i]));
      for (int64_t k = 0; k < len[i]; ++k) tmp[size_t(k)] = {col[i][k], val[i][k]};
      std::stable_sort(tmp.begin(), tmp.end(),
                       [](const auto& x, const auto& y) { return x.first < y.first; });
      cbuf[i].resize(size_t(len[i]));
      vbuf[i].resize(size_t(len[i]));
      for (int64_t k = 0; k < len[i]; ++k)
        cbuf[i][size_t(k)] = tmp[size_t(k)].first, vbuf[i][size_t(k)] = tmp[size_t(k)].second;
      col[i] = cbuf[i].data();
      val[i] = vbuf[i].data();
    }
  }
  // Shifts the columns up by the least multiple of `step` that makes them non-negative (into the
  // copies: the rows of a RowSample, whose columns may be negative).
  void shift_nonnegative(int64_t step) {
    int64_t lo = 0;
    for (int i = 0; i < n; ++i)
      if (len[i]) lo = std::min(lo, int64_t(col[i][0]));  // rows are ascending by now
    if (lo == 0) return;
    const int64_t shift = (-lo + step - 1) / step * step;
    for (int i = 0; i < n; ++i) {
      if (col[i] != cbuf[i].data())
        cbuf[i] = std::vector<I>(col[i], col[i] + len[i]);  // col may point into cbuf
      for (I& x : cbuf[i]) x = I(int64_t(x) + shift);
      col[i] = cbuf[i].data();
    }
  }
  // Keeps only the columns in [lo, hi) of every row (rows are ascending by now).
  void keep_columns(int64_t lo, int64_t hi) {
    for (int i = 0; i < n; ++i) {
      const I* b =
          std::lower_bound(col[i], col[i] + len[i], lo, [](I x, int64_t v) { return int64_t(x) < v; });
      const I* e = std::lower_bound(b, col[i] + len[i], hi, [](I x, int64_t v) { return int64_t(x) < v; });
      val[i] += b - col[i];
      len[i] = e - b;
      col[i] = b;
    }
  }
  int64_t entries() const {
    int64_t e = 0;
    for (int i = 0; i < n; ++i) e += len[i];
    return e;
  }
};

// Walks the blocks of one block row in ascending block column, calling entry(block, i, j, value)
// for each entry (row i, column j within the block) and block(block, block_col) once per block;
// returns the number of blocks. A duplicated (row, column) goes to a repeated block of the same
// column rather than being summed, so conversion keeps every entry as it was.
template <int64_t C, class I, class V, class Entry, class Block>
int64_t walk_blocks(const BlockRowView<I, V>& w, Entry&& entry, Block&& block) {
  int64_t cur[kMaxSide] = {};
  int64_t nb = 0;
  for (;;) {
    int64_t bc = std::numeric_limits<int64_t>::max();
    for (int i = 0; i < w.n; ++i)
      if (cur[i] < w.len[i]) bc = std::min(bc, int64_t(w.col[i][cur[i]]) / C);
    if (bc == std::numeric_limits<int64_t>::max()) return nb;
    int64_t copies = 1;
    for (int i = 0; i < w.n; ++i) {
      const I* col = w.col[i];
      int64_t k = cur[i], dup = 0;
      for (; k < w.len[i] && int64_t(col[k]) / C == bc; ++k) {
        dup = k > cur[i] && col[k] == col[k - 1] ? dup + 1 : 0;
        copies = std::max(copies, dup + 1);
        entry(nb + dup, i, int64_t(col[k]) - bc * C, w.val[i][k]);
      }
      cur[i] = k;
    }
    for (int64_t o = 0; o < copies; ++o) block(nb + o, bc);
    nb += copies;
  }
}

// Blocks and entries of a shape on the sampled block rows of the statistics' row sample.
struct Sample {
  int64_t blocks = 0, entries = 0;
};
// r x c blocks (c in kSides) on the sample.
Sample sample_shape(const RowSample& smp, int64_t r, int64_t c);
// sample_shape for every width in kSides at once, in kSides' order (the census of candidates()).
std::array<Sample, std::size(kSides)> sample_widths(const RowSample& smp, int64_t r);

}  // namespace spmvjit::bsr_blocks
