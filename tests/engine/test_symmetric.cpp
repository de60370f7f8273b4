// Symmetric expansion (engine/symmetric.cpp): the full matrix against the reference's own and
// against the layout its rules fix (row order, positions), both triangles, junk in the ignored one,
// base 1, every index and value type, many threads against one, and the refusals.
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <string>
#include <vector>

#include "core/digest.hpp"
#include "core/parallel.hpp"
#include "engine/gen/generators.hpp"
#include "engine/reference.hpp"
#include "engine/symmetric.hpp"
#include "tests/test_matrices.hpp"
#include "tests/test_support.hpp"

namespace {

using namespace spmvjit;
using Csr64 = HostCsr<int64_t, double>;

// Rows rebuilt from their (col, value) lists, after `edit` changed them.
template <class F>
Csr64 edit_rows(const Csr64& a, F&& edit) {
  test::RowLists rows(static_cast<size_t>(a.rows));
  for (int64_t r = 0; r < a.rows; ++r) {
    for (int64_t k = a.row_ptr[size_t(r)]; k < a.row_ptr[size_t(r) + 1]; ++k)
      rows[size_t(r)].push_back({a.col_idx[size_t(k)], a.val[size_t(k)]});
    edit(r, rows[size_t(r)]);
  }
  return test::from_rows(a.rows, a.cols, rows);
}

// Each row reversed, and its first entry repeated at its end (a duplicate, unsorted).
Csr64 unsorted_with_duplicates(const Csr64& a) {
  return edit_rows(a, [](int64_t, auto& row) {
    std::reverse(row.begin(), row.end());
    if (!row.empty()) row.push_back({row.front().first, row.front().second + 0.125});
  });
}

// An arrow: dense row 0, dense column 0, the diagonal.
Csr64 arrow(int64_t n) {
  test::RowLists rows(static_cast<size_t>(n));
  for (int64_t c = 0; c < n; ++c) rows[0].push_back({c, 1.0 + double(c)});
  for (int64_t r = 1; r < n; ++r) rows[size_t(r)] = {{0, -double(r)}, {r, 0.5 * double(r)}};
  return test::from_rows(n, n, rows);
}

std::vector<std::pair<std::string, Csr64>> shapes() {
  std::vector<std::pair<std::string, Csr64>> m;
  m.push_back({"0x0", test::from_rows(0, 0, {})});
  m.push_back({"1x1", test::from_rows(1, 1, {{{0, 2.5}}})});
  m.push_back({"1x1 empty", test::from_rows(1, 1, {})});
  m.push_back(
      {"empty rows", test::from_rows(6, 6, {{}, {{0, 1.0}, {4, -2.0}}, {}, {{3, 0.5}, {5, 3.0}}, {}, {}})});
  m.push_back({"arrow", arrow(500)});
  // A general square matrix: for either triangle the other one is junk.
  const Csr64 random = generate_matrix("random:400:0:30", 5);
  m.push_back({"both triangles", random});
  m.push_back({"upper only", edit_rows(random, [](int64_t r, auto& row) {
                 std::erase_if(row, [r](const auto& e) { return e.first < r; });
               })});
  m.push_back({"no diagonal", edit_rows(random, [](int64_t r, auto& row) {
                 std::erase_if(row, [r](const auto& e) { return e.first == r; });
               })});
  m.push_back({"unsorted, duplicates", unsorted_with_duplicates(generate_matrix("diag:300:7", 6))});
  m.push_back({"unsorted random", unsorted_with_duplicates(random)});
  return m;
}

// The layout the rules fix: every entry and mirror, listed with a's rows in order and each row in
// a's order, then stably sorted by (row, col < row ? 0 : col == row ? 1 : 2). So row i is its
// entries of col < i, then col == i, then col > i; a's own in a's order, the mirrors in source row
// order. pos[2k + m]: where a's entry k (m = 0) or its mirror (m = 1) lands; -1 for none.
struct Layout {
  std::vector<int64_t> row_ptr, col, pos;
  std::vector<double> val;
};
template <class I, class V>
Layout expected_layout(const HostCsr<I, V>& a, bool upper) {
  struct Item {
    int64_t row, group, col, k, mirror;
  };
  std::vector<Item> items;
  auto put = [&](int64_t row, int64_t col, int64_t k, int64_t mirror) {
    items.push_back({row, col < row ? 0 : col == row ? 1 : 2, col, k, mirror});
  };
  for (int64_t r = 0; r < a.rows; ++r)
    for (int64_t k = a.row_ptr[size_t(r)]; k < a.row_ptr[size_t(r) + 1]; ++k) {
      const int64_t c = a.col_idx[size_t(k)];
      if (upper ? c < r : c > r) continue;
      put(r, c, k, 0);
      if (c != r) put(c, r, k, 1);
    }
  std::stable_sort(items.begin(), items.end(), [](const Item& x, const Item& y) {
    return x.row != y.row ? x.row < y.row : x.group < y.group;
  });
  Layout l;
  l.row_ptr.assign(size_t(a.rows) + 1, 0);
  l.pos.assign(2 * size_t(a.nnz()), -1);
  for (const Item& it : items) {
    l.pos[size_t(2 * it.k + it.mirror)] = int64_t(l.col.size());
    l.col.push_back(it.col);
    l.val.push_back(double(a.val[size_t(it.k)]));
    ++l.row_ptr[size_t(it.row) + 1];
  }
  for (int64_t r = 0; r < a.rows; ++r) l.row_ptr[size_t(r) + 1] += l.row_ptr[size_t(r)];
  return l;
}

// "" when the arrays are equal, else where they first differ: Catch would print whole arrays of
// millions of entries, which takes minutes.
inline std::string show(double v) { return std::to_string(v); }
inline std::string show(const Triplet& t) {
  return "(" + std::to_string(t.row) + ", " + std::to_string(t.col) + ", " + std::to_string(t.value) + ")";
}
template <class T, class U>
std::string first_difference(const std::vector<T>& got, const std::vector<U>& want) {
  if (got.size() != want.size())
    return std::to_string(got.size()) + " entries, expected " + std::to_string(want.size());
  for (size_t i = 0; i < got.size(); ++i)
    if (!(got[i] == want[i]))
      return "at " + std::to_string(i) + ": " + show(got[i]) + ", expected " + show(want[i]);
  return "";
}

template <class I, class V>
std::vector<Triplet> sorted_triplets(const CsrRef& m) {
  std::vector<Triplet> t;
  for (int64_t r = 0; r < m.rows; ++r)
    for (int64_t k = m.rp<I>()[r]; k < m.rp<I>()[r + 1]; ++k)
      t.push_back({r, int64_t(m.ci<I>()[k]), double(m.vals<V>()[k])});
  test::sort_triplets(t);
  return t;
}

// `a` with row_ptr and col_idx shifted to `base`, expanded.
template <class I, class V>
HostSymmetric expand(const HostCsr<I, V>& a, int base, bool upper) {
  std::vector<I> rp = a.row_ptr, ci = a.col_idx;
  for (auto& v : rp) v = I(v + base);
  for (auto& v : ci) v = I(v + base);
  CsrRef in = a.ref();
  in.row_ptr = rp.data();
  in.col_idx = ci.data();
  return expand_symmetric_on_host(in, base, upper);
}

template <class I, class V>
void check_expansion(const Csr64& m, int base, bool upper) {
  const HostCsr<I, V> a = m.template cast<I, V>();
  const HostSymmetric s = expand(a, base, upper);
  const HostCsr<I, V> want = reference_symmetric_full(a, upper);
  REQUIRE(s.ref.rows == a.rows);
  REQUIRE(s.ref.cols == a.rows);
  REQUIRE(s.ref.nnz == want.nnz());
  REQUIRE(s.ref.index == index_type_of<I>());
  REQUIRE(s.ref.value == value_type_of<V>());
  CHECK(first_difference(sorted_triplets<I, V>(s.ref), sorted_triplets<I, V>(want.ref())) == "");
  // The exact layout, positions included.
  const int64_t n = s.ref.nnz;
  const I* sp = s.ref.rp<I>();
  const I* sc = s.ref.ci<I>();
  const V* sv = s.ref.vals<V>();
  const I* pos = s.position.as<I>();
  const Layout l = expected_layout(a, upper);
  CHECK(first_difference(std::vector<int64_t>(sp, sp + a.rows + 1), l.row_ptr) == "");
  CHECK(first_difference(std::vector<int64_t>(sc, sc + n), l.col) == "");
  CHECK(first_difference(std::vector<double>(sv, sv + n), l.val) == "");
  CHECK(first_difference(std::vector<int64_t>(pos, pos + 2 * a.nnz()), l.pos) == "");
  // Positions by kind of entry: an ignored one has none, the diagonal no mirror, the rest both.
  int64_t wrong = 0;
  for (int64_t r = 0; r < a.rows; ++r)
    for (int64_t k = a.row_ptr[size_t(r)]; k < a.row_ptr[size_t(r) + 1]; ++k) {
      const int64_t c = a.col_idx[size_t(k)];
      const bool read = upper ? c >= r : c <= r;
      wrong += (pos[2 * k] >= 0) != read || (pos[2 * k + 1] >= 0) != (read && c != r);
    }
  CHECK(wrong == 0);
  // Sorted rows in, sorted rows out.
  bool sorted_in = true, sorted_out = true;
  for (int64_t r = 0; r < a.rows; ++r) {
    for (int64_t k = a.row_ptr[size_t(r)] + 1; k < a.row_ptr[size_t(r) + 1]; ++k)
      sorted_in &= a.col_idx[size_t(k) - 1] <= a.col_idx[size_t(k)];
    for (int64_t k = sp[r] + 1; k < sp[r + 1]; ++k) sorted_out &= sc[k - 1] <= sc[k];
  }
  if (sorted_in) CHECK(sorted_out);
  // New values through the positions: as expanding the matrix with those values.
  HostCsr<I, V> fresh = a;
  for (auto& v : fresh.val) v = V(v * V(0.5) - V(0.25));
  const HostSymmetric again = expand(fresh, base, upper);
  std::vector<V> to(size_t(n), std::numeric_limits<V>::quiet_NaN());
  expand_symmetric_values(fresh.val.data(), to.data(), pos, a.nnz(), index_type_of<I>(), value_type_of<V>());
  const V* av = again.ref.vals<V>();
  CHECK(first_difference(to, std::vector<V>(av, av + n)) == "");
  if (n) CHECK(first_difference(to, std::vector<V>(sv, sv + n)) != "");
}

template <class I, class V>
void check_all_bases_and_triangles(const Csr64& m) {
  for (int base : {0, 1})
    for (bool upper : {true, false}) {
      INFO("base " << base << (upper ? ", upper" : ", lower"));
      check_expansion<I, V>(m, base, upper);
    }
}

// The big case: over 2^18 nonzeros per thread, so every thread the process has takes a part.
Csr64 big() { return generate_matrix("random:200000:2:12", 11); }

// A digest of the expansion of big() (int32, double, base 1, upper), and the plan threads it ran on.
std::string big_digest() {
  const HostCsr<int32_t, double> a = big().cast<int32_t, double>();
  const HostSymmetric s = expand(a, 1, true);
  std::string d;
  for (const AlignedBuffer* b : {&s.row_ptr, &s.col_idx, &s.values, &s.position})
    d += digest_hex(b->data(), b->bytes());
  return digest_hex(d) + " threads " + std::to_string(plan_threads(a.nnz() + a.rows));
}

}  // namespace

