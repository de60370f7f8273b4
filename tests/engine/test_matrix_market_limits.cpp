// Tests of the Matrix Market reader's duplicate policy and resource limits (refusals first).
#include <sys/stat.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <string>
#include <vector>

#include "../test_support.hpp"
#include "core/log.hpp"
#include "engine/io/matrix_market.hpp"

namespace spmvjit {
namespace {

using Csr = HostCsr<int64_t, double>;

// Warnings logged while alive.
class Warnings {
 public:
  Warnings() { configure_logging(SPMV_LOG_WARN, &Warnings::callback, this); }
  ~Warnings() { configure_logging(SPMV_LOG_WARN, nullptr, nullptr); }
  std::vector<std::string> messages;

 private:
  static void callback(int level, const char* m, void* self) {
    if (level >= SPMV_LOG_WARN) static_cast<Warnings*>(self)->messages.push_back(m);
  }
};

// The Error parse_matrix_market throws for `text` (fails the test when it reads).
Error parse_error(const std::string& text, const ReadOptions& options = {}) {
  try {
    parse_matrix_market(text, "t.mtx", options);
  } catch (const Error& e) {
    return e;
  }
  FAIL("no error for:\n" << text);
  return Error(SPMV_STATUS_SUCCESS, "");
}

Error read_error(const std::string& path, const ReadOptions& options = {}) {
  try {
    read_matrix_market(path, options);
  } catch (const Error& e) {
    return e;
  }
  FAIL("no error for " << path);
  return Error(SPMV_STATUS_SUCCESS, "");
}

const std::string kGeneral = "%%MatrixMarket matrix coordinate real general\n";
const std::string kSymmetric = "%%MatrixMarket matrix coordinate real symmetric\n";

}  // namespace

TEST_CASE("duplicates are summed with a warning naming the count and the first line", "[io][mtx]") {
  const std::string text =
      kGeneral + "3 3 6\n1 1 1.0\n% a comment\n2 3 2.0\n\n1 1 0.5\n3 1 1\n2 3 -2\n1 1 4\n";
  Warnings w;
  const Csr a = parse_matrix_market(text, "t.mtx");
  CHECK(a.nnz() == 3);
  CHECK(a.val == std::vector<double>{5.5, 0.0, 1.0});
  REQUIRE(w.messages.size() == 1);
  CHECK(w.messages[0] ==
        "t.mtx: 3 duplicate entries summed; the first, line 7: entry (1, 1) repeats (1, 1) from line 3");

  // No duplicates, no warning: also when rows arrive unsorted.
  w.messages.clear();
  parse_matrix_market(kGeneral + "2 2 3\n2 2 1\n1 2 1\n2 1 1\n", "t.mtx");
  CHECK(w.messages.empty());
}

TEST_CASE("duplicates can be refused, naming both lines", "[io][mtx]") {
  const ReadOptions refuse{DuplicatePolicy::error};
  const std::string text = kGeneral + "3 3 5\n1 1 1.0\n2 3 2.0\n% comment\n3 1 1\n2 3 -2\n1 1 4\n";
  const Error e = parse_error(text, refuse);
  CHECK(e.status() == SPMV_STATUS_PARSE_ERROR);
  CHECK(std::string(e.what()) ==
        "t.mtx:7: duplicate entry (2, 3) repeats (2, 3) from line 4; 2 duplicates in all (duplicates are "
        "refused)");
  // Without duplicates the policy changes nothing.
  CHECK(parse_matrix_market(kGeneral + "2 2 2\n1 1 1\n2 2 1\n", "t.mtx", refuse).nnz() == 2);
}

TEST_CASE("a symmetric file with both (i, j) and (j, i) holds a duplicate", "[io][mtx]") {
  // One triangle is the format; both triangles double the off-diagonal values when summed.
  const std::string text = kSymmetric + "3 3 4\n1 1 1\n2 1 0.5\n3 3 1\n1 2 0.25\n";
  {
    Warnings w;
    const Csr a = parse_matrix_market(text, "s.mtx");
    CHECK(a.val == std::vector<double>{1, 0.75, 0.75, 1});
    REQUIRE(w.messages.size() == 1);
    CHECK(w.messages[0] ==
          "s.mtx: 1 duplicate entry summed; the first, line 6: entry (1, 2) mirrors (2, 1) from line 4 (a "
          "symmetric file holds one triangle)");
  }
  const Error e = parse_error(text, ReadOptions{DuplicatePolicy::error});
  CHECK(std::string(e.what()).rfind("t.mtx:6: duplicate entry (1, 2) mirrors (2, 1) from line 4", 0) == 0);
  // A repeated diagonal entry of a symmetric file is a plain repeat; an upper-triangle entry
  // alone is mirrored as before, no duplicate.
  CHECK(std::string(
            parse_error(kSymmetric + "2 2 2\n2 2 1\n2 2 1\n", ReadOptions{DuplicatePolicy::error}).what())
            .rfind("t.mtx:4: duplicate entry (2, 2) repeats (2, 2) from line 3", 0) == 0);
  CHECK(parse_matrix_market(kSymmetric + "2 2 1\n1 2 3\n", "t.mtx", ReadOptions{DuplicatePolicy::error})
            .nnz() == 2);
  // Skew-symmetric: (3, 1) and (1, 3) are one position too.
  const std::string skew = "%%MatrixMarket matrix coordinate real skew-symmetric\n3 3 2\n3 1 1\n1 3 1\n";
  CHECK(std::string(parse_error(skew, ReadOptions{DuplicatePolicy::error}).what())
            .rfind("t.mtx:4: duplicate", 0) == 0);
}

TEST_CASE("declared sizes beyond the memory limit are refused at the size line", "[io][mtx]") {
  ReadOptions small;
  small.memory_limit = uint64_t(1) << 20;
  // 200M empty rows: 1.5 GiB of row_ptr from a 60-byte file.
  const Error e = parse_error(kGeneral + "% rows only\n200000000 1 0\n", small);
  CHECK(e.status() == SPMV_STATUS_OUT_OF_MEMORY);
  CHECK(
      std::string(e.what()) ==
      "t.mtx:3: reading this 200000000 x 1 matrix with 0 entries needs about 1.5 GiB, more than the reader's "
      "memory limit of 1.0 MiB");
  // A lying entry count costs nothing: entries are bounded by the text that follows, and the
  // file ends where it ends.
  const Error lie = parse_error(kGeneral + "10 10 2000000000\n1 1 1\n", small);
  CHECK(lie.status() == SPMV_STATUS_PARSE_ERROR);
  CHECK(std::string(lie.what()) == "t.mtx:3: unexpected end of file after 1 of 2000000000 entries");
  // Array files: rows x cols values, bounded by the text too.
  CHECK(parse_error("%%MatrixMarket matrix array real general\n100000 100000\n1\n", small).status() ==
        SPMV_STATUS_PARSE_ERROR);
  CHECK(parse_error("%%MatrixMarket matrix array real general\n1000000000 1\n", small).status() ==
        SPMV_STATUS_OUT_OF_MEMORY);
  // The default limit is the machine's memory: 2^34 rows need 128 GiB of row_ptr.
  const uint64_t need = (uint64_t(1) << 34) * 8;
  if (default_read_memory_limit() < need) {
    const auto t0 = std::chrono::steady_clock::now();
    const Error d = parse_error(kGeneral + "17179869184 1 0\n");
    CHECK(d.status() == SPMV_STATUS_OUT_OF_MEMORY);
    CHECK(std::string(d.what()).find("(physical memory, or ulimit -v / -d when lower)") != std::string::npos);
    CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(1));
  }
  CHECK(default_read_memory_limit() > (uint64_t(1) << 28));
}

