// Tests of the Matrix Market reader's complex values: the four symmetries, array files, malformed
// entries with their line numbers, and which value types each kind of file reads into.
#include <catch2/catch.hpp>
#include <complex>
#include <map>
#include <string>
#include <utility>

#include "engine/io/matrix_market.hpp"

namespace {

using spmvjit::HostCsr;
using C = std::complex<double>;
using Cplx = HostCsr<int64_t, C>;
using Entries = std::map<std::pair<int64_t, int64_t>, C>;  // one-based (row, col) -> value

std::string data_file(const std::string& name) { return std::string(SPMVJIT_TEST_DATA_DIR) + "/mtx/" + name; }

Entries entries_of(const Cplx& a) {
  Entries e;
  for (int64_t r = 0; r < a.rows; ++r)
    for (int64_t k = a.row_ptr[size_t(r)]; k < a.row_ptr[size_t(r) + 1]; ++k) {
      if (k > a.row_ptr[size_t(r)]) REQUIRE(a.col_idx[size_t(k) - 1] < a.col_idx[size_t(k)]);  // sorted
      e[{r + 1, a.col_idx[size_t(k)] + 1}] = a.val[size_t(k)];
    }
  return e;
}

}  // namespace

TEST_CASE("complex Matrix Market files: general, symmetric, hermitian, skew", "[io][mtx][complex]") {
  spmvjit::MatrixMarketInfo info;
  SECTION("general: two numbers per entry") {
    const Cplx a = spmvjit::read_matrix_market_complex(data_file("complex_general.mtx"), {}, &info);
    CHECK(a.rows == 2);
    CHECK(a.cols == 3);
    CHECK(info.complex);
    CHECK(!info.symmetric);
    CHECK(!info.hermitian);
    CHECK(entries_of(a) ==
          Entries{{{1, 1}, C(1.5, -2)}, {{1, 3}, C(0, 1)}, {{2, 1}, C(-1, 0)}, {{2, 2}, C(3, 0.25)}});
  }
  SECTION("symmetric: mirrored as it is") {
    const Cplx a = spmvjit::read_matrix_market_complex(data_file("complex_symmetric.mtx"), {}, &info);
    CHECK(info.symmetric);
    CHECK(!info.hermitian);
    CHECK(entries_of(a) == Entries{{{1, 1}, C(2, 1)},
                                   {{2, 1}, C(1, -1)},
                                   {{1, 2}, C(1, -1)},
                                   {{3, 2}, C(0.5, 2)},
                                   {{2, 3}, C(0.5, 2)}});
  }
  SECTION("hermitian: mirrored conjugated") {
    const Cplx a = spmvjit::read_matrix_market_complex(data_file("complex_hermitian.mtx"), {}, &info);
    CHECK(info.hermitian);
    CHECK(!info.symmetric);
    CHECK(entries_of(a) == Entries{{{1, 1}, C(2, 0)},
                                   {{2, 1}, C(1, -1)},
                                   {{1, 2}, C(1, 1)},
                                   {{3, 2}, C(0.5, 2)},
                                   {{2, 3}, C(0.5, -2)},
                                   {{3, 3}, C(-4, 0)}});
  }
  SECTION("skew-symmetric: mirrored negated") {
    const Cplx a = spmvjit::read_matrix_market_complex(data_file("complex_skew.mtx"), {}, &info);
    CHECK(entries_of(a) ==
          Entries{{{2, 1}, C(1, -1)}, {{1, 2}, C(-1, 1)}, {{3, 1}, C(0.5, 2)}, {{1, 3}, C(-0.5, -2)}});
  }
  SECTION("array hermitian: the lower triangle, column by column, zeros dropped") {
    const Cplx a = spmvjit::read_matrix_market_complex(data_file("complex_array_hermitian.mtx"), {}, &info);
    CHECK(info.hermitian);
    CHECK(entries_of(a) ==
          Entries{{{1, 1}, C(1, 0)}, {{2, 1}, C(2, 3)}, {{1, 2}, C(2, -3)}, {{2, 2}, C(5, 0)}});
  }
}

