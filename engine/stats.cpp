// Computes MatrixStats: one pass over row_ptr; the facts about entries from the row sample.
#include "engine/stats.hpp"

#include "core/parallel.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>

namespace spmvjit {

int ceil_log2(int64_t n) {
  int k = 0;
  while ((int64_t(1) << k) < n) ++k;
  return k;
}

namespace {

// Row ranges of the parallel pass start at multiples of this (the largest slice of the facts).
constexpr int64_t kChunkRows = int64_t(1) << (MatrixStats::kWidths - 1);

// Partial statistics of one row range; merged after the parallel pass.
struct Partial {
  int64_t row_min = INT64_MAX, row_max = 0, empty = 0;
  double sum_sq = 0;
  std::array<int64_t, 48> hist{};
  std::array<int64_t, MatrixStats::kShortLengths> len_count{};
  std::array<int64_t, MatrixStats::kWidths> widths{}, idle{}, rem{};
};

// Statistics of rows [r0, r1): r0 is a multiple of kChunkRows (so of every slice height), r1 too
// or the last row. A row costs one increment of a length count (rows under kShortLengths by
// length, longer ones by length mod kShortLengths, which is all the lane remainders need; the
// rare long row also updates its moments on its own) in one of four copies, so that a run of
// equal lengths never waits on one counter's last increment (that wait, and a remainder loop
// per slice height, made the pass 7-9 ns a row on a 2-vCPU VM). Row lengths go kChunkRows at a
// time through a local array for the slice widths: pairwise maxima, level k holding the widths
// of 2^k-row slices.
template <class I>
void scan(const CsrRef& a, int64_t r0, int64_t r1, Partial& p) {
  const I* rp = a.rp<I>();
  constexpr int K = MatrixStats::kWidths;
  constexpr int64_t S = MatrixStats::kShortLengths;
  static_assert((int64_t(1) << (K - 1)) <= S && (S & (S - 1)) == 0, "lane masks must fit the length count");
  int64_t count[4][2 * S] = {};
  int64_t long_min = INT64_MAX;
  double long_sq = 0;
  int64_t len[kChunkRows];
  for (int64_t c0 = r0; c0 < r1; c0 += kChunkRows) {
    const int64_t n = std::min(kChunkRows, r1 - c0);
    for (int64_t i = 0; i < n; ++i) len[i] = int64_t(rp[c0 + i + 1]) - int64_t(rp[c0 + i]);
    for (int64_t i = n; i < kChunkRows; ++i) len[i] = 0;  // past the last row: adds nothing below
    for (int64_t i = 0; i < n; ++i) {
      const int64_t l = len[i];
      ++count[i & 3][l < S ? l : S + (l & (S - 1))];
      if (l >= S) [[unlikely]] {
        long_min = std::min(long_min, l);
        p.row_max = std::max(p.row_max, l);
        long_sq += double(l) * double(l);
        ++p.hist[size_t(std::min<int>(int(p.hist.size()) - 1, 1 + (63 - __builtin_clzll(uint64_t(l)))))];
      }
    }
    int64_t w = kChunkRows;
    for (int k = 0;; ++k) {
      int64_t sum = 0;
      for (int64_t i = 0; i < w; ++i) sum += len[i];
      p.widths[size_t(k)] += sum;
      if (k == K - 1) break;
      w /= 2;
      for (int64_t i = 0; i < w; ++i) len[i] = std::max(len[2 * i], len[2 * i + 1]);
    }
  }
  int64_t short_sq = 0;  // exact: under 2^12 a row
  for (int64_t v = 0; v < S; ++v) {
    const int64_t rows = count[0][v] + count[1][v] + count[2][v] + count[3][v];
    const int64_t mod = rows + count[0][S + v] + count[1][S + v] + count[2][S + v] + count[3][S + v];
    p.len_count[size_t(v)] += rows;
    if (rows) {
      p.row_min = std::min(p.row_min, v);
      p.row_max = std::max(p.row_max, v);
      short_sq += rows * v * v;
      p.hist[size_t(v ? 1 + (63 - __builtin_clzll(uint64_t(v))) : 0)] += rows;
      if (v == 0) p.empty += rows;
    }
    for (int k = 0; k < K; ++k) {
      const int64_t mask = (int64_t(1) << k) - 1;
      p.rem[size_t(k)] += mod * (v & mask);
      p.idle[size_t(k)] += mod * ((-v) & mask);
    }
  }
  p.row_min = std::min(p.row_min, long_min);
  p.sum_sq += double(short_sq) + long_sq;
}

void merge(const CsrRef& a, std::vector<Partial>& parts, MatrixStats& s) {
  Partial& t = parts[0];
  for (size_t i = 1; i < parts.size(); ++i) {
    const Partial& p = parts[i];
    t.row_min = std::min(t.row_min, p.row_min);
    t.row_max = std::max(t.row_max, p.row_max);
    t.empty += p.empty;
    t.sum_sq += p.sum_sq;
    for (size_t k = 0; k < t.hist.size(); ++k) t.hist[k] += p.hist[k];
    for (size_t k = 0; k < t.len_count.size(); ++k) t.len_count[k] += p.len_count[k];
    for (size_t k = 0; k < t.widths.size(); ++k)
      t.widths[k] += p.widths[k], t.idle[k] += p.idle[k], t.rem[k] += p.rem[k];
  }
  s.slice_width_sum = t.widths;
  s.lane_idle = t.idle;
  s.lane_rem = t.rem;
  s.row_min = a.rows ? t.row_min : 0;
  s.row_max = t.row_max;
  s.empty_rows = t.empty;
  s.row_hist = t.hist;
  s.len_count = t.len_count;
  finish_row_moments(s, t.sum_sq);
}

}  // namespace

void sample_entry_facts(MatrixStats& s) {
  const RowSample& smp = *s.sample;
  const int64_t* rp = smp.row_ptr.data();
  const int64_t* ci = smp.col_idx.data();
  // The sampled rows holding the first kFactEntries entries (a sample of dense rows has more).
  const int64_t rows = smp.prefix_rows(MatrixStats::kFactEntries);
  int64_t runs = 0, nonempty = 0;
  double span_sum = 0;
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t b = rp[r], e = rp[r + 1];
    if (b == e) continue;
    ++nonempty;
    int64_t cmin = ci[b], cmax = ci[b];
    bool joined_left = false;  // entry k-1 holds column c-1
    for (int64_t k = b; k < e; ++k) {
      cmin = std::min(cmin, ci[k]);
      cmax = std::max(cmax, ci[k]);
      const bool joined_right = k + 1 < e && ci[k + 1] == ci[k] + 1;
      runs += joined_left || joined_right;
      joined_left = joined_right;
    }
    span_sum += double(cmax - cmin + 1);
  }
  const int64_t entries = rp[rows];
  // runs counts nonzeros in a run: the entry before or after it holds the adjacent column.
  s.dense_run_fraction = entries ? double(runs) / double(entries) : 0;
  s.avg_col_span = nonempty ? span_sum / double(nonempty) : 0;
  s.facts_sampled = smp.groups < smp.matrix_groups || rows < smp.rows;
}

