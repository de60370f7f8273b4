// BSR's census: the fill of r x c blocks measured on whole block rows of the statistics' row
// sample (engine/formats/bsr_blocks.hpp declares it; engine/formats/bsr.cpp ranks shapes by it).
#include <cmath>

#include "core/types.hpp"
#include "engine/formats/bsr_blocks.hpp"
#include "engine/formats/slice_util.hpp"

namespace spmvjit::bsr_blocks {
namespace {

using slice_util::ceil_div;

// A shape's sample: whole block rows spread over the statistics' row sample (MatrixStats::sample,
// also there for device-resident input), about kSampleEntries nonzeros, between kMinSampleRows
// and kMaxSampleRows block rows. Estimates stay O(sample): the census of all 35 shapes, when it
// walked each shape, took 1.1 ms on dense:1000 (no shape pruned), 0.05-0.2 ms on poisson2d:1000,
// random:200000:1:40 and powerlaw:200000 (pruned after a few small shapes), 0.4 ms on blockfem:40:3; one
// estimate 0.02-0.09 ms.
constexpr int64_t kSampleEntries = 1 << 13;
constexpr int64_t kMinSampleRows = 4, kMaxSampleRows = 256;
constexpr int64_t kWindowAlign = 24;  // every block width in kSides divides it

// A fixed pseudo-random number in [0, 1) for i (splitmix64: deterministic).
double unit_hash(uint64_t i) {
  uint64_t z = (i + 1) * 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return double((z ^ (z >> 31)) >> 11) * 0x1.0p-53;
}

// Calls f(b) for `n` block rows out of [0, block_rows), one from each of n equal strata at a fixed
// pseudo-random place inside it. Evenly spaced samples alias with grids: blockfem:30:3's 36
// samples 750 block rows apart were all at x = 0 (750 = 25 * 30), where 3 x 6 blocks have no
// fill, and the estimate said fill 1.00 for a true 1.32.
template <class F>
void for_stratified_sample(int64_t block_rows, int64_t n, F&& f) {
  n = std::min(n, block_rows);
  for (int64_t i = 0; i < n; ++i)
    f(std::min(block_rows - 1,
               int64_t((double(i) + unit_hash(uint64_t(i))) * double(block_rows) / double(n))));
}

// Calls f(w) for the block rows of r rows of the statistics' row sample (whole groups of
// RowSample::kGroupRows rows, so whole block rows of every height: a matrix in device memory has
// the same sample) that the shape estimates read, about kSampleEntries entries of them spread over
// it. A sampled block row's columns may be negative (the sample shifts them with their rows): they
// are shifted up again by a multiple of the group height, which every block width divides, so its
// blocks are the matrix's. Block rows with more than their share of the entries (long rows: dense
// blocks, dense rows) keep one window of their columns, aligned to every block width, at a
// pseudo-random place: dense:2000's census walked four whole block rows per shape, 4.6 ms.
template <class I, class V, class F>
void for_sampled_block_rows(const RowSample& smp, int64_t r, F&& f) {
  const CsrRef a = smp.ref();
  const int64_t block_rows = ceil_div(a.rows, r);
  const double per_block_row = double(r) * double(a.nnz) / double(std::max<int64_t>(a.rows, 1));
  const int64_t want = std::clamp<int64_t>(int64_t(double(kSampleEntries) / std::max(1.0, per_block_row)),
                                           kMinSampleRows, kMaxSampleRows);
  const int64_t share = std::max<int64_t>(kWindowAlign, kSampleEntries / want);
  BlockRowView<I, V> w;
  for_stratified_sample(block_rows, want, [&](int64_t b) {
    w.load(a, b * r, r, smp.rows_ascending);
    if (const int64_t e = w.entries(); e > 2 * share) {
      int64_t lo = std::numeric_limits<int64_t>::max(), hi = std::numeric_limits<int64_t>::min();
      for (int i = 0; i < w.n; ++i)
        if (w.len[i])
          lo = std::min(lo, int64_t(w.col[i][0])), hi = std::max(hi, int64_t(w.col[i][w.len[i] - 1]) + 1);
      // Columns spanned in proportion to the entries wanted, rounded up to whole alignments.
      const double span = double(hi - lo);
      const int64_t width =
          ceil_div(int64_t(span * double(share) / double(e)) + 1, kWindowAlign) * kWindowAlign;
      const int64_t first =
          lo + int64_t(unit_hash(uint64_t(b) ^ 0x5bd1e995u) * std::max(0.0, span - double(width)));
      const int64_t start = first - ((first % kWindowAlign) + kWindowAlign) % kWindowAlign;
      w.keep_columns(start, start + width);
    }
    w.shift_nonnegative(RowSample::kGroupRows);
    f(w);
  });
}

}  // namespace

// Blocks and entries of r x c blocks in the sampled block rows (for_sampled_block_rows).
Sample sample_shape(const RowSample& smp, int64_t r, int64_t c) {
  return dispatch_types_complex(IndexType::i64, smp.value, [&]<class I, class V>() {
    Sample s;
    for_sampled_block_rows<I, V>(smp, r, [&](const BlockRowView<I, V>& w) {
      s.entries += w.entries();
      s.blocks += with_width(c, [&](auto cw) {
        return walk_blocks<decltype(cw)::value>(
            w, [](int64_t, int, int64_t, V) {}, [](int64_t, int64_t) {});
      });
    });
    return s;
  });
}

// sample_shape for every block width in kSides at once (by kSides' order), for the census of
// candidates(): one merge of each block row's columns serves every width, since without a
// repeated column in a row a block row's blocks are its distinct block columns. A block row with
// a repeated column (whose copies open repeated blocks) takes walk_blocks per width. The census
// walked each of 35 shapes separately: 1.2 ms of blockfem:40:3's device plan on an H200.
std::array<Sample, std::size(kSides)> sample_widths(const RowSample& smp, int64_t r) {
  return dispatch_types_complex(IndexType::i64, smp.value, [&]<class I, class V>() {
    std::array<Sample, std::size(kSides)> s{};
    for_sampled_block_rows<I, V>(smp, r, [&](const BlockRowView<I, V>& w) {
      const int64_t e = w.entries();
      for (Sample& x : s) x.entries += e;
      bool repeats = false;
      for (int i = 0; i < w.n && !repeats; ++i)
        for (int64_t k = 1; k < w.len[i] && !repeats; ++k) repeats = w.col[i][k] == w.col[i][k - 1];
      if (repeats) {
        for (size_t j = 0; j < std::size(kSides); ++j)
          s[j].blocks += with_width(kSides[j], [&](auto cw) {
            return walk_blocks<decltype(cw)::value>(
                w, [](int64_t, int, int64_t, V) {}, [](int64_t, int64_t) {});
          });
        return;
      }
      static_assert(std::size(kSides) == 6 && kSides[0] == 1 && kSides[1] == 2 && kSides[2] == 3 &&
                        kSides[3] == 4 && kSides[4] == 6 && kSides[5] == 8,
                    "the merge below counts these widths");
      int64_t cur[kMaxSide] = {}, last[6], count[6] = {};
      std::fill(std::begin(last), std::end(last), int64_t(-1));
      for (;;) {
        int64_t col = std::numeric_limits<int64_t>::max();
        for (int i = 0; i < w.n; ++i)
          if (cur[i] < w.len[i]) col = std::min(col, int64_t(w.col[i][cur[i]]));
        if (col == std::numeric_limits<int64_t>::max()) break;
        for (int i = 0; i < w.n; ++i) cur[i] += cur[i] < w.len[i] && int64_t(w.col[i][cur[i]]) == col;
        const int64_t bc[6] = {col, col >> 1, col / 3, col >> 2, col / 6, col >> 3};  // col >= 0
        for (int j = 0; j < 6; ++j) count[j] += bc[j] != last[j], last[j] = bc[j];
      }
      for (int j = 0; j < 6; ++j) s[size_t(j)].blocks += count[j];
    });
    return s;
  });
}
static_assert(RowSample::kGroupRows % 24 == 0, "sample groups hold whole blocks of every side");

}  // namespace spmvjit::bsr_blocks
