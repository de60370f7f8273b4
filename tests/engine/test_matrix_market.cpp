// Tests of the Matrix Market reader and writer: file corpus, round trip, SuiteSparse matrices.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "engine/gen/generators.hpp"
#include "engine/io/matrix_market.hpp"

using spmvjit::HostCsr;
using Csr = HostCsr<int64_t, double>;
using Dense = std::vector<std::vector<double>>;

namespace {

std::string data_file(const std::string& name) {
  return std::string(SPMVJIT_TEST_DATA_DIR) + "/mtx/" + name;
}

Csr read(const std::string& name) { return spmvjit::read_matrix_market(data_file(name)); }

Dense to_dense(const Csr& a) {
  Dense d(size_t(a.rows), std::vector<double>(size_t(a.cols), 0.0));
  for (int64_t r = 0; r < a.rows; ++r)
    for (int64_t k = a.row_ptr[size_t(r)]; k < a.row_ptr[size_t(r) + 1]; ++k)
      d[size_t(r)][size_t(a.col_idx[size_t(k)])] += a.val[size_t(k)];
  return d;
}

// Structure every reader output must have: sorted, distinct, in-range columns.
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

struct BadFile {
  const char* file;
  int line;
  const char* fragment;
  spmv_status_t status = SPMV_STATUS_PARSE_ERROR;
};

std::string temp_path(const std::string& stem) {
  return (std::filesystem::temp_directory_path() /
          (stem + "_" + std::to_string(::getpid()) + ".mtx"))
      .string();
}

}  // namespace

TEST_CASE("malformed Matrix Market files name the line and the problem", "[io][mtx]") {
  const BadFile cases[] = {
      {"bad_banner.mtx", 1, "missing banner"},
      {"missing_banner.mtx", 1, "missing banner"},
      {"empty.mtx", 1, "empty file"},
      {"incomplete_banner.mtx", 1, "incomplete banner"},
      {"bad_format.mtx", 1, "unknown format 'sparse'"},
      {"bad_symmetry.mtx", 1, "unknown symmetry 'lower'"},
      {"complex.mtx", 1, "a complex matrix cannot be read into real values", SPMV_STATUS_UNSUPPORTED},
      {"array_pattern.mtx", 1, "pattern field is not allowed"},
      {"bad_size_line.mtx", 3, "invalid size line: expected 'rows cols entries'"},
      {"nonnumeric_size.mtx", 2, "got 'three'"},
      {"negative_size.mtx", 4, "negative size"},
      {"missing_size_line.mtx", 3, "missing the size line"},
      {"trailing_size.mtx", 2, "unexpected '7' after the size line"},
      {"nonsquare_symmetric.mtx", 2, "must be square, got 3 x 4"},
      {"row_out_of_range.mtx", 4, "row index 4 is out of range [1, 3]"},
      {"col_out_of_range.mtx", 6, "column index 0 is out of range [1, 3]"},
      {"too_few_entries.mtx", 5, "unexpected end of file after 2 of 4 entries"},
      {"too_many_entries.mtx", 6, "more entries than the size line declares (2)"},
      {"non_numeric.mtx", 4, "invalid value 'abc'"},
      {"bad_index.mtx", 4, "invalid row index '2.5'"},
      {"missing_value.mtx", 4, "missing value"},
      {"trailing_garbage.mtx", 3, "unexpected 'x' after the entry"},
      {"skew_diagonal.mtx", 4, "diagonal entry (2, 2) in a skew-symmetric matrix"},
      {"truncated.mtx", 5, "missing column index"},
      {"bad_integer.mtx", 3, "invalid integer value '1.5'"},
      {"pattern_with_value.mtx", 3, "unexpected '1.0' after the entry"},
      {"array_too_few.mtx", 5, "unexpected end of file after 3 of 4 entries"},
  };
  for (const BadFile& c : cases) {
    INFO(c.file);
    const std::string path = data_file(c.file);
    try {
      spmvjit::read_matrix_market(path);
      FAIL("no error for " << c.file);
    } catch (const spmvjit::Error& e) {
      const std::string msg = e.what();
      INFO(msg);
      CHECK(e.status() == c.status);
      CHECK(msg.rfind(path + ":" + std::to_string(c.line) + ": ", 0) == 0);
      CHECK(msg.find(c.fragment) != std::string::npos);
    }
  }
}

TEST_CASE("parse_matrix_market uses the given name in messages", "[io][mtx]") {
  const std::string text = "%%MatrixMarket matrix coordinate real general\n2 2 1\n1 3 1.0\n";
  try {
    spmvjit::parse_matrix_market(text, "inline");
    FAIL("no error");
  } catch (const spmvjit::Error& e) {
    CHECK(std::string(e.what()) == "inline:3: column index 3 is out of range [1, 2]");
  }
  const Csr a = spmvjit::parse_matrix_market(
      "%%MatrixMarket matrix coordinate real general\n1 2 1\n1 2 0.25", "no final newline");
  CHECK(to_dense(a) == Dense{{0, 0.25}});
}

