// Tests of the judge itself (engine/reference.hpp): infinities, NaN, overflow, subnormal results.
#include <catch2/catch.hpp>
#include <cmath>
#include <limits>
#include <vector>

#include "engine/reference.hpp"

namespace spmvjit {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// One row per entry list, x all ones unless given.
template <class V>
HostCsr<int64_t, V> rows_of(const std::vector<std::vector<V>>& rows) {
  HostCsr<int64_t, V> a;
  a.rows = int64_t(rows.size());
  for (const auto& r : rows) {
    for (size_t k = 0; k < r.size(); ++k) {
      a.col_idx.push_back(int64_t(k));
      a.val.push_back(r[k]);
    }
    a.cols = std::max(a.cols, int64_t(r.size()));
    a.row_ptr.push_back(int64_t(a.col_idx.size()));
  }
  return a;
}

// check_spmv of y against A * ones (alpha 1, beta 0).
template <class V>
std::string judge(const HostCsr<int64_t, V>& a, const std::vector<V>& y) {
  const std::vector<V> x(size_t(a.cols), V(1));
  return check_spmv(a, reference_spmv(a, 1.0, x.data(), 0.0, y.data()), y.data());
}

}  // namespace

TEST_CASE("the checker: the same infinity agrees, the opposite or a finite value does not", "[reference]") {
  const auto a = rows_of<double>({{kInf, 1.0}, {-kInf, 2.0}, {1.0, 2.0}});
  CHECK(judge(a, {kInf, -kInf, 3.0}) == "");
  const std::string opposite = judge(a, {-kInf, -kInf, 3.0});
  CHECK(opposite.rfind("row 0: got -inf, expected inf (the opposite infinity)", 0) == 0);
  CHECK(judge(a, {kInf, 1e300, 3.0}).rfind("row 1: ", 0) == 0);
  CHECK(judge(a, {kInf, kNaN, 3.0}).rfind("row 1: ", 0) == 0);
  // An infinity where the sum is small: the kernel overflowed, or read garbage.
  CHECK(judge(a, {kInf, -kInf, kInf}).rfind("row 2: got inf, expected 3 (overflow", 0) == 0);
  CHECK(judge(a, {kInf, -kInf, -kInf}).rfind("row 2: ", 0) == 0);
  // Infinite x and beta * y: the same rules.
  const std::vector<double> x = {1.0, kInf}, y_in = {-kInf, 1.0, 1.0};
  std::vector<double> y = {-kInf, kInf, 1.0 + kInf};
  const auto r =
      reference_spmv(rows_of<double>({{0.0, 0.0}, {0.0, 1.0}, {1.0, 1.0}}), 1.0, x.data(), 1.0, y_in.data());
  CHECK(std::isnan(double(r.y[0])));  // 0 * inf in the reference too
  y[0] = kNaN;
  CHECK(check_spmv(rows_of<double>({{0.0, 0.0}, {0.0, 1.0}, {1.0, 1.0}}), r, y.data()) == "");
}

TEST_CASE("the checker: NaN agrees with NaN only", "[reference]") {
  const auto a = rows_of<double>({{kNaN, 1.0}, {kInf, -kInf}, {1.0, 1.0}});
  CHECK(judge(a, {kNaN, kNaN, 2.0}) == "");
  CHECK(judge(a, {1.0, kNaN, 2.0}).rfind("row 0: got 1, expected nan (NaN expected)", 0) == 0);
  CHECK(judge(a, {kNaN, kInf, 2.0}).rfind("row 1: ", 0) == 0);
  CHECK(judge(a, {kNaN, kNaN, kNaN}).rfind("row 2: got nan, expected 2 (NaN where", 0) == 0);
  const auto f = rows_of<float>({{std::numeric_limits<float>::quiet_NaN()}});
  CHECK(judge(f, {std::numeric_limits<float>::quiet_NaN()}) == "");
  CHECK(judge(f, {0.0f}) != "");
}

