// Tests of the synthetic matrix generators: exact stencil counts, bounds, determinism, errors,
// the harder kinds (rmat, varband, lpwide, circuit, perm, replicate) and the value suffixes.
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include "engine/gen/generators.hpp"

using spmvjit::generate_matrix;
using Csr = spmvjit::HostCsr<int64_t, double>;

namespace {

// Fingerprint of generate_matrix("random:100:1:5", 3), taken from this implementation.
constexpr int64_t kPinnedRandomNnz = 292;
constexpr uint64_t kPinnedRandomHash = 0x90677f2eee2ea0adull;
// fingerprint() of generate_matrix("rmat:10:8"), likewise.
constexpr uint64_t kPinnedRmatHash = 0xc52c4bda742593deull;

// Valid CSR with sorted, distinct, in-range columns.
void check_csr(const Csr& a) {
  REQUIRE(a.row_ptr.size() == size_t(a.rows) + 1);
  REQUIRE(a.row_ptr.front() == 0);
  REQUIRE(a.row_ptr.back() == a.nnz());
  REQUIRE(a.val.size() == a.col_idx.size());
  for (int64_t r = 0; r < a.rows; ++r) {
    const int64_t b = a.row_ptr[size_t(r)], e = a.row_ptr[size_t(r) + 1];
    REQUIRE(b <= e);
    for (int64_t k = b; k < e; ++k) {
      REQUIRE(a.col_idx[size_t(k)] >= 0);
      REQUIRE(a.col_idx[size_t(k)] < a.cols);
      if (k > b) REQUIRE(a.col_idx[size_t(k) - 1] < a.col_idx[size_t(k)]);
    }
  }
}

int64_t row_len(const Csr& a, int64_t r) { return a.row_ptr[size_t(r) + 1] - a.row_ptr[size_t(r)]; }

bool same(const Csr& a, const Csr& b) {
  return a.rows == b.rows && a.cols == b.cols && a.row_ptr == b.row_ptr && a.col_idx == b.col_idx &&
         a.val == b.val;
}

void check_random_values(const Csr& a) {
  for (double v : a.val) {
    REQUIRE(v >= -1.0);
    REQUIRE(v < 1.0);
  }
}

// FNV-1a over the columns and the values' bits: a fingerprint of pattern and values.
uint64_t fingerprint(const Csr& a) {
  uint64_t h = 1469598103934665603ull;
  for (int64_t c : a.col_idx) h = (h ^ uint64_t(c)) * 1099511628211ull;
  for (double v : a.val) {
    uint64_t bits;
    std::memcpy(&bits, &v, sizeof bits);
    h = (h ^ bits) * 1099511628211ull;
  }
  return h;
}

int64_t longest_row(const Csr& a) {
  int64_t m = 0;
  for (int64_t r = 0; r < a.rows; ++r) m = std::max(m, row_len(a, r));
  return m;
}

std::string error_of(const std::string& spec) {
  try {
    generate_matrix(spec);
  } catch (const spmvjit::Error& e) {
    CHECK(e.status() == SPMV_STATUS_INVALID_VALUE);
    return e.what();
  }
  FAIL("no error for " << spec);
  return "";
}

}  // namespace