TEST_CASE("the reader reports progress every few MB when asked, through the end", "[io][mtx]") {
  // About 14 MB of entries (a dense 1000 x 1000 block, ~14 bytes a line), written to a file:
  // the mapped path with its own page reads.
  std::string text = "%%MatrixMarket matrix coordinate real general\n1000 1000 1000000\n";
  for (int i = 1; i <= 1000; ++i)
    for (int j = 1; j <= 1000; ++j) text += std::to_string(i) + " " + std::to_string(j) + " 0.5\n";
  const std::string path =
      (std::filesystem::temp_directory_path() / ("spmvjit_progress_" + std::to_string(::getpid()) + ".mtx"))
          .string();
  std::ofstream(path) << text;
  std::vector<std::pair<uint64_t, uint64_t>> calls;
  spmvjit::ReadOptions o;
  o.progress = [&](uint64_t done, uint64_t total) { calls.emplace_back(done, total); };
  const Csr a = spmvjit::read_matrix_market(path, o);
  std::filesystem::remove(path);
  CHECK(a.nnz() == 1000000);
  REQUIRE(calls.size() >= 4);
  CHECK(calls.front() == std::make_pair(uint64_t(0), uint64_t(text.size())));
  CHECK(calls.back() == std::make_pair(uint64_t(text.size()), uint64_t(text.size())));
  for (size_t k = 1; k < calls.size(); ++k) {
    CHECK(calls[k].first > calls[k - 1].first);
    CHECK(calls[k].second == text.size());
  }
  CHECK(calls.size() <= text.size() / (size_t(4) << 20) + 2);  // every 4 MB, not every line
  // The same text in memory, and none at all without a callback (the default).
  calls.clear();
  spmvjit::parse_matrix_market(text, "inline", o);
  CHECK(calls.size() >= 4);
  CHECK(spmvjit::parse_matrix_market(text, "inline").nnz() == 1000000);
}

TEST_CASE("missing files are I/O errors", "[io][mtx]") {
  try {
    spmvjit::read_matrix_market(data_file("does_not_exist.mtx"));
    FAIL("no error");
  } catch (const spmvjit::Error& e) {
    CHECK(e.status() == SPMV_STATUS_IO_ERROR);
    CHECK(std::string(e.what()).find("No such file or directory") != std::string::npos);
  }
  Csr a;
  try {
    spmvjit::write_matrix_market("/nonexistent-dir/x.mtx", a);
    FAIL("no error");
  } catch (const spmvjit::Error& e) {
    CHECK(e.status() == SPMV_STATUS_IO_ERROR);
  }
}

TEST_CASE("symmetric, skew and hermitian files are mirrored", "[io][mtx]") {
  const Csr s = read("symmetric.mtx");
  check_csr(s);
  CHECK(s.nnz() == 2 * 5 - 2);
  CHECK(to_dense(s) == Dense{{2, -1, 0, 0.5}, {-1, 0, -1.5, 0}, {0, -1.5, 0, 0}, {0.5, 0, 0, 3}});

  const Csr k = read("skew.mtx");
  check_csr(k);
  CHECK(k.nnz() == 4);
  CHECK(to_dense(k) == Dense{{0, -1.5, 0}, {1.5, 0, 2}, {0, -2, 0}});

  const Csr h = read("hermitian_real.mtx");
  CHECK(to_dense(h) == Dense{{1, 3}, {3, 0}});

  const Csr p = read("pattern_symmetric.mtx");
  check_csr(p);
  CHECK(p.nnz() == 5);
  CHECK(to_dense(p) == Dense{{1, 1, 1}, {1, 0, 0}, {1, 0, 0}});
}

TEST_CASE("pattern, integer and Fortran-exponent values", "[io][mtx]") {
  const Csr p = read("pattern.mtx");
  check_csr(p);
  CHECK(p.rows == 3);
  CHECK(p.cols == 4);
  CHECK(p.row_ptr == std::vector<int64_t>{0, 2, 3, 4});
  CHECK(p.col_idx == std::vector<int64_t>{1, 3, 0, 3});
  CHECK(p.val == std::vector<double>{1, 1, 1, 1});

  CHECK(to_dense(read("integer.mtx")) == Dense{{7, 0, 2}, {0, 0, -4}});
  CHECK(to_dense(read("fortran_exponent.mtx")) == Dense{{150, -0.2}});
  CHECK(to_dense(read("uppercase.mtx")) == Dense{{1}});
}

TEST_CASE("array files keep only their nonzeros", "[io][mtx]") {
  const Csr a = read("array.mtx");
  check_csr(a);
  CHECK(a.nnz() == 3);
  CHECK(to_dense(a) == Dense{{1, 0, -0.5}, {0, 4, 0}});

  const Csr s = read("array_symmetric.mtx");
  check_csr(s);
  CHECK(s.nnz() == 7);
  CHECK(to_dense(s) == Dense{{1, 2, 0}, {2, 4, 5}, {0, 5, 6}});

  const Csr k = read("array_skew.mtx");
  CHECK(to_dense(k) == Dense{{0, -1, -2}, {1, 0, -3}, {2, 3, 0}});
}