TEST_CASE("symmetric: the expansion matches the reference, layout and positions included", "[symmetric]") {
  for (const auto& [name, m] : shapes()) {
    INFO(name);
    check_all_bases_and_triangles<int32_t, float>(m);
    check_all_bases_and_triangles<int32_t, double>(m);
    check_all_bases_and_triangles<int64_t, float>(m);
    check_all_bases_and_triangles<int64_t, double>(m);
  }
}

TEST_CASE("symmetric: a small matrix by hand, junk in the ignored triangle", "[symmetric]") {
  // The entries 100, 200, 300 are below the diagonal, 2 and 4 above it.
  const Csr64 m = test::from_rows(4, 4,
                                  {{{0, 1.0}, {2, 2.0}},
                                   {{0, 100.0}, {1, 3.0}, {3, 4.0}},
                                   {{1, 200.0}, {2, 5.0}},
                                   {{0, 300.0}, {3, 6.0}}});
  const HostSymmetric u = expand(m, 0, true);
  const int64_t* p = u.ref.rp<int64_t>();
  const int64_t* c = u.ref.ci<int64_t>();
  const double* v = u.ref.vals<double>();
  const int64_t* pos = u.position.as<int64_t>();
  REQUIRE(u.ref.nnz == 8);
  CHECK(std::vector<int64_t>(p, p + 5) == std::vector<int64_t>{0, 2, 4, 6, 8});
  CHECK(std::vector<int64_t>(c, c + 8) == std::vector<int64_t>{0, 2, 1, 3, 0, 2, 1, 3});
  CHECK(std::vector<double>(v, v + 8) == std::vector<double>{1, 2, 3, 4, 2, 5, 4, 6});
  CHECK(std::vector<int64_t>(pos, pos + 18) ==
        std::vector<int64_t>{0, -1, 1, 4, -1, -1, 2, -1, 3, 6, -1, -1, 5, -1, -1, -1, 7, -1});
  const HostSymmetric l = expand(m, 0, false);
  p = l.ref.rp<int64_t>();
  c = l.ref.ci<int64_t>();
  v = l.ref.vals<double>();
  pos = l.position.as<int64_t>();
  REQUIRE(l.ref.nnz == 10);
  CHECK(std::vector<int64_t>(p, p + 5) == std::vector<int64_t>{0, 3, 6, 8, 10});
  CHECK(std::vector<int64_t>(c, c + 10) == std::vector<int64_t>{0, 1, 3, 0, 1, 2, 1, 2, 0, 3});
  CHECK(std::vector<double>(v, v + 10) == std::vector<double>{1, 100, 300, 100, 3, 200, 200, 5, 300, 6});
  CHECK(std::vector<int64_t>(pos, pos + 18) ==
        std::vector<int64_t>{0, -1, -1, -1, 3, 1, 4, -1, -1, -1, 6, 5, 7, -1, 8, 2, 9, -1});
}

