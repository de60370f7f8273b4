// BSR (block sparse row) with r x c register blocks: block rows of R rows, each block covering C
// columns aligned to a multiple of C and storing all R*C values (zeros where the pattern has
// none). One index serves R*C values, and the kernels unroll a block completely. The shape comes
// from block rows of the statistics' row sample (device-resident input is planned alike): only
// shapes that stream clearly fewer bytes than CSR become candidates, so most matrices get none.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <limits>
#include <optional>
#include <type_traits>

#include "core/parallel.hpp"
#include "engine/formats/device_converter.hpp"
#include "engine/formats/format.hpp"
#include "engine/formats/format_a_util.hpp"
#include "engine/formats/gpu_cost.hpp"
#include "engine/formats/partition.hpp"
#include "engine/formats/slice_util.hpp"

namespace spmvjit {
#include "templates/contract/bsr.h"

namespace {

using slice_util::ceil_div;

// Block sides; the kernels are compiled for every pair but 1 x 1 (that is CSR with a block
// pointer per row).
constexpr int64_t kSides[] = {1, 2, 3, 4, 6, 8};
constexpr int kMaxSide = 8;
static_assert(kMaxSide == BSR_MAX_SIDE, "the device build walks as many rows per block row");
constexpr size_t kMaxCandidates = 3;
// A shape must stream at most this share of CSR's bytes to be a candidate: one that saves less
// cannot pay for its per-block work (stencil27's 1 x 2 blocks save 1%).
constexpr double kMaxBytesVsCsr = 0.95;
// A shape's sample: whole block rows spread over the statistics' row sample (MatrixStats::sample,
// also there for device-resident input), about kSampleEntries nonzeros, between kMinSampleRows
// and kMaxSampleRows block rows. Estimates stay O(sample): the census of all 35 shapes took
// 1.1 ms on dense:1000 (no shape pruned), 0.05-0.2 ms on poisson2d:1000, random:200000:1:40 and
// powerlaw:200000 (pruned after a few small shapes), 0.4 ms on blockfem:40:3; one estimate
// 0.02-0.09 ms.
constexpr int64_t kSampleEntries = 1 << 13;
constexpr int64_t kMinSampleRows = 4, kMaxSampleRows = 256;
constexpr int64_t kWindowAlign = 24;  // every block width in kSides divides it
// Cost-model overheads in byte-equivalents, beyond the bytes streamed: per block (loop control,
// index decode) and, on the CPU, per block row (loop setup, the R*C -> R sums, R stores).
constexpr double kPerBlock = 4.0, kPerBlockRow = 16.0, kPerRow = 8.0;

bool valid_side(int64_t n) { return std::find(std::begin(kSides), std::end(kSides), n) != std::end(kSides); }

int64_t next_pow2(double m) {
  int64_t l = 1;
  while (double(l) < m && l < (int64_t(1) << 30)) l <<= 1;
  return l;
}

// Calls f(std::integral_constant<int64_t, C>) for a block width C in kSides (others: 8, which
// build() then refuses): the walks below divide by C once per entry, and a constant divisor is a
// multiply.
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

struct Sample {
  int64_t blocks = 0, entries = 0;
};

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

class BsrFormat final : public Format {
 public:
  std::string name() const override { return "bsr"; }
  bool supports_value(ValueType) const override { return true; }  // real and complex
  std::span<const ArraySlot> contract_arrays() const override { return kBsrArrays; }
  bool supports(BackendKind) const override { return true; }
  // CPU: time per modeled byte relative to csr, measured with `spmvjit bench --formats csr,bsr,...`
  // (int32/double, 4 alternating timings each, best kept) on this 2-vCPU Zen 5 VM, 2026-11-23:
  // single thread, blockfem:40:B with B = 2 / 3 / 4 (2x2 / 3x3 / 4x4 blocks): 0.77 / 1.19 / 0.94,
  // again 0.80 / 1.09 / 0.82; median 0.88. Two threads gave 0.88-1.33 but were dominated by the
  // shared machine's scheduling (2x2 runs quantized at 4.0 ms). dense:1000 (8x8, in cache):
  // 0.29 and 0.47, left out. Power-of-two widths pay less per byte than 3 and 6.
  double efficiency(const MatrixStats&, const TargetInfo& t) const override { return t.gpu() ? 1.0 : 0.9; }

