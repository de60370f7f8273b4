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
// it. A sampled block row's columns may be negative (the sample shifts them with their rows): f
// shifts them up again by a multiple of the group height, which every block width divides, so its
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
    f(w);
  });
}

// The least multiple of the group height that makes columns from `lo` (<= 0) non-negative, as
// BlockRowView::shift_nonnegative shifts: a multiple of every block width, so blocks stay blocks.
int64_t shift_for(int64_t lo) {
  constexpr int64_t g = RowSample::kGroupRows;
  return lo < 0 ? (-lo + g - 1) / g * g : 0;
}

// Adds to count[j] the distinct block columns of width kSides[j] in one block row of at most R
// rows, read with `shift` added (non-negative after it), by one merge of its rows whose heads stay
// in registers. Returns false, counting nothing, when a row repeats a column: its copies open
// repeated blocks, which walk_blocks counts. The merge with the height read at run time, and the
// rows shifted into copies, took 4.6 ns per entry (stencil27:60 on the 2-vCPU VM).
template <int R, class I, class V>
bool count_widths(const BlockRowView<I, V>& w, int64_t shift, int64_t (&count)[std::size(kSides)]) {
  static_assert(std::size(kSides) == 6 && kSides[0] == 1 && kSides[1] == 2 && kSides[2] == 3 &&
                    kSides[3] == 4 && kSides[4] == 6 && kSides[5] == 8,
                "the merge below counts these widths");
  constexpr int64_t kEnd = std::numeric_limits<int64_t>::max();
  const I* p[R];
  const I* end[R];
  int64_t head[R];
  for (int i = 0; i < R; ++i) {
    const int64_t len = i < w.n ? w.len[i] : 0;
    p[i] = len ? w.col[i] : nullptr;
    end[i] = len ? w.col[i] + len : nullptr;
    head[i] = len ? int64_t(*p[i]) + shift : kEnd;
  }
  int64_t last[6] = {-1, -1, -1, -1, -1, -1}, c[6] = {};
  for (;;) {
    int64_t col = head[0];
    for (int i = 1; i < R; ++i) col = std::min(col, head[i]);
    if (col == kEnd) break;
    for (int i = 0; i < R; ++i)
      if (head[i] == col) {
        head[i] = ++p[i] < end[i] ? int64_t(*p[i]) + shift : kEnd;
        if (head[i] == col) return false;
      }
    const int64_t bc[6] = {col, col >> 1, col / 3, col >> 2, col / 6, col >> 3};  // col >= 0
    for (int j = 0; j < 6; ++j) c[j] += bc[j] != last[j], last[j] = bc[j];
  }
  for (int j = 0; j < 6; ++j) count[j] += c[j];
  return true;
}

}  // namespace

// Blocks and entries of r x c blocks in the sampled block rows (for_sampled_block_rows).
Sample sample_shape(const RowSample& smp, int64_t r, int64_t c) {
  return dispatch_types_complex(IndexType::i64, smp.value, [&]<class I, class V>() {
    Sample s;
    for_sampled_block_rows<I, V>(smp, r, [&](BlockRowView<I, V>& w) {
      w.shift_nonnegative(RowSample::kGroupRows);
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
    for_sampled_block_rows<I, V>(smp, r, [&](BlockRowView<I, V>& w) {
      const int64_t e = w.entries();
      for (Sample& x : s) x.entries += e;
      int64_t lo = 0;
      for (int i = 0; i < w.n; ++i)
        if (w.len[i]) lo = std::min(lo, int64_t(w.col[i][0]));
      const int64_t shift = shift_for(lo);
      int64_t count[std::size(kSides)] = {};
      if (with_width(r, [&](auto h) { return count_widths<int(decltype(h)::value)>(w, shift, count); })) {
        for (size_t j = 0; j < std::size(kSides); ++j) s[j].blocks += count[j];
        return;
      }
      w.shift_nonnegative(RowSample::kGroupRows);
      for (size_t j = 0; j < std::size(kSides); ++j)
        s[j].blocks += with_width(kSides[j], [&](auto cw) {
          return walk_blocks<decltype(cw)::value>(
              w, [](int64_t, int, int64_t, V) {}, [](int64_t, int64_t) {});
        });
    });
    return s;
  });
}
static_assert(RowSample::kGroupRows % 24 == 0, "sample groups hold whole blocks of every side");

}  // namespace spmvjit::bsr_blocks