TEST_CASE("symmetric: a big random matrix, on several threads", "[symmetric]") {
  const Csr64 m = big();
  INFO("plan threads " << plan_threads(m.nnz() + m.rows));
  SECTION("upper, int32, double, base 1") { check_expansion<int32_t, double>(m, 1, true); }
  SECTION("lower, int64, float, base 0") { check_expansion<int64_t, float>(m, 0, false); }
}

TEST_CASE("symmetric: the layout does not depend on the thread count", "[symmetric]") {
  const std::string self = std::filesystem::read_symlink("/proc/self/exe").string();
  const std::string here = big_digest();
  for (int threads : {1, 2, 5}) {
    std::string out;
    const int rc = test::run_command("env -u OMP_NUM_THREADS SPMVJIT_NUM_THREADS=" + std::to_string(threads) +
                                         " '" + self + "' '[.symmetric-digest]'",
                                     &out);
    INFO(out);
    REQUIRE(rc == 0);
    const std::string digest = here.substr(0, here.find(' '));
    CHECK(out.find("digest " + digest + " threads " + std::to_string(threads) + "\n") != std::string::npos);
  }
}

TEST_CASE("symmetric: the digest of the big expansion (run by the thread count test)",
          "[.symmetric-digest]") {
  std::printf("digest %s\n", big_digest().c_str());
  std::fflush(stdout);
}