  std::vector<FormatParams> candidates(const CsrRef& a, const MatrixStats& s,
                                       const TargetInfo& t) const override {
    if (a.nnz == 0 || !s.sample) return {};
    // Fill only grows from a shape to its multiples (an r x c block holds whole r' x c' blocks
    // when r' | r and c' | c): a sampled shape's fill bounds its multiples' from below, so on
    // irregular matrices a few small shapes rule out all the others.
    double fill[kMaxSide + 1][kMaxSide + 1] = {};
    std::optional<std::array<Sample, std::size(kSides)>> by_width[kMaxSide + 1];
    std::vector<std::pair<double, FormatParams>> ranked;
    for (int64_t r : kSides)
      for (int64_t c : kSides) {
        if (r * c == 1) continue;
        double bound = 1.0;
        for (int64_t r2 : kSides)
          for (int64_t c2 : kSides)
            if (r2 <= r && c2 <= c && r % r2 == 0 && c % c2 == 0 && r2 * c2 < r * c)
              bound = std::max(bound, fill[r2][c2]);
        if (bytes_for_fill(a, r, c, bound) > kMaxBytesVsCsr * csr_bytes(a)) {
          fill[r][c] = bound;
          continue;
        }
        if (!by_width[r]) by_width[r] = sample_widths(*s.sample, r);
        const Sample sm =
            (*by_width[r])[size_t(std::find(std::begin(kSides), std::end(kSides), c) - std::begin(kSides))];
        if (sm.entries == 0) return {};  // the sample saw only empty rows: no basis to choose
        const double f = double(sm.blocks * r * c) / double(sm.entries);  // as estimate() sees it
        fill[r][c] = std::max(bound, f);
        if (bytes_for_fill(a, r, c, fill[r][c]) > kMaxBytesVsCsr * csr_bytes(a)) continue;
        FormatParams p{{"R", r}, {"C", c}, {"COL_EDGE", a.cols % c != 0}};
        if (t.gpu()) p["G"] = lanes_for(a, r, blocks_for_fill(a, r, c, f), t);
        ranked.push_back({cost(a, p, blocks_for_fill(a, r, c, f), t), p});
      }
    std::stable_sort(ranked.begin(), ranked.end(),
                     [](const auto& x, const auto& y) { return x.first < y.first; });
    std::vector<FormatParams> out;
    for (size_t i = 0; i < ranked.size() && i < kMaxCandidates; ++i) out.push_back(ranked[i].second);
    return out;
  }

  Estimate estimate(const CsrRef& a, const MatrixStats& s, const FormatParams& p,
                    const TargetInfo& t) const override {
    const int64_t r = p.at("R"), c = p.at("C");
    const Sample sm = s.sample ? sample_shape(*s.sample, r, c) : Sample{};
    const double f = sm.entries ? double(sm.blocks * r * c) / double(sm.entries) : 1.0;
    const int64_t blocks = blocks_for_fill(a, r, c, f);
    const std::string shape = std::to_string(r) + "x" + std::to_string(c);
    Estimate e;
    e.stored_entries = blocks * r * c;
    e.matrix_bytes = int64_t(bytes_for_fill(a, r, c, f));
    e.cost_bytes = cost(a, p, blocks, t);
    e.imbalance =
        t.gpu() ? gpu_row_starvation(ceil_div(a.rows, r) * p.at("G"), t) : row_split_imbalance(s, t);
    if (e.stored_entries > slice_util::kMaxPaddingFactor * a.nnz + r * c) {
      e.applicable = false;
      e.reason = shape + " blocks would store about " + std::to_string(e.stored_entries) + " values for " +
                 std::to_string(a.nnz) + " nonzeros";
    } else {
      char fill[32];
      std::snprintf(fill, sizeof fill, "%.2f", f);
      e.reason = "about " + std::to_string(blocks) + " " + shape + " blocks, fill " + fill + " (sampled)";
    }
    return e;
  }

