// validate_csr messages and compute_stats on hand-made matrices with known statistics.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "engine/formats/format.hpp"
#include "engine/gen/generators.hpp"
#include "engine/stats.hpp"
#include "engine/validate.hpp"
#include "tests/test_support.hpp"

namespace {

using namespace spmvjit;

template <class I>
CsrRef ref_of(int64_t rows, int64_t cols, const std::vector<I>& rp, const std::vector<I>& ci,
              const std::vector<double>& val) {
  return CsrRef{rows,           cols,      int64_t(ci.size()), index_type_of<I>(),
                ValueType::f64, rp.data(), ci.data(),          val.data()};
}

// Runs validate_csr and returns the message, checking the status.
std::string validation_error(const CsrRef& a, int base, spmv_status_t expected) {
  try {
    validate_csr(a, base);
  } catch (const Error& e) {
    CHECK(e.status() == expected);
    return e.what();
  }
  FAIL("validate_csr accepted the matrix");
  return "";
}

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

// Entry facts of a row sample the slow way (its columns are shifted with its rows: offsets, runs
// and spans are the matrix's).
void slow_entry_facts(const RowSample& smp, MatrixStats& s) {
  std::set<int64_t> offsets;
  double span = 0;
  int64_t in_runs = 0, nonempty = 0;
  // The rows up to the first one ending at or past kFactEntries (at least one).
  int64_t rows = 0;
  while (rows < smp.rows && (rows == 0 || smp.row_ptr[size_t(rows)] < MatrixStats::kFactEntries)) ++rows;
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t b = smp.row_ptr[size_t(r)], e = smp.row_ptr[size_t(r) + 1];
    if (b == e) continue;
    ++nonempty;
    int64_t lo = INT64_MAX, hi = INT64_MIN;
    for (int64_t p = b; p < e; ++p) {
      const int64_t c = smp.col_idx[size_t(p)];
      offsets.insert(c - r);
      lo = std::min(lo, c);
      hi = std::max(hi, c);
      in_runs += (p > b && smp.col_idx[size_t(p) - 1] == c - 1) ||
                 (p + 1 < e && smp.col_idx[size_t(p) + 1] == c + 1);
    }
    span += double(hi - lo + 1);
  }
  const int64_t entries = smp.row_ptr[size_t(rows)];
  s.set_distinct_diagonals(std::min<int64_t>(int64_t(offsets.size()), MatrixStats::kDiagonalCap + 1));
  s.dense_run_fraction = entries ? double(in_runs) / double(entries) : 0;
  s.avg_col_span = nonempty ? span / double(nonempty) : 0;
}

// Statistics the slow, obvious way, to check the parallel pass on big matrices.
MatrixStats slow_stats(const HostCsr<int64_t, double>& a) {
  MatrixStats s;
  s.rows = a.rows;
  s.cols = a.cols;
  s.nnz = a.nnz();
  s.row_min = a.rows ? INT64_MAX : 0;
  std::vector<char> diags(size_t(a.rows + a.cols + 1), 0);
  double sq = 0, span = 0;
  int64_t in_runs = 0;
  for (int64_t r = 0; r < a.rows; ++r) {
    const int64_t b = a.row_ptr[size_t(r)], e = a.row_ptr[size_t(r) + 1], len = e - b;
    s.row_min = std::min(s.row_min, len);
    s.row_max = std::max(s.row_max, len);
    sq += double(len) * double(len);
    int k = 0;
    while (len && (int64_t(1) << k) <= len) ++k;
    ++s.row_hist[size_t(k)];
    if (len < MatrixStats::kShortLengths) ++s.len_count[size_t(len)];
    if (!len) ++s.empty_rows;
    int64_t lo = INT64_MAX, hi = INT64_MIN;
    for (int64_t p = b; p < e; ++p) {
      const int64_t c = a.col_idx[size_t(p)];
      diags[size_t(c - r + a.rows)] = 1;
      lo = std::min(lo, c);
      hi = std::max(hi, c);
      const bool left = p > b && a.col_idx[size_t(p) - 1] == c - 1;
      const bool right = p + 1 < e && a.col_idx[size_t(p) + 1] == c + 1;
      in_runs += left || right;
    }
    if (len) span += double(hi - lo + 1);
  }
  s.set_distinct_diagonals(std::count(diags.begin(), diags.end(), 1));
  // Row-shape facts: slices and lane groups of 2^k rows.
  auto len = [&](int64_t r) { return a.row_ptr[size_t(r) + 1] - a.row_ptr[size_t(r)]; };
  for (int k = 0; k < MatrixStats::kWidths; ++k) {
    const int64_t c = int64_t(1) << k;
    for (int64_t s0 = 0; s0 < a.rows; s0 += c) {
      int64_t w = 0;
      for (int64_t r = s0; r < std::min(a.rows, s0 + c); ++r) w = std::max(w, len(r));
      s.slice_width_sum[size_t(k)] += w;
    }
    for (int64_t r = 0; r < a.rows; ++r) {
      s.lane_rem[size_t(k)] += len(r) % c;
      s.lane_idle[size_t(k)] += (c - len(r) % c) % c;
    }
  }
  s.row_mean = a.rows ? double(s.nnz) / double(a.rows) : 0;
  s.row_std = a.rows ? std::sqrt(sq / double(a.rows) - s.row_mean * s.row_mean) : 0;
  s.dense_run_fraction = s.nnz ? double(in_runs) / double(s.nnz) : 0;
  s.avg_col_span = a.rows - s.empty_rows ? span / double(a.rows - s.empty_rows) : 0;
  return s;
}