TEST_CASE("the checker: a reference beyond the value type's range is compared rounded to it", "[reference]") {
  // 1e308 + 1e308 is finite in long double and rounds to inf in double: inf is the right answer,
  // and so is the largest double (within the rounding tolerance of 2e308? no: far outside it).
  const auto a = rows_of<double>({{1e308, 1e308}, {-1e308, -1e308}});
  CHECK(judge(a, {kInf, -kInf}) == "");
  CHECK(judge(a, {-kInf, -kInf}).rfind("row 0: ", 0) == 0);
  CHECK(judge(a, {std::numeric_limits<double>::max(), -kInf}).rfind("row 0: ", 0) == 0);
  CHECK(judge(a, {kInf, kNaN}).rfind("row 1: ", 0) == 0);
  // Just above DBL_MAX, within rounding: the largest double and inf both agree.
  const double top = std::numeric_limits<double>::max();
  const auto b = rows_of<double>({{top, top * 0x1p-60}});
  CHECK(judge(b, {top}) == "");
  CHECK(judge(b, {kInf}) == "");
  // float: 3e38 * 2 is beyond FLT_MAX.
  const float finf = std::numeric_limits<float>::infinity();
  const auto f = rows_of<float>({{3e38f, 3e38f}, {3e38f, -3e38f}});
  CHECK(judge(f, {finf, 0.0f}) == "");
  CHECK(judge(f, {finf, finf}).rfind("row 1: ", 0) == 0);
  CHECK(judge(f, {-finf, 0.0f}).rfind("row 0: ", 0) == 0);
}

TEST_CASE("the checker: overflow on the way is excused only in the directions partial sums reach",
          "[reference]") {
  // Exact sum 0 and 1e308; another summation order overflows on the way.
  const auto a = rows_of<double>({{1e308, 1e308, -1e308, -1e308}, {1e308, 1e308, -1e308}});
  CHECK(judge(a, {0.0, 1e308}) == "");
  CHECK(judge(a, {kInf, kInf}) == "");
  CHECK(judge(a, {-kInf, 1e308}) == "");
  CHECK(judge(a, {kNaN, 1e308}) == "");                    // +inf + -inf in the first row
  CHECK(judge(a, {0.0, -kInf}).rfind("row 1: ", 0) == 0);  // partial sums stay above -2e308
  CHECK(judge(a, {0.0, kNaN}).rfind("row 1: ", 0) == 0);
  // Cancellation: the tolerance scales with sum |a_ij x_j| (4e308 here), so 5 is within it; half
  // of the exact 1e308 is not.
  CHECK(judge(a, {5.0, 1e308}) == "");
  CHECK(judge(a, {0.0, 0.5e308}).rfind("row 1: got 5.0000000000000001e+307, expected 1e+308 (error", 0) == 0);
  // alpha scales the raw sum afterwards: -0.5 * (1e308 + 1e308 - 1e308) overflows only downwards.
  const std::vector<double> x(3, 1.0);
  const auto b = rows_of<double>({{1e308, 1e308, -1e308}});
  const auto r = reference_spmv(b, -0.5, x.data(), 0.0, static_cast<const double*>(nullptr));
  std::vector<double> y = {-kInf};
  CHECK(check_spmv(b, r, y.data()) == "");
  y[0] = kInf;
  CHECK(check_spmv(b, r, y.data()) != "");
  y[0] = -0.5e308;
  CHECK(check_spmv(b, r, y.data()) == "");
  // A hand-made reference without the reach excuses no overflow.
  ReferenceResult plain{{0.0L}, {4e308L}, {}, {}};
  y[0] = kInf;
  CHECK(check_spmv(rows_of<double>({{1.0}}), plain, y.data()) != "");
}