  // G is not baked on a GPU: its 6 values would make 420 variants per type pair, and NVRTC takes
  // 0.3-0.5 s per kernel (measured on this 2-core machine): 3360 more compiles for sm_80 + sm_90
  // in warmup and in the every-spec NVRTC test (239 s today), past ctest's time limit. As an
  // argument it costs a shift per thread and a shuffle loop that is not unrolled, per block row.
  FormatParams kernel_constants(const FormatParams& p) const override {
    return {{"R", p.at("R")}, {"C", p.at("C")}, {"COL_EDGE", p.at("COL_EDGE")}};
  }

  std::vector<FormatParams> kernel_variants(const TargetInfo&, ValueType) const override {
    std::vector<FormatParams> out;
    for (int64_t r : kSides)
      for (int64_t c : kSides)
        for (int64_t edge : {0, 1})
          if (r * c > 1) out.push_back({{"R", r}, {"C", c}, {"COL_EDGE", edge}});
    return out;
  }

  void to_triplets(const FormatData& d, const CsrRef& shape, std::vector<Triplet>& out) const override {
    const int64_t r = d.params.at("R"), c = d.params.at("C"), block_rows = d.ints[BSR_N_BLOCK_ROWS];
    dispatch_types_complex(shape.index, shape.value, [&]<class I, class V>() {
      const I* bp = d.arrays[BSR_BLOCK_PTR].buf.template as<I>();
      const I* bc = d.arrays[BSR_BLOCK_COL].buf.template as<I>();
      const V* val = d.arrays[BSR_VALUES].buf.template as<V>();
      for (int64_t b = 0; b < block_rows; ++b)
        for (int64_t k = bp[b]; k < bp[b + 1]; ++k)
          for (int64_t i = 0; i < r; ++i)
            for (int64_t j = 0; j < c; ++j)
              if (const V v = val[k * r * c + i * c + j]; v != V(0))
                out.push_back(make_triplet(b * r + i, int64_t(bc[k]) * c + j, v));
    });
  }

  FormatData convert(const CsrRef& a, const FormatParams& p, const TargetInfo& t) const override {
    return dispatch_types_complex(a.index, a.value, [&]<class I, class V>() {
      return with_width(p.at("C"), [&](auto cw) { return build<decltype(cw)::value, I, V>(a, p, t); });
    });
  }