TEST_CASE("duplicates are summed, explicit zeros kept, columns sorted", "[io][mtx]") {
  const Csr d = read("duplicates.mtx");
  check_csr(d);
  CHECK(d.row_ptr == std::vector<int64_t>{0, 1, 3});
  CHECK(d.col_idx == std::vector<int64_t>{0, 0, 1});
  CHECK(d.val == std::vector<double>{3.5, 0.0, 5.0});

  const Csr u = read("unsorted.mtx");
  check_csr(u);
  CHECK(u.row_ptr == std::vector<int64_t>{0, 3, 4, 6});
  CHECK(u.col_idx == std::vector<int64_t>{0, 1, 2, 1, 0, 3});
  CHECK(u.val == std::vector<double>{1, 5, 3, 2, 4, 6});
}

TEST_CASE("comments, blank lines and CRLF line endings", "[io][mtx]") {
  const Csr c = read("comments.mtx");
  check_csr(c);
  CHECK(to_dense(c) == Dense{{1, 0, 0}, {0, 2, 0}, {0, 0, 3}});

  const Csr w = read("crlf.mtx");
  check_csr(w);
  CHECK(to_dense(w) == Dense{{1, 0, 0}, {0, 0, 2}, {3, 0, 0}});

  const Csr e = read("empty_rows.mtx");
  CHECK(e.row_ptr == std::vector<int64_t>{0, 0, 1, 1, 2, 2});
  const Csr z = read("zero_size.mtx");
  CHECK(z.rows == 0);
  CHECK(z.cols == 0);
  CHECK(z.row_ptr == std::vector<int64_t>{0});
}

TEST_CASE("write then read gives back the same matrix", "[io][mtx]") {
  Csr a = spmvjit::generate_matrix("random:300:0:25:170", 42);
  // Values that only survive with 17 significant digits, and signed zero.
  a.val[0] = 1.0 / 3.0;
  a.val[1] = -1e-300;
  a.val[2] = 6.02214076e23;
  a.val[3] = -0.0;
  const std::string path = temp_path("spmvjit_roundtrip");
  spmvjit::write_matrix_market(path, a);
  const Csr b = spmvjit::read_matrix_market(path);
  std::filesystem::remove(path);
  CHECK(b.rows == a.rows);
  CHECK(b.cols == a.cols);
  CHECK(b.row_ptr == a.row_ptr);
  CHECK(b.col_idx == a.col_idx);
  CHECK(b.val == a.val);
  CHECK(std::signbit(b.val[3]));
}

// An independent, slow reading of the header and entries, to cross-check the fast reader.
TEST_CASE("SuiteSparse matrices: sizes and nonzero counts", "[io][mtx][suitesparse]") {
  const char* dir = std::getenv("SPMVJIT_MATRICES_DIR");
  if (!dir || !*dir) {
    WARN("SPMVJIT_MATRICES_DIR is not set: skipping the SuiteSparse matrices");
    return;
  }
  int seen = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().extension() != ".mtx") continue;
    const std::string path = entry.path().string();
    INFO(path);
    std::ifstream in(path);
    std::string line, symmetry;
    std::getline(in, line);
    std::istringstream banner(line);
    for (int i = 0; i < 5; ++i) banner >> symmetry;
    while (std::getline(in, line) && (line.empty() || line[0] == '%')) {
    }
    int64_t rows = 0, cols = 0, entries = 0, diagonal = 0;
    std::istringstream(line) >> rows >> cols >> entries;
    for (int64_t k = 0; k < entries; ++k) {
      int64_t i = 0, j = 0;
      in >> i >> j;
      std::getline(in, line);
      diagonal += i == j;
    }
    int64_t expected = entries;
    if (symmetry == "symmetric" || symmetry == "hermitian") expected = 2 * entries - diagonal;
    if (symmetry == "skew-symmetric") expected = 2 * entries;

    const Csr a = spmvjit::read_matrix_market(path);
    check_csr(a);
    CHECK(a.rows == rows);
    CHECK(a.cols == cols);
    CHECK(a.nnz() == expected);
    if (symmetry == "symmetric") {
      std::map<std::pair<int64_t, int64_t>, double> m;
      for (int64_t r = 0; r < a.rows; ++r)
        for (int64_t k = a.row_ptr[size_t(r)]; k < a.row_ptr[size_t(r) + 1]; ++k)
          m[{r, a.col_idx[size_t(k)]}] = a.val[size_t(k)];
      bool symmetric = true;
      for (const auto& [rc, v] : m) {
        auto t = m.find({rc.second, rc.first});
        symmetric = symmetric && t != m.end() && t->second == v;
      }
      CHECK(symmetric);
    }
    ++seen;
  }
  CHECK(seen > 0);
}