TEST_CASE("stencils have the exact nonzero counts and coefficients", "[gen]") {
  for (int64_t n : {1, 2, 3, 7, 20}) {
    INFO("N = " << n);
    const Csr p2 = generate_matrix("poisson2d:" + std::to_string(n));
    check_csr(p2);
    CHECK(p2.rows == n * n);
    CHECK(p2.cols == n * n);
    CHECK(p2.nnz() == 5 * n * n - 4 * n);
    const Csr p3 = generate_matrix("poisson3d:" + std::to_string(n));
    check_csr(p3);
    CHECK(p3.rows == n * n * n);
    CHECK(p3.nnz() == 7 * n * n * n - 6 * n * n);
    const Csr s27 = generate_matrix("stencil27:" + std::to_string(n));
    check_csr(s27);
    CHECK(s27.rows == n * n * n);
    CHECK(s27.nnz() == (3 * n - 2) * (3 * n - 2) * (3 * n - 2));
  }
  // Rows of a Laplacian sum to zero away from the boundary; the diagonal holds 4 / 6 / 26.
  const Csr p2 = generate_matrix("poisson2d:5");
  const int64_t centre = 2 * 5 + 2;
  double sum = 0;
  for (int64_t k = p2.row_ptr[centre]; k < p2.row_ptr[centre + 1]; ++k) {
    sum += p2.val[size_t(k)];
    if (p2.col_idx[size_t(k)] == centre) CHECK(p2.val[size_t(k)] == 4.0);
  }
  CHECK(sum == 0.0);
  CHECK(row_len(p2, centre) == 5);
  const Csr p3 = generate_matrix("poisson3d:3");
  CHECK(row_len(p3, 13) == 7);
  CHECK(p3.val[size_t(p3.row_ptr[13] + 3)] == 6.0);
  const Csr s27 = generate_matrix("stencil27:3");
  CHECK(row_len(s27, 13) == 27);
  CHECK(s27.val[size_t(s27.row_ptr[13] + 13)] == 26.0);
}

TEST_CASE("random generators are deterministic per seed", "[gen]") {
  for (const char* spec : {"random:500", "powerlaw:2000", "denserows:300:3", "short:400", "dense:7:9",
                           "diag:50:7", "blocks:200:3:5", "blockfem:4:3", "varband:500", "lpwide:300",
                           "circuit:500:2:100", "perm:300", "random:300@random", "rmat:8@random"}) {
    INFO(spec);
    const Csr a = generate_matrix(spec, 7);
    const Csr b = generate_matrix(spec, 7);
    const Csr c = generate_matrix(spec, 8);
    check_csr(a);
    CHECK(same(a, b));
    CHECK_FALSE(same(a, c));
    check_random_values(a);
  }
  // Pinned: the generator must not depend on the standard library (or change by accident).
  const Csr a = generate_matrix("random:100:1:5", 3);
  uint64_t h = 1469598103934665603ull;
  for (int64_t c : a.col_idx) h = (h ^ uint64_t(c)) * 1099511628211ull;
  CHECK(a.nnz() == kPinnedRandomNnz);
  CHECK(h == kPinnedRandomHash);
}

TEST_CASE("random: row lengths within [MIN, MAX], columns within COLS", "[gen]") {
  const Csr a = generate_matrix("random:2000:3:7:50", 5);
  check_csr(a);
  CHECK(a.rows == 2000);
  CHECK(a.cols == 50);
  int64_t shortest = 100, longest = 0;
  for (int64_t r = 0; r < a.rows; ++r) {
    shortest = std::min(shortest, row_len(a, r));
    longest = std::max(longest, row_len(a, r));
  }
  CHECK(shortest == 3);
  CHECK(longest == 7);
  // Fully dense rows take the selection-sampling path.
  const Csr d = generate_matrix("random:20:16:16:16");
  check_csr(d);
  CHECK(d.nnz() == 20 * 16);
  // Defaults: MIN=1, MAX=40, COLS=ROWS.
  const Csr def = generate_matrix("random:1000");
  check_csr(def);
  CHECK(def.cols == 1000);
  for (int64_t r = 0; r < def.rows; ++r) REQUIRE((row_len(def, r) >= 1 && row_len(def, r) <= 40));
}

TEST_CASE("powerlaw: many short rows, a few long ones", "[gen]") {
  const Csr a = generate_matrix("powerlaw:100000", 1);
  check_csr(a);
  int64_t ones = 0, longest = 0;
  for (int64_t r = 0; r < a.rows; ++r) {
    REQUIRE(row_len(a, r) >= 1);
    REQUIRE(row_len(a, r) <= 10000);  // MAXLEN = ROWS / 10
    ones += row_len(a, r) == 1;
    longest = std::max(longest, row_len(a, r));
  }
  CHECK(ones > a.rows / 3);
  CHECK(longest > 100);
  const Csr b = generate_matrix("powerlaw:1000:1.5:20", 1);
  for (int64_t r = 0; r < b.rows; ++r) REQUIRE(row_len(b, r) <= 20);
}