TEST_CASE("an array file of 0 rows and 2^34 columns reads at once", "[io][mtx]") {
  const auto t0 = std::chrono::steady_clock::now();
  const Csr a = parse_matrix_market("%%MatrixMarket matrix array real general\n0 17179869184\n", "t.mtx");
  CHECK(a.rows == 0);
  CHECK(a.cols == (int64_t(1) << 34));
  const Csr z = parse_matrix_market("%%MatrixMarket matrix array real skew-symmetric\n1 1\n", "t.mtx");
  CHECK(z.nnz() == 0);
  CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(2));  // was 30 s
  // Symmetric: n (n + 1) / 2 values, the text ends long before.
  CHECK(
      std::string(parse_error("%%MatrixMarket matrix array real symmetric\n131072 131072\n1\n2\n").what()) ==
      "t.mtx:4: unexpected end of file after 2 of 8590000128 entries");
}

TEST_CASE("the reader refuses what is not a regular file", "[io][mtx]") {
  test::TempDir dir;
  const std::string fifo = dir.path() + "/pipe.mtx";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);  // nobody writes: opening must not wait for one
  const std::pair<std::string, std::string> cases[] = {
      {"/dev/zero", "a character device"}, {dir.path(), "a directory"}, {fifo, "a FIFO or pipe"}};
  for (const auto& [path, kind] : cases) {
    const Error e = read_error(path);
    CHECK(e.status() == SPMV_STATUS_IO_ERROR);
    CHECK(std::string(e.what()) ==
          "cannot read '" + path + "': " + kind + ", not a regular file (write the matrix to a file first)");
  }
}

}  // namespace spmvjit