int64_t MatrixStats::distinct_diagonals() const {
  int64_t n = diagonals_.n.load(std::memory_order_relaxed);
  if (n >= 0) return n;
  // Two threads may count at once: both get the same number.
  n = sample ? sample->distinct_offsets(kDiagonalCap, sample->prefix_rows(kFactEntries)) : 0;
  diagonals_.n.store(n, std::memory_order_relaxed);
  return n;
}

void finish_row_moments(MatrixStats& s, double sum_sq) {
  s.row_mean = s.rows ? double(s.nnz) / double(s.rows) : 0;
  s.row_std = s.rows ? std::sqrt(std::max(0.0, sum_sq / double(s.rows) - s.row_mean * s.row_mean)) : 0;
  s.row_cv = s.row_mean > 0 ? s.row_std / s.row_mean : 0;
}

MatrixStats compute_stats(const CsrRef& a) {
  const auto t0 = std::chrono::steady_clock::now();
  MatrixStats s;
  s.rows = a.rows;
  s.cols = a.cols;
  s.nnz = a.nnz;
  // Split rows by nonzeros so both halves of a skewed matrix take the same time.
  const int chunks = plan_threads(a.nnz + a.rows);
  std::vector<int64_t> bounds(size_t(chunks) + 1, a.rows);
  bounds[0] = 0;
  for (int c = 1; c < chunks; ++c) {
    const int64_t target = a.nnz * c / chunks;
    int64_t lo = bounds[size_t(c) - 1], hi = a.rows;
    while (lo < hi) {
      const int64_t mid = lo + (hi - lo) / 2;
      if (a.row_begin(mid) < target)
        lo = mid + 1;
      else
        hi = mid;
    }
    // Chunks start at multiples of kChunkRows: scan's slices never straddle two.
    bounds[size_t(c)] = std::max(bounds[size_t(c) - 1], lo / kChunkRows * kChunkRows);
  }
  std::vector<Partial> parts(static_cast<size_t>(chunks));
  parallel_for(chunks, chunks, [&](int64_t c0, int64_t c1, int) {
    for (int64_t c = c0; c < c1; ++c) {
      if (a.index == IndexType::i32)
        scan<int32_t>(a, bounds[size_t(c)], bounds[size_t(c) + 1], parts[size_t(c)]);
      else
        scan<int64_t>(a, bounds[size_t(c)], bounds[size_t(c) + 1], parts[size_t(c)]);
    }
  });
  merge(a, parts, s);
  s.sample = sample_rows(a);
  sample_entry_facts(s);
  s.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return s;
}