void check_same(const MatrixStats& got, const MatrixStats& want) {
  CHECK(got.rows == want.rows);
  CHECK(got.cols == want.cols);
  CHECK(got.nnz == want.nnz);
  CHECK(got.row_min == want.row_min);
  CHECK(got.row_max == want.row_max);
  CHECK(got.row_mean == Approx(want.row_mean).epsilon(1e-12));
  CHECK(got.row_std == Approx(want.row_std).epsilon(1e-9).margin(1e-12));
  CHECK(got.empty_rows == want.empty_rows);
  CHECK(got.row_hist == want.row_hist);
  CHECK(got.len_count == want.len_count);
  // Entry facts come from the row sample: the whole matrix's when it holds every row, else the
  // sampled rows' (counted the slow way on them).
  REQUIRE(got.sample);
  MatrixStats facts = want;
  if (got.facts_sampled) slow_entry_facts(*got.sample, facts);
  CHECK(got.facts_sampled == (got.sample->rows < got.rows ||
                              got.sample->prefix_rows(MatrixStats::kFactEntries) < got.sample->rows));
  CHECK(got.distinct_diagonals() == facts.distinct_diagonals());
  CHECK(got.dense_run_fraction == Approx(facts.dense_run_fraction).epsilon(1e-12));
  CHECK(got.avg_col_span == Approx(facts.avg_col_span).epsilon(1e-12));
  CHECK(got.slice_width_sum == want.slice_width_sum);
  CHECK(got.lane_idle == want.lane_idle);
  CHECK(got.lane_rem == want.lane_rem);
}

}  // namespace

TEMPLATE_TEST_CASE("validate_csr names what is wrong and where", "[engine]", int32_t, int64_t) {
  using I = TestType;
  // [[1 . . 2] [. 3 . .] [4 . 5 .]]
  std::vector<I> rp{0, 2, 3, 5}, ci{0, 3, 1, 0, 2};
  std::vector<double> val{1, 2, 3, 4, 5};
  REQUIRE_NOTHROW(validate_csr(ref_of<I>(3, 4, rp, ci, val), 0));

  auto rp2 = rp;
  rp2[2] = 1;
  std::string m = validation_error(ref_of<I>(3, 4, rp2, ci, val), 0, SPMV_STATUS_INVALID_MATRIX);
  CHECK(contains(m, "row_ptr[2] = 1 < row_ptr[1] = 2"));

  auto ci2 = ci;
  ci2[4] = 4;
  m = validation_error(ref_of<I>(3, 4, rp, ci2, val), 0, SPMV_STATUS_INVALID_MATRIX);
  CHECK(contains(m, "column index 4 at position 4 (row 2) is outside [0, 4)"));

  rp2 = rp;
  rp2[0] = 1;
  m = validation_error(ref_of<I>(3, 4, rp2, ci, val), 0, SPMV_STATUS_INVALID_MATRIX);
  CHECK(contains(m, "row_ptr[0] is 1"));

  CsrRef short_nnz = ref_of<I>(3, 4, rp, ci, val);
  short_nnz.nnz = 6;
  m = validation_error(short_nnz, 0, SPMV_STATUS_INVALID_MATRIX);
  CHECK(contains(m, "nnz = 6"));

  // Base 1: rows and bounds are reported in the caller's base.
  std::vector<I> rp1{1, 3, 4, 6}, ci1{1, 4, 2, 1, 3};
  REQUIRE_NOTHROW(validate_csr(ref_of<I>(3, 4, rp1, ci1, val), 1));
  m = validation_error(ref_of<I>(3, 4, rp1, ci1, val), 0, SPMV_STATUS_INVALID_MATRIX);
  CHECK(contains(m, "row_ptr[0] is 1"));
  ci1[2] = 0;
  m = validation_error(ref_of<I>(3, 4, rp1, ci1, val), 1, SPMV_STATUS_INVALID_MATRIX);
  CHECK(contains(m, "column index 0 at position 2 (row 2) is outside [1, 5)"));

  m = validation_error(ref_of<I>(3, 4, rp, ci, val), 2, SPMV_STATUS_INVALID_VALUE);
  CHECK(contains(m, "index_base"));
  CsrRef neg = ref_of<I>(3, 4, rp, ci, val);
  neg.cols = -4;
  m = validation_error(neg, 0, SPMV_STATUS_INVALID_MATRIX);
  CHECK(contains(m, "cols -4"));
  CsrRef nul = ref_of<I>(3, 4, rp, ci, val);
  nul.col_idx = nullptr;
  m = validation_error(nul, 0, SPMV_STATUS_INVALID_VALUE);
  CHECK(contains(m, "null"));
  nul = ref_of<I>(3, 4, rp, ci, val);
  nul.row_ptr = nullptr;
  CHECK(contains(validation_error(nul, 0, SPMV_STATUS_INVALID_VALUE), "row_ptr"));
}