  bool converts_on_device() const override { return true; }
  // Every shape the candidates propose on a GPU (G is only the SpMV's lanes per block row).
  bool device_convertible(const FormatParams& p) const override {
    const int64_t g = p.count("G") ? p.at("G") : 0;
    return p.count("R") && p.count("C") && p.count("COL_EDGE") && valid_side(p.at("R")) &&
           valid_side(p.at("C")) && p.at("R") * p.at("C") > 1 && g >= 1 && (g & (g - 1)) == 0;
  }
  std::vector<std::string> device_build_modules() const override { return {"bsr_build"}; }
  // One thread per block row counts its blocks, the counts are scanned into block_ptr, and the
  // same threads write the blocks. Rows out of column order (rare) are sorted first, into an
  // order array allocated only when there are some.
  FormatData convert_device(DeviceConverter& dc, const FormatParams& p, const TargetInfo& t) const override {
    const CsrRef& a = dc.shape();
    if (!device_convertible(p) || !t.gpu())
      fail(SPMV_STATUS_UNSUPPORTED, "bsr: no device conversion for these parameters");
    check_params(a, p, t);
    const int64_t r = p.at("R"), c = p.at("C"), rc = r * c, block_rows = ceil_div(a.rows, r);
    const size_t is = size_of(a.index), vs = size_of(a.value);
    FormatData d;
    d.declare(name(), p, contract_arrays(), a.index, a.value);
    HostArray counts = dc.alloc(block_rows + 1, sizeof(int64_t)), order;
    // counts[block_rows] counts the block rows with a row out of order until the scan puts the
    // total there.
    int64_t* const total = static_cast<int64_t*>(counts.device.get()) + block_rows;
    SpmvArgs g = dc.args();
    g.a[BSR_BUILD_ROW_PTR] = a.row_ptr;
    g.a[BSR_BUILD_COL_IDX_IN] = a.col_idx;
    g.a[BSR_BUILD_VALUES_IN] = a.val;
    g.a[BSR_BUILD_COUNTS] = counts.device.get();
    g.n[BSR_BUILD_N_R] = r;
    g.n[BSR_BUILD_N_C] = c;
    g.n[BSR_BUILD_N_BLOCK_ROWS] = block_rows;
    if (block_rows) {
      dc.exclusive_scan(total, 0);  // an empty scan writes its total, 0
      dc.launch("bsr_build", "spmvjit_build_count", block_rows, g, 64);
      if (dc.read_i64(total)) {
        order = dc.alloc(a.nnz, is);
        g.a[BSR_BUILD_ORDER] = order.device.get();
        dc.launch("bsr_build", "spmvjit_build_order", a.rows, g, 64);
        dc.launch("bsr_build", "spmvjit_build_count", block_rows, g, 64);
      }
    }
    dc.exclusive_scan(counts.device.get(), block_rows);
    const int64_t blocks = dc.read_i64(total);
    slice_util::check_padding("bsr", blocks * rc, a.nnz, rc, double(is) / double(rc) + double(vs), false);
    d.put(BSR_BLOCK_PTR, dc.alloc(block_rows + 1, is));
    d.put(BSR_BLOCK_COL, dc.alloc(blocks, is));
    d.put(BSR_VALUES, dc.alloc(blocks * rc, vs));
    g.a[BSR_BUILD_BLOCK_PTR] = d.arrays[BSR_BLOCK_PTR].device.get();
    g.a[BSR_BUILD_BLOCK_COL] = d.arrays[BSR_BLOCK_COL].device.get();
    g.a[BSR_BUILD_VALUES] = d.arrays[BSR_VALUES].device.get();
    dc.launch("bsr_build", "spmvjit_build_write", std::max<int64_t>(block_rows, 1), g, 64);
    finish(d, a, p, block_rows, blocks, t);
    return d;
  }

 private:
  static double csr_bytes(const CsrRef& a) {
    const double is = double(size_of(a.index)), vs = double(size_of(a.value));
    return double(a.nnz) * (is + vs) + double(a.rows + 1) * is;
  }
  static int64_t blocks_for_fill(const CsrRef& a, int64_t r, int64_t c, double fill) {
    return int64_t(fill * double(a.nnz) / double(r * c) + 0.5);
  }
  // Bytes one SpMV streams: an index and R*C values per block, a block pointer per block row.
  static double bytes_for_fill(const CsrRef& a, int64_t r, int64_t c, double fill) {
    const double is = double(size_of(a.index)), vs = double(size_of(a.value));
    return fill * double(a.nnz) / double(r * c) * (is + double(r * c) * vs) +
           double(ceil_div(a.rows, r) + 1) * is;
  }
  // Lanes per block row on a GPU: the mean blocks per block row, rounded up to a power of two.
  static int64_t lanes_for(const CsrRef& a, int64_t r, int64_t blocks, const TargetInfo& t) {
    const double mean = double(blocks) / double(std::max<int64_t>(1, ceil_div(a.rows, r)));
    return std::clamp<int64_t>(next_pow2(mean), 1, std::max(1, t.warp_size));
  }
  static double cost(const CsrRef& a, const FormatParams& p, int64_t blocks, const TargetInfo& t) {
    const int64_t r = p.at("R"), c = p.at("C");
    const double block_rows = double(ceil_div(a.rows, r));
    const double bytes =
        bytes_for_fill(a, r, c, double(blocks * r * c) / double(std::max<int64_t>(a.nnz, 1)));
    if (!t.gpu())
      return bytes + kPerBlock * double(blocks) + kPerBlockRow * block_rows + kPerRow * double(a.rows);
    // log2(G) + 1 shuffle steps for each of R sums per block row; idle lanes of the last step
    // still take issue slots (about one entry each, as csr_vector counts them).
    const int64_t g = p.at("G");
    const double mean = double(blocks) / std::max(1.0, block_rows);
    const double idle = (std::ceil(mean / double(g)) * double(g) - mean) * block_rows;
    return bytes + kPerBlock * double(blocks) + 8.0 * double(ceil_log2(g) + 1) * double(r) * block_rows +
           double(size_of(a.index) + size_of(a.value)) * idle;
  }

