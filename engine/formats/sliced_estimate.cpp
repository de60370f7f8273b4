// Stored slots of SELL-C-sigma from MatrixStats and its row sample (see sliced_estimate.hpp).
#include "engine/formats/sliced_estimate.hpp"

#include <algorithm>
#include <cmath>
#include <mutex>
#include <span>
#include <vector>

#include "engine/sample.hpp"

namespace spmvjit::slice_util {
namespace {

constexpr int kBins = int(std::tuple_size_v<decltype(MatrixStats::row_hist)>);
constexpr int64_t kShort = MatrixStats::kShortLengths;
// A bin's shape is the sample's when it saw this many of the bin's rows, else uniform.
constexpr size_t kMinSampledInBin = 16;
// Thresholds evaluated per histogram bin at most (the rest stand in strata around them).
constexpr int64_t kStrata = 128;

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }
int bin_of(int64_t len) { return std::min(kBins - 1, 1 + (63 - __builtin_clzll(uint64_t(len)))); }

// N(l): rows of length >= l. Exact below kShort (len_count); above, each log2 bin's count is
// exact at its ends and spread inside it as the sample's rows in the bin are, or, in bins the
// sample saw too little of, as N(lo) - hist * (1 - (1 - u)^gamma) at the fraction u of the bin:
// one gamma for all of them, fitted so that the tail's total length is the matrix's (exact from
// nnz and len_count). Spread tails (power laws) get gamma > 1, a few equal long rows gamma -> 0.
// N(l) >= 1 up to row_max: the longest row is there.
//
// The sampled lengths of at least kShort, sorted: one sort per sample (RowSample::memo), shared
// by every sorted candidate's estimate, and each shaped bin's sum computed once per estimate, not
// once per step of the gamma fit. The five sorted estimates of a GPU plan (sell's and sellp's)
// took 41 -> 10 us on blockfem:40:3, 109 -> 29 on short:8000000, 169 -> 136 on circuit:4000000
// (2-vCPU VM; the binomial sums are the rest).
struct SortedSampleLengths {
  std::once_flag once;
  std::vector<int64_t> lengths;
};
const std::vector<int64_t>& sorted_sample_lengths(const RowSample& smp) {
  SortedSampleLengths& m = smp.memo<SortedSampleLengths>();
  std::call_once(m.once, [&] {
    for (int64_t r = 0; r < smp.rows; ++r)
      if (const int64_t len = smp.row_ptr[size_t(r + 1)] - smp.row_ptr[size_t(r)]; len >= kShort)
        m.lengths.push_back(len);
    std::sort(m.lengths.begin(), m.lengths.end());
  });
  return m.lengths;
}

class LengthTail {
 public:
  explicit LengthTail(const MatrixStats& s) : row_max_(s.row_max) {
    ge_short_[0] = double(s.rows);
    double short_nnz = 0;
    for (int64_t l = 0; l < kShort; ++l) {
      ge_short_[size_t(l + 1)] = ge_short_[size_t(l)] - double(s.len_count[size_t(l)]);
      short_nnz += double(l) * double(s.len_count[size_t(l)]);
    }
    for (int k = kBins - 1; k >= 0; --k) {
      hist_[size_t(k)] = double(s.row_hist[size_t(k)]);
      above_[size_t(k)] = k + 1 < kBins ? above_[size_t(k + 1)] + hist_[size_t(k + 1)] : 0.0;
    }
    if (const RowSample* smp = s.sample.get()) {
      const std::vector<int64_t>& all = sorted_sample_lengths(*smp);
      for (auto it = all.begin(); it != all.end();) {  // one run of equal bins after another
        const int k = bin_of(*it);
        const auto end = k + 1 < kBins ? std::lower_bound(it, all.end(), int64_t(1) << k) : all.end();
        sampled_[size_t(k)] = std::span<const int64_t>(&*it, size_t(end - it));
        it = end;
      }
    }
    for (int k = 0; k < kBins; ++k) {  // shaped bins' sums, the same for every gamma
      if (!shaped(k)) continue;
      const int64_t lo = int64_t(1) << (k - 1), w = width(k);
      double sum = 0;
      for (int64_t len : sampled_[size_t(k)]) sum += double(std::min(len, lo + w - 1) - lo + 1);
      shaped_sum_[size_t(k)] = sum / double(sampled_[size_t(k)].size());
    }
    if (row_max_ > kShort) fit_gamma(double(s.nnz) - short_nnz - double(kShort) * ge_short_[kShort]);
  }