TEST_CASE("validate_csr sizes: int32 limits and addressable limits", "[engine]") {
  std::vector<int32_t> rp{0};
  std::vector<double> val;
  CsrRef a = ref_of<int32_t>(0, 0, rp, rp, val);
  a.rows = int64_t(INT32_MAX) + 1;
  CHECK(contains(validation_error(a, 0, SPMV_STATUS_SIZE_OVERFLOW), "int32"));
  a.rows = INT32_MAX;  // fits base 0 but not base 1 (row_ptr[rows] = nnz + 1)
  CHECK(contains(validation_error(a, 1, SPMV_STATUS_SIZE_OVERFLOW), "int64"));
  std::vector<int64_t> rp64{0};
  CsrRef b = ref_of<int64_t>(0, 0, rp64, rp64, val);
  b.rows = INT64_MAX;
  validation_error(b, 0, SPMV_STATUS_SIZE_OVERFLOW);
  b.rows = 0;
  b.cols = INT64_MAX;
  validation_error(b, 0, SPMV_STATUS_SIZE_OVERFLOW);
}

TEST_CASE("validate_csr finds the right row in a big matrix (parallel pass)", "[engine]") {
  // 600k rows of 0..2 entries: several validation chunks; errors late in the matrix.
  auto a = generate_matrix("short:600000:2", 3);
  const int64_t n = a.nnz();
  REQUIRE(n > 300000);
  const int64_t bad_row = 555555;
  int64_t pos = a.row_ptr[size_t(bad_row)];
  REQUIRE(a.row_ptr[size_t(bad_row) + 1] > pos);
  for (int base : {0, 1}) {
    INFO("base " << base);
    auto b = a;
    for (auto& v : b.row_ptr) v += base;
    for (auto& v : b.col_idx) v += base;
    REQUIRE_NOTHROW(validate_csr(b.ref(), base));
    b.col_idx[size_t(pos)] = b.cols + base;
    std::string m = validation_error(b.ref(), base, SPMV_STATUS_INVALID_MATRIX);
    CHECK(
        contains(m, "at position " + std::to_string(pos) + " (row " + std::to_string(bad_row + base) + ")"));
    b.col_idx[size_t(pos)] = base;
    b.row_ptr[500001] = b.row_ptr[500000] - 1;
    m = validation_error(b.ref(), base, SPMV_STATUS_INVALID_MATRIX);
    CHECK(contains(m, "row_ptr[500001]"));
  }
}

TEST_CASE("validate_csr splits by entries: dense rows, errors at both ends", "[engine]") {
  // Three dense rows among short ones: the chunks are row ranges of equal entries, so one holds
  // few rows. A bad column in the first and in the last entry, an unsorted last row, are found.
  auto a = generate_matrix("denserows:300000:3:2", 4);
  REQUIRE(a.nnz() > 900000);
  CHECK(validate_csr(a.ref(), 0));
  const int64_t last = a.nnz() - 1;
  for (int64_t pos : {int64_t(0), last}) {
    auto b = a;
    b.col_idx[size_t(pos)] = -1;
    // The row holding pos: the last one starting at or before it.
    const int64_t row = std::upper_bound(a.row_ptr.begin(), a.row_ptr.end(), pos) - a.row_ptr.begin() - 1;
    CHECK(contains(validation_error(b.ref(), 0, SPMV_STATUS_INVALID_MATRIX),
                   "at position " + std::to_string(pos) + " (row " + std::to_string(row) + ")"));
  }
  // The last nonempty row's last two columns swapped: not ascending (if it has two).
  auto c = a;
  int64_t r = a.rows - 1;
  while (c.row_ptr[size_t(r) + 1] - c.row_ptr[size_t(r)] < 2) --r;
  std::swap(c.col_idx[size_t(c.row_ptr[size_t(r) + 1] - 1)], c.col_idx[size_t(c.row_ptr[size_t(r) + 1] - 2)]);
  CHECK_FALSE(validate_csr(c.ref(), 0));
}