TEST_CASE("denserows, short, dense, diag and blocks shapes", "[gen]") {
  const Csr d = generate_matrix("denserows:1000:5:8");
  check_csr(d);
  int64_t full = 0;
  for (int64_t r = 0; r < d.rows; ++r) {
    if (row_len(d, r) == 1000) {
      ++full;
    } else {
      REQUIRE((row_len(d, r) >= 4 && row_len(d, r) <= 12));
    }
  }
  CHECK(full == 5);

  const Csr s = generate_matrix("short:1000:2");
  check_csr(s);
  int64_t empty = 0;
  for (int64_t r = 0; r < s.rows; ++r) {
    REQUIRE(row_len(s, r) <= 2);
    empty += row_len(s, r) == 0;
  }
  CHECK(empty > 200);

  const Csr m = generate_matrix("dense:3:4");
  check_csr(m);
  CHECK(m.rows == 3);
  CHECK(m.cols == 4);
  CHECK(m.nnz() == 12);

  const Csr g = generate_matrix("diag:10:5");
  check_csr(g);
  CHECK(g.nnz() == 5 * 10 - 6);
  for (int64_t r = 0; r < g.rows; ++r)
    for (int64_t k = g.row_ptr[size_t(r)]; k < g.row_ptr[size_t(r) + 1]; ++k)
      REQUIRE(std::abs(g.col_idx[size_t(k)] - r) <= 2);
  CHECK(generate_matrix("diag:10:1").nnz() == 10);

  const Csr b = generate_matrix("blocks:100:4:3");
  check_csr(b);
  for (int64_t r = 0; r < b.rows; ++r) {
    REQUIRE(row_len(b, r) == 12);
    for (int64_t k = b.row_ptr[size_t(r)]; k < b.row_ptr[size_t(r) + 1]; k += 4) {
      REQUIRE(b.col_idx[size_t(k)] % 4 == 0);
      REQUIRE(b.col_idx[size_t(k) + 3] == b.col_idx[size_t(k)] + 3);
    }
  }
}

TEST_CASE("blockfem: the 27-point stencil's nodes coupled by dense B x B blocks", "[gen]") {
  for (int64_t n : {1, 2, 5}) {
    for (int64_t b : {1, 2, 3, 4}) {
      INFO("N = " << n << ", B = " << b);
      const Csr a = generate_matrix("blockfem:" + std::to_string(n) + ":" + std::to_string(b));
      check_csr(a);
      check_random_values(a);
      CHECK(a.rows == b * n * n * n);
      CHECK(a.cols == a.rows);
      CHECK(a.nnz() == b * b * (3 * n - 2) * (3 * n - 2) * (3 * n - 2));
      // Rows of one node share their columns: runs of whole, B-aligned node blocks.
      for (int64_t r = 0; r < a.rows; ++r) {
        const int64_t first = a.row_ptr[size_t(r - r % b)], len = row_len(a, r);
        REQUIRE(len == row_len(a, r - r % b));
        REQUIRE(len % b == 0);
        for (int64_t k = 0; k < len; ++k) {
          REQUIRE(a.col_idx[size_t(a.row_ptr[size_t(r)] + k)] == a.col_idx[size_t(first + k)]);
          if (k % b == 0) REQUIRE(a.col_idx[size_t(first + k)] % b == 0);
        }
      }
    }
  }
  // Default B = 3; an interior node couples to 27 nodes.
  const Csr d = generate_matrix("blockfem:3");
  CHECK(d.rows == 81);
  CHECK(row_len(d, 13 * 3) == 81);
  CHECK(error_of("blockfem:3:0") == "generator 'blockfem': B=0 must be at least 1");
}

