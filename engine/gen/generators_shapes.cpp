// Generators of irregular row shapes found in applications: variable bands, wide LP-like
// rectangles and circuit matrices (short rows around the diagonal, a dense column, a few huge rows).
#include <algorithm>
#include <vector>

#include "engine/gen/gen_common.hpp"

namespace spmvjit::gen {
namespace {

// A width that drifts smoothly along the rows: random knots every `spacing` rows, linear in
// between. Integer arithmetic only (no sin or pow), so every platform gets the same widths.
class Drift {
 public:
  Drift(uint64_t seed, Stream stream, int64_t lo, int64_t hi, int64_t spacing)
      : seed_(seed), stream_(stream), lo_(lo), hi_(hi), spacing_(spacing) {}
  int64_t at(int64_t row) const {
    const int64_t k = row / spacing_, t = row % spacing_;
    const int64_t w0 = knot(k), w1 = knot(k + 1);
    return w0 + (w1 - w0) * t / spacing_;
  }

 private:
  int64_t knot(int64_t k) const {
    Rng rng(seed_, stream_, uint64_t(k));
    return rng.between(lo_, hi_);
  }
  uint64_t seed_;
  Stream stream_;
  int64_t lo_, hi_, spacing_;
};

// Random values for a row whose columns are already written.
void random_values(uint64_t seed, int64_t r, double* v, int64_t k) {
  Rng rng(seed, kFillStream, uint64_t(r));
  for (int64_t i = 0; i < k; ++i) v[i] = rng.value();
}

// The sorted, distinct columns of circuit row r. `big` is the sorted list of long rows.
void circuit_row(int64_t r, int64_t n, int64_t big_len, const std::vector<int64_t>& big, uint64_t seed,
                 std::vector<int64_t>& out) {
  Rng rng(seed, kLengthStream, uint64_t(r));
  out.clear();
  out.push_back(0);  // the dense column: every row touches it, like a ground or supply node
  out.push_back(r);  // the diagonal
  if (std::binary_search(big.begin(), big.end(), r)) {
    const int64_t k = std::min(big_len, n);
    out.resize(2 + size_t(k));
    sample_distinct(rng, n, k, out.data() + 2);
  } else {
    // 0-5 couplings to nearby nodes, as a netlist numbered along the circuit has.
    for (int64_t i = rng.between(0, 5); i > 0; --i) {
      const int64_t c = r + rng.between(-64, 64);
      if (c >= 0 && c < n) out.push_back(c);
    }
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
}

}  // namespace

// Row i holds the contiguous columns [i - l(i), i + r(i)] (clipped), l and r drifting
// independently between MINW and MAXW: a band whose width changes along the matrix, as in a
// profile (skyline) solver's matrices.
HostCsr<int64_t, double> gen_varband(const Params& p, uint64_t seed) {
  const int64_t n = p.integer(0, 0, 1, kMaxNnz);
  const int64_t min_w = p.integer(1, 2, 0, kMaxNnz);
  const int64_t max_w = p.integer(2, std::max<int64_t>(64, min_w), min_w, kMaxNnz);
  checked_mul(n, 2 * std::min(max_w, n) + 1, "N*(2*MAXW+1)");
  // About 64 knots over the matrix, at least 8 and at most 4096 rows apart.
  const int64_t spacing = std::clamp<int64_t>(n / 64, 8, 4096);
  const Drift left(seed, kBandLeftStream, min_w, max_w, spacing);
  const Drift right(seed, kBandRightStream, min_w, max_w, spacing);
  auto range = [&](int64_t i, int64_t& lo, int64_t& hi) {
    lo = std::max<int64_t>(i - left.at(i), 0);
    hi = std::min<int64_t>(i + right.at(i), n - 1);
  };
  auto len = [&](int64_t i) {
    int64_t lo, hi;
    range(i, lo, hi);
    return hi - lo + 1;
  };
  auto fill = [&](int64_t i, int64_t* c, double* v, int64_t k) {
    int64_t lo, hi;
    range(i, lo, hi);
    for (int64_t j = 0; j < k; ++j) c[j] = lo + j;
    random_values(seed, i, v, k);
  };
  return build(p, n, n, len, fill);
}

// ROWS x RATIO*ROWS with random distinct columns, as the constraint matrix of a linear program:
// far more columns than rows, row lengths spread over orders of magnitude. Lengths are
// log-uniform by octaves: an octave [MIN*2^j, MIN*2^(j+1)) picked uniformly, then a length
// uniform within it (integers only, so identical on every platform).
HostCsr<int64_t, double> gen_lpwide(const Params& p, uint64_t seed) {
  const int64_t rows = p.integer(0, 0, 1, kMaxNnz);
  const int64_t ratio = p.integer(1, 20, 1, kMaxNnz);
  const int64_t cols = checked_mul(rows, ratio, "RATIO*ROWS");
  const int64_t lo = p.integer(2, std::min<int64_t>(2, cols), 1, cols);
  const int64_t hi = p.integer(3, std::max(lo, std::min<int64_t>(200, cols)), lo, cols);
  checked_mul(rows, hi, "ROWS*MAX");
  int64_t octaves = 0;
  while ((lo << octaves) <= hi) ++octaves;
  auto len = [&](int64_t r) {
    Rng rng(seed, kLengthStream, uint64_t(r));
    const int64_t j = rng.below(octaves);
    return rng.between(lo << j, std::min((lo << (j + 1)) - 1, hi));
  };
  auto fill = [&](int64_t r, int64_t* c, double* v, int64_t k) {
    Rng rng(seed, kFillStream, uint64_t(r));
    sample_distinct(rng, cols, k, c);
    for (int64_t i = 0; i < k; ++i) v[i] = rng.value();
  };
  return build(p, rows, cols, len, fill);
}

// A circuit-simulation-like matrix: each row its diagonal, column 0 and 0-5 entries within +-64;
// BIG rows spread evenly over the matrix have about BIGLEN entries at random columns (supply
// nets, say). Rows are generated twice, once to count and once to write, into a per-thread buffer.
HostCsr<int64_t, double> gen_circuit(const Params& p, uint64_t seed) {
  const int64_t n = p.integer(0, 0, 1, kMaxNnz);
  const int64_t n_big = p.integer(1, std::min<int64_t>(4, n), 0, n);
  const int64_t big_len = p.integer(2, std::min<int64_t>(50000, n), 0, n);
  checked_mul(n, 8, "8*ROWS");
  checked_mul(n_big, big_len, "BIG*BIGLEN");
  std::vector<int64_t> big(static_cast<size_t>(n_big));
  // Row (j + 1/2) * ROWS / BIG: distinct, since BIG <= ROWS; 128 bits, as (2j+1)*ROWS may not fit 64.
  for (int64_t j = 0; j < n_big; ++j) big[size_t(j)] = int64_t(__int128(2 * j + 1) * n / (2 * n_big));
  auto len = [&](int64_t r) {
    thread_local std::vector<int64_t> row;
    circuit_row(r, n, big_len, big, seed, row);
    return int64_t(row.size());
  };
  auto fill = [&](int64_t r, int64_t* c, double* v, int64_t k) {
    thread_local std::vector<int64_t> row;
    circuit_row(r, n, big_len, big, seed, row);
    std::copy(row.begin(), row.end(), c);
    random_values(seed, r, v, k);
  };
  return build(p, n, n, len, fill);
}

}  // namespace spmvjit::gen