// validate_csr's "every row strictly ascends" counts drops between neighbouring entries in blocks
// of rows and forgives those at row starts: a row by row check must agree, with drops and repeats
// placed at row starts, at the 4096-row blocks' edges and anywhere else, empty rows between.
TEST_CASE("validate_csr: whether rows ascend, against a row by row check", "[engine]") {
  auto a = generate_matrix("random:20000:0:6", 9);  // rows of 0..6 entries, ascending
  REQUIRE(validate_csr(a.ref(), 0));
  auto ascends = [](const HostCsr<int64_t, double>& m) {
    for (int64_t r = 0; r < m.rows; ++r)
      for (int64_t k = m.row_ptr[size_t(r)] + 1; k < m.row_ptr[size_t(r) + 1]; ++k)
        if (m.col_idx[size_t(k) - 1] >= m.col_idx[size_t(k)]) return false;
    return true;
  };
  std::mt19937_64 rng(11);
  int unsorted = 0;
  for (int trial = 0; trial < 300; ++trial) {
    auto b = a;
    const int64_t r =
        trial < 40 ? 4096 * (1 + trial % 4) - 1 + trial / 20 : int64_t(rng() % uint64_t(b.rows));
    const int64_t beg = b.row_ptr[size_t(r)], end = b.row_ptr[size_t(r) + 1];
    if (end - beg < 1) continue;
    switch (trial % 3) {
      case 0:  // a repeat or a drop inside the row
        if (end - beg >= 2) b.col_idx[size_t(end) - 1] = b.col_idx[size_t(end) - 2] - int64_t(rng() % 2);
        break;
      case 1:  // the row's first entry at or below the previous row's last: still ascending
        b.col_idx[size_t(beg)] = 0;
        break;
      case 2:  // a drop right after the row's first entry
        if (end - beg >= 2) b.col_idx[size_t(beg) + 1] = b.col_idx[size_t(beg)];
        break;
    }
    if (b.col_idx[size_t(beg)] < 0) continue;
    INFO("trial " << trial << ", row " << r);
    CHECK(validate_csr(b.ref(), 0) == ascends(b));
    CHECK(validate_csr(b.cast<int32_t, double>().ref(), 0) == ascends(b));
    unsorted += !ascends(b);
  }
  CHECK(unsorted > 50);
}

TEST_CASE("compute_stats on a hand-made matrix", "[engine]") {
  // r0 {0,1,2}, r1 {}, r2 {5}, r3 {1,3,4,5}, r4 {}: 5 x 6, 8 nonzeros.
  std::vector<int64_t> rp{0, 3, 3, 4, 8, 8}, ci{0, 1, 2, 5, 1, 3, 4, 5};
  std::vector<double> val(8, 1.0);
  const MatrixStats s = compute_stats(ref_of<int64_t>(5, 6, rp, ci, val));
  CHECK(s.rows == 5);
  CHECK(s.cols == 6);
  CHECK(s.nnz == 8);
  CHECK(s.row_min == 0);
  CHECK(s.row_max == 4);
  CHECK(s.row_mean == Approx(1.6).epsilon(1e-15));
  CHECK(s.row_std == Approx(std::sqrt(26.0 / 5 - 1.6 * 1.6)).epsilon(1e-12));
  CHECK(s.row_cv == Approx(s.row_std / 1.6).epsilon(1e-12));
  CHECK(s.empty_rows == 2);
  CHECK(s.row_hist[0] == 2);  // empty
  CHECK(s.row_hist[1] == 1);  // length 1
  CHECK(s.row_hist[2] == 1);  // length 3 in [2, 4)
  CHECK(s.row_hist[3] == 1);  // length 4 in [4, 8)
  CHECK(s.row_hist[4] == 0);
  CHECK(s.distinct_diagonals() == 5);   // 0, 1, 2 (r0); 3 (r2); -2, 0, 1, 2 (r3)
  CHECK(s.dense_run_fraction == 0.75);  // {0,1,2} and {3,4,5} are runs; 5 in r2 and 1 in r3 not
  CHECK(s.avg_col_span == 3.0);         // (3 + 1 + 5) / 3 non-empty rows
  CHECK(test::json_error(s.to_json().dump()) == "");
  CHECK(s.to_json()["row_hist_log2"] == Json::array({2, 1, 1, 1}));
  CHECK(contains(s.to_text(), "[4, 8)"));

  // The same in int32 gives the same statistics.
  std::vector<int32_t> rp32(rp.begin(), rp.end()), ci32(ci.begin(), ci.end());
  const MatrixStats t = compute_stats(ref_of<int32_t>(5, 6, rp32, ci32, val));
  Json tj = t.to_json(), sj = s.to_json();
  tj["seconds"] = sj["seconds"] = 0;
  CHECK(tj == sj);
}