TEST_CASE("bad specs are INVALID_VALUE naming the problem", "[gen]") {
  CHECK(error_of("nope:3").rfind("unknown generator 'nope'; known: poisson2d, poisson3d", 0) == 0);
  CHECK(error_of("").find("unknown generator ''") != std::string::npos);
  CHECK(error_of("poisson2d") == "generator 'poisson2d': needs N");
  CHECK(error_of("random:abc") == "generator 'random': ROWS='abc' is not an integer");
  CHECK(error_of("random:10:5:3") == "generator 'random': MAX=3 must be at least 5");
  CHECK(error_of("poisson2d:0") == "generator 'poisson2d': N=0 must be at least 1");
  CHECK(error_of("powerlaw:10:x") == "generator 'powerlaw': ALPHA='x' is not a number");
  CHECK(error_of("short:10:1:2").find("takes at most 2 parameters (ROWS:MAX), got 3") != std::string::npos);
  CHECK(error_of("dense:1000000:1000000").find("more than 2^34") != std::string::npos);
  CHECK(error_of("poisson3d:100000").find("more than 2^34") != std::string::npos);
  CHECK(error_of("powerlaw:100000000:0:100000").find("more than 2^34") != std::string::npos);
}

TEST_CASE("generator_help lists every kind, one per line", "[gen]") {
  std::istringstream help(spmvjit::generator_help());
  std::string line;
  int kinds = 0;
  while (std::getline(help, line)) {
    const std::string kind = line.substr(0, line.find(':'));
    INFO(line);
    if (line.rfind("value suffixes", 0) == 0) break;                       // then the @KIND lines, not kinds
    if (kind != "replicate") CHECK_NOTHROW(generate_matrix(kind + ":4"));  // its parameter is a file
    ++kinds;
  }
  CHECK(kinds == 17);
  CHECK(spmvjit::generator_help().find("@few") != std::string::npos);
}

TEST_CASE("poisson2d:2000 builds in well under a second", "[.][gen][perf]") {
  const auto t0 = std::chrono::steady_clock::now();
  const Csr a = generate_matrix("poisson2d:2000");
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  WARN("poisson2d:2000: " << a.nnz() << " nonzeros in " << s << " s");
  CHECK(a.nnz() == 5 * 2000 * 2000 - 4 * 2000);
}

TEST_CASE("rmat: Graph500 R-MAT, skewed degrees, repeated edges merged", "[gen]") {
  const Csr a = generate_matrix("rmat:12");  // 4096 vertices, 16 * 4096 edges drawn
  check_csr(a);
  CHECK(a.rows == 4096);
  CHECK(a.cols == 4096);
  CHECK(a.nnz() <= 16 * 4096);
  CHECK(a.nnz() > 8 * 4096);
  for (double v : a.val) REQUIRE(v == 1.0);  // an adjacency matrix
  // Degree skew: the hubs are far above the mean; uniform quadrants (A=B=C=D) are not.
  const double mean = double(a.nnz()) / double(a.rows);
  CHECK(double(longest_row(a)) > 8 * mean);
  const Csr flat = generate_matrix("rmat:12:16:0.25:0.25:0.25");
  check_csr(flat);
  CHECK(double(longest_row(flat)) < 3 * double(flat.nnz()) / double(flat.rows));
  // Labels are scrambled: the hub is not vertex 0 (where unscrambled R-MAT puts it).
  CHECK(row_len(a, 0) < longest_row(a));
  // A = 1: every edge is the same one, kept once.
  CHECK(generate_matrix("rmat:6:4:1:0:0").nnz() == 1);
  CHECK(same(generate_matrix("rmat:12"), a));
  CHECK_FALSE(same(generate_matrix("rmat:12", 2), a));
  // Pinned, as the random kind: the same on every platform and any number of threads.
  CHECK(fingerprint(generate_matrix("rmat:10:8")) == kPinnedRmatHash);
  CHECK(error_of("rmat:0") == "generator 'rmat': SCALE=0 must be at least 1");
  CHECK(error_of("rmat:27") == "generator 'rmat': SCALE=27 must be at most 26");
  CHECK(error_of("rmat:10:16:0.5:0.3:0.3") ==
        "generator 'rmat': A+B+C=1.100000 must be at most 1 (D = 1-A-B-C)");
  CHECK(error_of("rmat:26:1024").find("more than 2^34") != std::string::npos);
}