Json MatrixStats::to_json() const {
  Json out = Json::object({{"rows", rows},
                           {"cols", cols},
                           {"nnz", nnz},
                           {"row_min", row_min},
                           {"row_max", row_max},
                           {"row_mean", row_mean},
                           {"row_std", row_std},
                           {"row_cv", row_cv},
                           {"empty_rows", empty_rows}});
  out["distinct_diagonals"] = distinct_diagonals();
  out["dense_run_fraction"] = dense_run_fraction;
  out["avg_col_span"] = avg_col_span;
  out["entry_facts"] = facts_sampled ? "row sample" : "all rows";
  out["symmetric"] = symmetric;
  out["hermitian"] = hermitian;
  out["seconds"] = seconds;
  size_t last = 0;
  for (size_t k = 0; k < row_hist.size(); ++k)
    if (row_hist[k]) last = k;
  Json& hist = out["row_hist_log2"] = Json::array();
  for (size_t k = 0; k <= last; ++k) hist.push_back(row_hist[k]);
  return out;
}

std::string MatrixStats::to_text() const {
  const char* from = facts_sampled ? " (row sample)" : "";
  char buf[1024];
  std::snprintf(buf, sizeof buf,
                "rows               %lld\ncols               %lld\nnnz                %lld\n"
                "row length         min %lld  max %lld  mean %.3f  std %.3f  cv %.3f\n"
                "empty rows         %lld\ndistinct diagonals %s%lld%s\n"
                "dense-run fraction %.3f%s\navg column span    %.1f%s\n"
                "row-length histogram (log2 buckets):\n",
                (long long)rows, (long long)cols, (long long)nnz, (long long)row_min, (long long)row_max,
                row_mean, row_std, row_cv, (long long)empty_rows,
                distinct_diagonals() > kDiagonalCap ? "> " : "",
                (long long)std::min(distinct_diagonals(), kDiagonalCap), from, dense_run_fraction, from,
                avg_col_span, from);
  std::string out = buf;
  for (size_t k = 0; k < row_hist.size(); ++k) {
    if (!row_hist[k]) continue;
    char line[128];
    if (k == 0)
      std::snprintf(line, sizeof line, "  %-18s %lld\n", "0", (long long)row_hist[k]);
    else {
      char range[64];
      std::snprintf(range, sizeof range, "[%lld, %lld)", 1LL << (k - 1), 1LL << k);
      std::snprintf(line, sizeof line, "  %-18s %lld\n", range, (long long)row_hist[k]);
    }
    out += line;
  }
  return out;
}

}  // namespace spmvjit