TEST_CASE("the checker: subnormal results are judged by an absolute floor near the smallest normal",
          "[reference]") {
  // Eight products near 1e-310: each rounding in the subnormal range may lose up to half of
  // denorm_min, more than eps * scale promises; a flush to zero loses the whole value.
  std::vector<double> row;
  for (int k = 0; k < 8; ++k) row.push_back(1.2345e-310 * (k + 1) / 3.0);
  const auto a = rows_of<double>({row});
  long double exact = 0;
  for (double v : row) exact += v;
  const double near = double(exact) + 5 * std::numeric_limits<double>::denorm_min();
  CHECK(judge(a, {near}) == "");
  CHECK(judge(a, {0.0}) == "");             // flushed to zero
  CHECK(judge(a, {-double(exact)}) == "");  // within 2 (8 + 4) DBL_MIN of it
  CHECK(judge(a, {1e-300}).rfind("row 0: got 1e-300, expected 1.48", 0) == 0);
  CHECK(judge(a, {2.2250738585072014e-308 * 30}) != "");  // beyond the floor
  // float: 1e-40 is subnormal.
  const auto f = rows_of<float>({{1e-40f, 3e-41f, 7e-42f}});
  CHECK(judge(f, {1.37e-40f}) == "");
  CHECK(judge(f, {0.0f}) == "");
  CHECK(judge(f, {1e-36f}) != "");
  // Results well above the floor keep the relative bound: 1e-9 relative error is wrong for doubles.
  const auto n = rows_of<double>({{1.0, 2.0}, {1e-280, 1e-280}});
  CHECK(judge(n, {3.0 * (1 + 1e-9), 2e-280}).rfind("row 0: ", 0) == 0);
  CHECK(judge(n, {3.0, 2e-280 * (1 + 1e-9)}).rfind("row 1: ", 0) == 0);
  CHECK(judge(n, {3.0 * (1 + 1e-15), 2e-280 * (1 + 1e-15)}) == "");
}

TEST_CASE("check_vectors with a work limit judges a sample of rows, the first and last among them",
          "[reference]") {
  // 1,000 rows of 1-3 entries, k = 3 in both layouts: y computed exactly (in long double).
  HostCsr<int64_t, double> a;
  a.rows = 1000;
  a.cols = 700;
  for (int64_t i = 0; i < a.rows; ++i) {
    for (int64_t t = 0; t <= i % 3; ++t) {
      a.col_idx.push_back((i * 13 + t * 101) % a.cols);
      a.val.push_back(0.5 + double((i + t) % 7));
    }
    a.row_ptr.push_back(int64_t(a.col_idx.size()));
  }
  const int64_t k = 3;
  for (bool row_major : {false, true}) {
    const int64_t ldx = row_major ? k : a.cols, ldy = row_major ? k : a.rows;
    auto at = [&](int64_t i, int64_t j, int64_t ld) { return size_t(row_major ? i * ld + j : j * ld + i); };
    const auto x = random_vector<double>(a.cols * k, 3);
    const auto y0 = random_vector<double>(a.rows * k, 4);
    std::vector<double> y(y0.size());
    for (int64_t j = 0; j < k; ++j)
      for (int64_t i = 0; i < a.rows; ++i) {
        long double s = 0;
        for (int64_t e = a.row_ptr[size_t(i)]; e < a.row_ptr[size_t(i) + 1]; ++e)
          s += (long double)a.val[size_t(e)] * x[at(a.col_idx[size_t(e)], j, ldx)];
        y[at(i, j, ldy)] = double(1.5L * s - 0.25L * y0[at(i, j, ldy)]);
      }
    INFO((row_major ? "row-major" : "column-major"));
    CHECK(check_vectors(a, k, row_major, 1.5, x.data(), ldx, -0.25, y0.data(), y.data(), ldy, 500) == "");
    CHECK(check_vectors(a, k, row_major, 1.5, x.data(), ldx, -0.25, y0.data(), y.data(), ldy) == "");
    for (int64_t bad_row : {int64_t(0), int64_t(999)}) {
      auto wrong = y;
      wrong[at(bad_row, 2, ldy)] += 1.0;
      const std::string why =
          check_vectors(a, k, row_major, 1.5, x.data(), ldx, -0.25, y0.data(), wrong.data(), ldy, 500);
      CHECK(why.find("vector 2, row " + std::to_string(bad_row) + " (sampled)") == 0);
    }
  }
}

}  // namespace spmvjit