TEST_CASE("varband: contiguous rows, half-widths within [MINW, MAXW]", "[gen]") {
  const Csr a = generate_matrix("varband:3000:3:20");
  check_csr(a);
  check_random_values(a);
  CHECK(a.rows == 3000);
  CHECK(a.cols == 3000);
  std::set<int64_t> lengths;
  for (int64_t r = 0; r < a.rows; ++r) {
    const int64_t b = a.row_ptr[size_t(r)], len = row_len(a, r);
    const int64_t first = a.col_idx[size_t(b)], last = a.col_idx[size_t(b + len - 1)];
    REQUIRE(last - first + 1 == len);  // contiguous: sorted and distinct, so no gaps
    REQUIRE((r - first >= std::min<int64_t>(3, r) && r - first <= 20));
    REQUIRE((last - r >= std::min<int64_t>(3, a.rows - 1 - r) && last - r <= 20));
    lengths.insert(len);
  }
  CHECK(lengths.size() > 10);                            // the width varies
  CHECK(generate_matrix("varband:50:0:0").nnz() == 50);  // widths 0: the diagonal
  CHECK(error_of("varband:10:5:4") == "generator 'varband': MAXW=4 must be at least 5");
}

TEST_CASE("lpwide: RATIO times more columns than rows, skewed row lengths", "[gen]") {
  const Csr a = generate_matrix("lpwide:2000:20:2:200");
  check_csr(a);
  check_random_values(a);
  CHECK(a.rows == 2000);
  CHECK(a.cols == 40000);
  std::vector<int64_t> len;
  for (int64_t r = 0; r < a.rows; ++r) len.push_back(row_len(a, r));
  std::sort(len.begin(), len.end());
  CHECK(len.front() >= 2);
  CHECK(len.front() <= 3);
  CHECK(len.back() <= 200);
  CHECK(len.back() > 150);
  CHECK(len[len.size() / 2] < 40);  // log-uniform: the median is far below the mean of MIN and MAX
  const Csr d = generate_matrix("lpwide:10:3");  // MAX defaults to the 30 columns
  check_csr(d);
  CHECK(d.cols == 30);
  CHECK(error_of("lpwide:10:3:2:31") == "generator 'lpwide': MAX=31 must be at most 30");
  CHECK(error_of("lpwide:10:0") == "generator 'lpwide': RATIO=0 must be at least 1");
}

TEST_CASE("circuit: diagonal, nearby couplings, a dense column and a few long rows", "[gen]") {
  const Csr a = generate_matrix("circuit:5000:3:1000");
  check_csr(a);
  check_random_values(a);
  CHECK(a.rows == 5000);
  int64_t big = 0;
  for (int64_t r = 0; r < a.rows; ++r) {
    const int64_t b = a.row_ptr[size_t(r)], e = a.row_ptr[size_t(r) + 1];
    REQUIRE(a.col_idx[size_t(b)] == 0);  // the dense column
    REQUIRE(std::binary_search(a.col_idx.begin() + b, a.col_idx.begin() + e, r));
    if (e - b >= 1000) {
      ++big;
      continue;
    }
    REQUIRE(e - b <= 7);
    for (int64_t k = b + 1; k < e; ++k) REQUIRE(std::abs(a.col_idx[size_t(k)] - r) <= 64);
  }
  CHECK(big == 3);
  CHECK(error_of("circuit:10:11") == "generator 'circuit': BIG=11 must be at most 10");
}

TEST_CASE("perm: exactly one entry in every row and every column", "[gen]") {
  const Csr a = generate_matrix("perm:1000");
  check_csr(a);
  check_random_values(a);
  CHECK(a.nnz() == 1000);
  std::vector<int> used(1000, 0);
  for (int64_t r = 0; r < a.rows; ++r) {
    REQUIRE(row_len(a, r) == 1);
    ++used[size_t(a.col_idx[size_t(r)])];
  }
  CHECK(std::count(used.begin(), used.end(), 1) == 1000);
  CHECK(same(generate_matrix("perm:1000"), a));
  CHECK(error_of("perm:0") == "generator 'perm': N=0 must be at least 1");
}