  static void check_params(const CsrRef& a, const FormatParams& p, const TargetInfo& t) {
    const int64_t r = p.at("R"), c = p.at("C");
    if (!valid_side(r) || !valid_side(c) || r * c == 1 || (p.at("COL_EDGE") != 0 && p.at("COL_EDGE") != 1) ||
        (a.cols % c != 0 && p.at("COL_EDGE") == 0))
      fail(SPMV_STATUS_INVALID_VALUE,
           "bsr: R and C in {1, 2, 3, 4, 6, 8}, not both 1, and COL_EDGE = (cols % C != 0); got " +
               params_json(p).dump() + " for " + std::to_string(a.cols) + " columns");
    if (t.gpu()) {
      const int64_t g = p.count("G") ? p.at("G") : 0;
      if (g < 1 || (g & (g - 1)) || g > t.warp_size)
        fail(SPMV_STATUS_INVALID_VALUE,
             "bsr: G must be a power of two <= the warp size, got " + std::to_string(g));
    }
  }

  // Block rows whose rows all strictly ascend (nearly every matrix) take a marks pass: each
  // thread tags the block columns it meets with the block row's number, so a block column's
  // first entry counts it and, in the write pass, gives its place. The rest go through
  // walk_blocks, which sorts rows and keeps repeated columns apart. Both give the same layout;
  // the marks made blockfem:20:3's conversion (1.8M entries, 3 x 3) about twice as fast on the
  // 2-vCPU VM (docs/PERFORMANCE.md).
  template <int64_t C, class I, class V>
  FormatData build(const CsrRef& a, const FormatParams& p, const TargetInfo& t) const {
    check_params(a, p, t);
    const int64_t r = p.at("R"), rc = r * C;
    const int64_t block_rows = ceil_div(a.rows, r), block_cols = ceil_div(a.cols, C);
    const int threads = plan_threads(a.nnz + a.rows);
    const I* rp = a.rp<I>();
    const I* ci = a.ci<I>();
    const V* av = a.vals<V>();
    // Pass 1: blocks per block row; `merged` marks the block rows walk_blocks must take.
    std::vector<int64_t> count(size_t(block_rows) + 1, 0);
    std::vector<uint8_t> merged(size_t(block_rows), 0);
    parallel_for(block_rows, threads, [&](int64_t b0, int64_t b1, int) {
      std::vector<int64_t> tag(static_cast<size_t>(block_cols), -1);
      BlockRowView<I, V> w;
      for (int64_t b = b0; b < b1; ++b) {
        int64_t n = 0;
        bool ascending = true;
        for (int64_t row = b * r; row < std::min(a.rows, (b + 1) * r); ++row) {
          const int64_t k0 = int64_t(rp[row]), k1 = int64_t(rp[row + 1]);
          for (int64_t k = k0; k < k1; ++k) {
            ascending &= k == k0 || ci[k - 1] < ci[k];
            const int64_t bc = int64_t(ci[k]) / C;
            n += tag[size_t(bc)] != b;
            tag[size_t(bc)] = b;
          }
        }
        if (!ascending) {
          merged[size_t(b)] = 1;
          w.load(a, b * r, r);
          n = walk_blocks<C>(
              w, [](int64_t, int, int64_t, V) {}, [](int64_t, int64_t) {});
        }
        count[size_t(b) + 1] = n;
      }
    });
    for (int64_t b = 0; b < block_rows; ++b) count[size_t(b) + 1] += count[size_t(b)];
    const int64_t blocks = count[size_t(block_rows)];
    // Refused before the arrays exist. Every block holds an entry, so blocks <= nnz fits I.
    slice_util::check_padding("bsr", blocks * rc, a.nnz, rc,
                              double(sizeof(I)) / double(rc) + double(sizeof(V)), false);
    FormatData d;
    d.declare(name(), p, contract_arrays(), a.index, a.value);
    I* bp = d.make<I>(BSR_BLOCK_PTR, block_rows + 1);
    I* bc = d.make<I>(BSR_BLOCK_COL, blocks);
    V* bv = d.make<V>(BSR_VALUES, blocks * rc);
    // Pass 2: each block row zeroes its own values (first touch by the thread that fills them),
    // then scatters its entries.
    parallel_for(block_rows + 1, threads, [&](int64_t b0, int64_t b1, int) {
      std::vector<int64_t> tag(static_cast<size_t>(block_cols), -1), place(static_cast<size_t>(block_cols));
      std::vector<int64_t> cols;
      BlockRowView<I, V> w;
      for (int64_t b = b0; b < b1; ++b) {
        bp[b] = I(count[size_t(b)]);
        if (b == block_rows) break;
        I* col = bc + count[size_t(b)];
        V* val = bv + count[size_t(b)] * rc;
        std::fill(val, val + (count[size_t(b) + 1] - count[size_t(b)]) * rc, V(0));
        if (merged[size_t(b)]) {
          w.load(a, b * r, r);
          walk_blocks<C>(
              w, [&](int64_t k, int i, int64_t j, V v) { val[k * rc + i * C + j] = v; },
              [&](int64_t k, int64_t c) { col[k] = I(c); });
          continue;
        }
        const int64_t first = b * r, last = std::min(a.rows, first + r);
        // The block columns in order of appearance: each row's ascend, so the list is a few
        // ascending runs (usually one); short lists finish with an insertion sort.
        cols.clear();
        for (int64_t k = int64_t(rp[first]); k < int64_t(rp[last]); ++k) {
          const int64_t c = int64_t(ci[k]) / C;
          if (tag[size_t(c)] != b) tag[size_t(c)] = b, cols.push_back(c);
        }
        if (cols.size() > 64)
          std::sort(cols.begin(), cols.end());
        else
          for (size_t i = 1; i < cols.size(); ++i)
            for (size_t j = i; j > 0 && cols[j - 1] > cols[j]; --j) std::swap(cols[j - 1], cols[j]);
        for (size_t j = 0; j < cols.size(); ++j)
          col[j] = I(cols[j]), place[size_t(cols[j])] = int64_t(j) * rc;
        for (int64_t row = first; row < last; ++row) {
          V* out = val + (row - first) * C;
          for (int64_t k = int64_t(rp[row]); k < int64_t(rp[row + 1]); ++k) {
            const int64_t c = int64_t(ci[k]), q = c / C;
            out[place[size_t(q)] + (c - q * C)] = av[k];
          }
        }
      }
    });
    finish(d, a, p, block_rows, blocks, t);
    if (t.backend == BackendKind::cpu)
      set_cpu_parts(d, BSR_PARTS,
                    split_prefix(block_rows, t.threads, [&](int64_t u) { return count[size_t(u)] + u; }));
    return d;
  }
  // Sizes, bytes and facts; the GPU launch (G threads per block row).
  static void finish(FormatData& d, const CsrRef& a, const FormatParams& p, int64_t block_rows,
                     int64_t blocks, const TargetInfo& t) {
    const int64_t rc = p.at("R") * p.at("C");
    d.stored_entries = blocks * rc;
    d.matrix_bytes = sum_matrix_bytes(d);
    d.ints[BSR_N_BLOCK_ROWS] = block_rows;
    d.ints[BSR_N_GROUP_LOG2] = t.gpu() ? ceil_log2(p.at("G")) : 0;
    const int64_t is = int64_t(size_of(a.index));
    const int64_t csr_index = is * (a.rows + 1 + a.nnz), own_index = is * (block_rows + 1 + blocks);
    d.facts = Json::object({{"block_rows", block_rows},
                            {"blocks", blocks},
                            {"fill_zeros", blocks * rc - a.nnz},
                            {"index_bytes_csr", csr_index},
                            {"index_bytes", own_index},
                            {"index_bytes_saved", csr_index - own_index}});
    if (t.gpu())
      d.steps.push_back({"spmvjit_part", gpu_grid(block_rows * p.at("G"), BSR_GPU_BLOCK), BSR_GPU_BLOCK, 0});
  }
};

}  // namespace

SPMVJIT_REGISTER_FORMAT(BsrFormat)

}  // namespace spmvjit