TEST_CASE("malformed complex files name the line and the problem", "[io][mtx][complex]") {
  struct Bad {
    const char* file;
    int line;
    const char* fragment;
  };
  const Bad cases[] = {
      {"complex_missing_imag.mtx", 4, "missing imaginary part"},
      {"complex_hermitian_diagonal.mtx", 4,
       "diagonal entry (2, 2) of a hermitian matrix has imaginary part 0.5"},
      {"complex_array_hermitian_diagonal.mtx", 3,
       "diagonal entry (1, 1) of a hermitian matrix has imaginary part 0.5"},
      {"complex_skew_diagonal.mtx", 4, "diagonal entry (1, 1) in a skew-symmetric matrix"},
      {"complex_trailing.mtx", 3, "unexpected '3' after the entry"},
      {"complex_bad_imag.mtx", 3, "invalid value 'i2'"},
  };
  for (const Bad& c : cases) {
    INFO(c.file);
    const std::string path = data_file(c.file);
    try {
      spmvjit::read_matrix_market_complex(path);
      FAIL("no error for " << c.file);
    } catch (const spmvjit::Error& e) {
      const std::string msg = e.what();
      INFO(msg);
      CHECK(e.status() == SPMV_STATUS_PARSE_ERROR);
      CHECK(msg.rfind(path + ":" + std::to_string(c.line) + ": ", 0) == 0);
      CHECK(msg.find(c.fragment) != std::string::npos);
    }
  }
}

TEST_CASE("complex and real files into complex and real values", "[io][mtx][complex]") {
  // A complex file into real values is refused, naming the way to read it.
  try {
    spmvjit::read_matrix_market(data_file("complex_general.mtx"));
    FAIL("a complex file read into real values");
  } catch (const spmvjit::Error& e) {
    CHECK(e.status() == SPMV_STATUS_UNSUPPORTED);
    CHECK_THAT(e.what(),
               Catch::Contains("complex_general.mtx:1: a complex matrix cannot be read into real values"));
  }
  // A real file into complex values: the same entries, imaginary parts 0 (symmetric files mirrored).
  spmvjit::MatrixMarketInfo info;
  const Cplx c = spmvjit::read_matrix_market_complex(data_file("symmetric.mtx"), {}, &info);
  const HostCsr<int64_t, double> r = spmvjit::read_matrix_market(data_file("symmetric.mtx"));
  CHECK(!info.complex);
  CHECK(info.symmetric);
  REQUIRE(c.nnz() == r.nnz());
  CHECK(c.row_ptr == r.row_ptr);
  CHECK(c.col_idx == r.col_idx);
  for (size_t k = 0; k < r.val.size(); ++k) CHECK(c.val[k] == C(r.val[k], 0));
  // A real hermitian file is a symmetric one, read either way.
  const Cplx h = spmvjit::read_matrix_market_complex(data_file("hermitian_real.mtx"), {}, &info);
  CHECK(info.symmetric);
  CHECK(!info.hermitian);
  CHECK(h.nnz() == spmvjit::read_matrix_market(data_file("hermitian_real.mtx")).nnz());
}

TEST_CASE("complex duplicates are summed or refused like real ones", "[io][mtx][complex]") {
  const std::string text =
      "%%MatrixMarket matrix coordinate complex general\n2 2 3\n1 1 1 2\n2 2 1 0\n1 1 0.5 -1\n";
  const Cplx a = spmvjit::parse_matrix_market_complex(text, "dup");
  CHECK(entries_of(a) == Entries{{{1, 1}, C(1.5, 1)}, {{2, 2}, C(1, 0)}});
  spmvjit::ReadOptions o;
  o.duplicates = spmvjit::DuplicatePolicy::error;
  try {
    spmvjit::parse_matrix_market_complex(text, "dup", o);
    FAIL("duplicate accepted");
  } catch (const spmvjit::Error& e) {
    CHECK(e.status() == SPMV_STATUS_PARSE_ERROR);
    CHECK_THAT(e.what(), Catch::StartsWith("dup:5: duplicate entry (1, 1)"));
  }
}