TEST_CASE("replicate: copies of a Matrix Market file along the diagonal", "[gen]") {
  const auto dir = std::filesystem::temp_directory_path() / ("spmvjit-gen-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string real = (dir / "real.mtx").string(), pattern = (dir / "pattern.mtx").string();
  const std::string empty = (dir / "empty.mtx").string();
  std::ofstream(real) << "%%MatrixMarket matrix coordinate real general\n2 3 3\n1 1 1.5\n1 3 -2\n2 2 4\n";
  std::ofstream(pattern) << "%%MatrixMarket matrix coordinate pattern general\n2 2 2\n1 2\n2 1\n";
  std::ofstream(empty) << "%%MatrixMarket matrix coordinate real general\n2 2 0\n";
  const Csr a = generate_matrix("replicate:" + real + ":7");  // 3 copies reach 7 nonzeros
  check_csr(a);
  CHECK(a.rows == 6);
  CHECK(a.cols == 9);
  CHECK(a.nnz() == 9);
  CHECK(a.col_idx == std::vector<int64_t>{0, 2, 1, 3, 5, 4, 6, 8, 7});
  CHECK(a.val == std::vector<double>{1.5, -2, 4, 1.5, -2, 4, 1.5, -2, 4});
  const Csr p = generate_matrix("replicate:" + pattern + ":1");
  CHECK(p.nnz() == 2);
  CHECK(p.val == std::vector<double>{1, 1});
  CHECK(generate_matrix("replicate:" + real + ":7@few").col_idx == a.col_idx);
  CHECK(error_of("replicate") == "generator 'replicate': needs PATH");
  CHECK(error_of("replicate:" + empty) == "generator 'replicate': '" + empty + "' has no nonzeros");
  CHECK(error_of("replicate:" + real + ":0") == "generator 'replicate': MINNNZ=0 must be at least 1");
  CHECK_THROWS_AS(generate_matrix("replicate:" + (dir / "missing.mtx").string()), spmvjit::Error);
  std::filesystem::remove_all(dir);
}

TEST_CASE("value suffixes: @ones, @few, @random keep the pattern", "[gen]") {
  for (const char* spec : {"poisson2d:20", "random:300", "diag:100:3", "blockfem:3:2", "rmat:9",
                           "varband:300", "lpwide:100", "circuit:300:1:100", "perm:300"}) {
    INFO(spec);
    const Csr natural = generate_matrix(spec);
    const Csr ones = generate_matrix(std::string(spec) + "@ones");
    const Csr few = generate_matrix(std::string(spec) + "@few");
    const Csr rnd = generate_matrix(std::string(spec) + "@random");
    for (const Csr* m : {&ones, &few, &rnd}) {
      CHECK(m->row_ptr == natural.row_ptr);
      CHECK(m->col_idx == natural.col_idx);
    }
    for (double v : ones.val) REQUIRE(v == 1.0);
    const std::set<double> few_values(few.val.begin(), few.val.end());
    CHECK(few_values.size() <= 8);
    for (double v : few_values) REQUIRE((v == std::round(v) && v != 0 && std::abs(v) <= 4));
    check_random_values(rnd);
    CHECK(same(few, generate_matrix(std::string(spec) + "@few")));
  }
  const Csr big = generate_matrix("poisson2d:30@random");
  CHECK(std::set<double>(big.val.begin(), big.val.end()).size() > 100);
  const Csr few = generate_matrix("poisson2d:30@few");
  CHECK(std::set<double>(few.val.begin(), few.val.end()).size() == 8);
  CHECK(error_of("poisson2d:4@zeros") ==
        "generator 'poisson2d': unknown values '@zeros'; known: @random, @few, @ones");
  CHECK(error_of("perm:4@").find("unknown values '@'") != std::string::npos);
}

TEST_CASE("rmat:18 builds in about a second", "[.][gen][perf]") {
  const auto t0 = std::chrono::steady_clock::now();
  const Csr a = generate_matrix("rmat:18");
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  WARN("rmat:18: " << a.rows << " rows, " << a.nnz() << " nonzeros in " << s << " s");
  CHECK(a.nnz() <= 16 * (int64_t(1) << 18));
}