  double at(int64_t l) const {
    if (l <= kShort) return ge_short_[size_t(std::max<int64_t>(l, 0))];
    if (l > row_max_) return 0.0;
    const int k = bin_of(l);
    const int64_t lo = int64_t(1) << (k - 1), w = width(k);
    const auto& v = sampled_[size_t(k)];
    const double frac = shaped(k)
                            ? double(v.end() - std::lower_bound(v.begin(), v.end(), l)) / double(v.size())
                            : std::pow(1.0 - double(l - lo) / double(w), gamma_);
    return std::max(1.0, above_[size_t(k)] + hist_[size_t(k)] * frac);
  }

 private:
  bool shaped(int k) const { return sampled_[size_t(k)].size() >= kMinSampledInBin; }
  // Lengths of bin k that the tail reaches: [2^(k-1), 2^k), the last bins cut at row_max.
  int64_t width(int k) const {
    const int64_t lo = int64_t(1) << (k - 1);
    return (k + 1 < kBins ? std::min(2 * lo - 1, row_max_) : row_max_) - lo + 1;
  }
  // Chooses gamma so that sum over l > kShort of N(l), which is the sum over rows of
  // max(0, len - kShort), comes out as `target`.
  void fit_gamma(double target) {
    auto tail_sum = [&](double gamma) {
      double sum = 0;
      for (int k = bin_of(kShort); k < kBins && (int64_t(1) << (k - 1)) <= row_max_; ++k) {
        const int64_t lo = int64_t(1) << (k - 1), w = width(k);
        // The sum over l in [lo, lo + w) of the bin's fraction at l.
        const double in_bin = shaped(k) ? shaped_sum_[size_t(k)]
                                        : double(w) / (gamma + 1) + 0.5;  // sum of (j / w)^gamma, j = 1 .. w
        sum += above_[size_t(k)] * double(w) + hist_[size_t(k)] * in_bin;
        if (lo == kShort) sum -= above_[size_t(k)] + hist_[size_t(k)];  // l = kShort is not in the tail
      }
      return sum;
    };
    double lo = std::log(1e-3), hi = std::log(1e3);
    for (int i = 0; i < 40; ++i) {
      const double mid = 0.5 * (lo + hi);
      (tail_sum(std::exp(mid)) > target ? lo : hi) = mid;  // the sum falls as gamma grows
    }
    gamma_ = std::exp(0.5 * (lo + hi));
  }