TEST_CASE("compute_stats: tridiagonal, identity, empty shapes", "[engine]") {
  // Tridiagonal 6 x 6.
  std::vector<int64_t> rp{0}, ci;
  for (int64_t r = 0; r < 6; ++r) {
    for (int64_t c = std::max<int64_t>(0, r - 1); c <= std::min<int64_t>(5, r + 1); ++c) ci.push_back(c);
    rp.push_back(int64_t(ci.size()));
  }
  std::vector<double> val(ci.size(), 1.0);
  MatrixStats s = compute_stats(ref_of<int64_t>(6, 6, rp, ci, val));
  CHECK(s.distinct_diagonals() == 3);
  CHECK(s.row_min == 2);
  CHECK(s.row_max == 3);
  CHECK(s.nnz == 16);
  CHECK(s.dense_run_fraction == 1.0);
  CHECK(s.avg_col_span == Approx(16.0 / 6).epsilon(1e-15));
  CHECK(s.row_hist[2] == 6);
  CHECK(s.empty_rows == 0);

  // Identity 4 x 4: one diagonal, no runs, zero spread.
  std::vector<int64_t> irp{0, 1, 2, 3, 4}, ici{0, 1, 2, 3};
  std::vector<double> ival(4, 1.0);
  s = compute_stats(ref_of<int64_t>(4, 4, irp, ici, ival));
  CHECK(s.distinct_diagonals() == 1);
  CHECK(s.dense_run_fraction == 0.0);
  CHECK(s.row_std == 0.0);
  CHECK(s.row_cv == 0.0);
  CHECK(s.avg_col_span == 1.0);
  CHECK(s.row_hist[1] == 4);

  // 3 x 3 with no entries, 0 x 0, 0 x 5, 5 x 0.
  for (const auto& [rows, cols] : std::vector<std::pair<int64_t, int64_t>>{{3, 3}, {0, 0}, {0, 5}, {5, 0}}) {
    INFO(rows << " x " << cols);
    std::vector<int64_t> erp(size_t(rows) + 1, 0), eci;
    std::vector<double> ev;
    s = compute_stats(ref_of<int64_t>(rows, cols, erp, eci, ev));
    CHECK(s.row_min == 0);
    CHECK(s.row_max == 0);
    CHECK(s.row_mean == 0);
    CHECK(s.row_std == 0);
    CHECK(s.empty_rows == rows);
    CHECK(s.row_hist[0] == rows);
    CHECK(s.distinct_diagonals() == 0);
    CHECK(s.dense_run_fraction == 0);
    CHECK(s.avg_col_span == 0);
    CHECK(test::json_error(s.to_json().dump()) == "");
  }
}

TEST_CASE("compute_stats matches a slow count on big matrices (parallel pass)", "[engine]") {
  for (const char* spec :
       {"powerlaw:100000:1.7:5000", "blocks:60000:4:3", "poisson2d:300", "short:400000:3"}) {
    INFO(spec);
    const auto a = generate_matrix(spec, 5);
    REQUIRE(a.nnz() + a.rows >= 2 * (1 << 18));  // big enough for two chunks
    check_same(compute_stats(a.ref()), slow_stats(a));
    const auto b = a.cast<int32_t, double>();
    check_same(compute_stats(b.ref()), slow_stats(a));
  }
}

TEST_CASE("ceil_log2", "[engine]") {
  CHECK(ceil_log2(1) == 0);
  CHECK(ceil_log2(2) == 1);
  CHECK(ceil_log2(3) == 2);
  CHECK(ceil_log2(4) == 2);
  CHECK(ceil_log2(5) == 3);
  CHECK(ceil_log2(int64_t(1) << 40) == 40);
  CHECK(ceil_log2((int64_t(1) << 40) + 1) == 41);
}