TEST_CASE("symmetric: a matrix that is not square is refused", "[symmetric]") {
  const Csr64 m = test::from_rows(3, 4, {{{0, 1.0}}, {{3, 2.0}}});
  try {
    expand(m, 0, true);
    FAIL("a 3 x 4 matrix was expanded");
  } catch (const Error& e) {
    CHECK(e.status() == SPMV_STATUS_INVALID_VALUE);
    CHECK(std::string(e.what()).find("3 x 4") != std::string::npos);
  }
}

TEST_CASE("symmetric: a full matrix past int32's nonzeros is refused before it is allocated", "[symmetric]") {
  // 2^30 strictly lower entries (columns 0..1023 over and over, in rows 1024 and up): with their
  // mirrors, 2^31 > INT32_MAX. Their column indices (and values) are 4 GiB of address space made of
  // one 8 MiB memfd mapped again and again, prefaulted. The count reads the column indices only, and
  // the refusal must come before A's arrays (8 GiB of positions alone) are allocated.
  constexpr int64_t kRows = 1 << 16, kNnz = int64_t(1) << 30, kCols = 1024;
  const size_t bytes = size_t(kNnz) * 4, chunk = size_t(8) << 20;
  std::vector<int32_t> pattern(chunk / 4);
  for (size_t i = 0; i < pattern.size(); ++i) pattern[i] = int32_t(i % kCols);
  const int fd = ::memfd_create("spmvjit-columns", 0);
  char* cols = static_cast<char*>(::mmap(nullptr, bytes, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
  bool mapped = fd >= 0 && cols != MAP_FAILED && ::pwrite(fd, pattern.data(), chunk, 0) == ssize_t(chunk);
  for (size_t at = 0; mapped && at < bytes; at += chunk)
    mapped = ::mmap(cols + at, chunk, PROT_READ, MAP_SHARED | MAP_FIXED | MAP_POPULATE, fd, 0) != MAP_FAILED;
  if (fd >= 0) ::close(fd);
  if (!mapped) {
    if (cols != MAP_FAILED) ::munmap(cols, bytes);
    SPMVJIT_SKIP("no 4 GiB of address space for the column indices");
  }
  std::vector<int32_t> rp(size_t(kRows) + 1, 0);
  for (int64_t r = kCols; r < kRows; ++r)
    rp[size_t(r) + 1] = int32_t(kNnz * (r - kCols + 1) / (kRows - kCols));
  const CsrRef a{kRows, kRows, kNnz, IndexType::i32, ValueType::f32, rp.data(), cols, cols};
  std::string why = "no refusal";
  spmv_status_t status = SPMV_STATUS_SUCCESS;
  try {
    expand_symmetric_on_host(a, 0, false);
  } catch (const Error& e) {
    status = e.status();
    why = e.what();
  }
  ::munmap(cols, bytes);
  INFO(why);
  CHECK(status == SPMV_STATUS_UNSUPPORTED);
  CHECK(why.find("2147483648") != std::string::npos);
  CHECK(why.find("int64") != std::string::npos);
}