  int64_t row_max_;
  double gamma_ = 1.0;
  double ge_short_[kShort + 1];
  double hist_[kBins], above_[kBins];
  std::span<const int64_t> sampled_[kBins];  // sorted, in the sample's memo
  double shaped_sum_[kBins] = {};
};

// E[ceil(X / c)] for X ~ Binomial(n, p): the slices of c rows that rows of length >= l fill in a
// sorted window of n rows, when each row reaches l with probability p.
double expected_slices(int64_t n, double p, int64_t c) {
  if (n <= 0 || p <= 0) return 0.0;
  if (p >= 1) return double(ceil_div(n, c));
  const double mean = double(n) * p;
  if (c == 1) return mean;
  // Few such rows: one slice when there is any (more than c of them is vanishingly rare).
  if (mean <= double(c) / 16) return -std::expm1(double(n) * std::log1p(-p));
  // Many, and spread over many residues mod c: the last slice is on average half empty.
  const double sd = std::sqrt(mean * (1 - p));
  if (sd >= double(c)) return mean / double(c) + double(c - 1) / double(2 * c);
  // Otherwise sum over the probability mass around the mode.
  const int64_t mode = std::min<int64_t>(n, int64_t(double(n + 1) * p));
  const double lp = std::log(p), lq = std::log1p(-p);
  const double log_mode = std::lgamma(double(n) + 1) - std::lgamma(double(mode) + 1) -
                          std::lgamma(double(n - mode) + 1) + double(mode) * lp + double(n - mode) * lq;
  const double pm = std::exp(log_mode), ratio = p / (1 - p);
  double sum = pm * double(ceil_div(mode, c));
  // ceil(v / c) of each term's v kept as v steps by one (a 64-bit division a term was a third of
  // the sorted estimates' time): k = ceil(v / c) while v stays in (k * c - c, k * c].
  double q = pm;
  int64_t v = mode + 1, k = ceil_div(v, c), edge = k * c;
  for (int64_t x = mode; x < n && q > 1e-14 * pm; ++x) {
    q *= double(n - x) / double(x + 1) * ratio;
    sum += q * double(k);  // v == x + 1
    if (++v > edge) ++k, edge += c;
  }
  q = pm;
  v = mode - 1, k = v > 0 ? ceil_div(v, c) : 0, edge = (k - 1) * c;
  for (int64_t x = mode; x > 0 && q > 1e-14 * pm; --x) {
    q *= double(x) / double(n - x + 1) / ratio;
    sum += q * double(k);  // v == x - 1
    if (--v <= edge) --k, edge -= c;
  }
  return sum;
}

// Sum of f(N(l)) over the thresholds l = 1, t+1, 2t+1, ... <= row_max: each one below kShort,
// and per log2 bin above it at most kStrata of them, each standing for its stratum.
template <class F>
double over_thresholds(const LengthTail& tail, int64_t row_max, int64_t t, F&& f) {
  double total = 0;
  // N(l) is flat over stretches (past row_max's few rows, across bins shaped by sampled lengths):
  // f, a sum of binomial expectations, is evaluated once per stretch.
  double last_n = -1, last_f = 0;
  auto f_of = [&](double n) {
    if (n != last_n) last_n = n, last_f = f(n);
    return last_f;
  };
  auto segment = [&](int64_t a, int64_t b) {  // thresholds in [a, b]
    b = std::min(b, row_max);
    const int64_t m0 = ceil_div(a - 1, t), m1 = (b - 1) / t;  // l = m*t + 1 for m in [m0, m1]
    const int64_t count = m1 - m0 + 1;
    if (count <= 0) return;
    const int64_t strata = std::min(count, kStrata);
    for (int64_t i = 0; i < strata; ++i) {
      const int64_t s0 = m0 + count * i / strata, s1 = m0 + count * (i + 1) / strata;  // [s0, s1)
      total += double(s1 - s0) * f_of(tail.at(((s0 + s1 - 1) / 2) * t + 1));
    }
  };
  segment(1, kShort);
  for (int k = bin_of(kShort + 1); k < kBins && (int64_t(1) << (k - 1)) <= row_max; ++k)
    segment(std::max(kShort + 1, int64_t(1) << (k - 1)), k + 1 < kBins ? (int64_t(1) << k) - 1 : row_max);
  return total;
}

// sigma <= 1: slice maxima from the statistics, rounding to t from the sample's slices.
double unsorted_entries(const MatrixStats& s, int64_t c, int64_t t) {
  const bool pow2 = c <= 64 && (c & (c - 1)) == 0;
  double base =
      pow2 ? double(c) * double(s.slice_width_sum[size_t(63 - __builtin_clzll(uint64_t(c)))]) : double(s.nnz);
  double rounding = 0.5 * double(t - 1) * double(c) * double(ceil_div(s.rows, c));
  const RowSample* smp = s.sample.get();
  if ((!pow2 || t > 1) && smp && smp->rows > 0) {
    double sampled_base = 0, sampled_rounding = 0;
    for (int64_t r0 = 0; r0 < smp->rows; r0 += c) {
      int64_t w = 0;
      for (int64_t r = r0; r < std::min(smp->rows, r0 + c); ++r)
        w = std::max(w, smp->row_ptr[size_t(r + 1)] - smp->row_ptr[size_t(r)]);
      sampled_base += double(w * c);
      sampled_rounding += double((ceil_div(w, t) * t - w) * c);
    }
    const double scale = smp->scale(s.rows);
    if (!pow2) base = sampled_base * scale;
    rounding = sampled_rounding * scale;
  }
  return base + rounding;
}

}  // namespace

int64_t sliced_entries(const MatrixStats& s, int64_t c, int64_t sigma, int64_t t) {
  if (s.rows <= 0) return 0;
  const double unsorted = unsorted_entries(s, c, t);
  if (sigma <= 1) return int64_t(unsorted + 0.5);
  const LengthTail tail(s);
  const double rows = double(s.rows);
  double slices;
  if (sigma >= s.rows) {
    // One window: its rows of each length are the matrix's.
    slices = over_thresholds(tail, s.row_max, t, [&](double n) { return std::ceil(n / double(c) - 1e-9); });
  } else {
    const int64_t full = s.rows / sigma, rest = s.rows % sigma;
    slices = over_thresholds(tail, s.row_max, t, [&](double n) {
      const double p = n / rows;
      return double(full) * expected_slices(sigma, p, c) + expected_slices(rest, p, c);
    });
  }
  const double stored = std::min(double(c * t) * slices, unsorted);
  return std::max<int64_t>(int64_t(stored + 0.5), s.nnz);
}

}  // namespace spmvjit::slice_util
