// RowSample: evenly spread aligned groups of rows, columns shifted with their rows (offsets and
// alignments kept), bounded size, distinct offsets counted with an early exit.
#include <catch2/catch.hpp>
#include <set>

#include "engine/gen/generators.hpp"
#include "engine/sample.hpp"

using namespace spmvjit;

TEST_CASE("the row sample keeps every sampled row's offsets and alignment", "[engine]") {
  for (const char* spec :
       {"poisson2d:300", "random:100000:1:40", "blocks:50000:3:4", "random:100:1:5", "short:1000:2"}) {
    INFO(spec);
    const auto a = generate_matrix(spec, 3);
    const auto smp = sample_rows(a.ref());
    const int64_t groups = (a.rows + RowSample::kGroupRows - 1) / RowSample::kGroupRows;
    CHECK(smp->matrix_groups == groups);
    CHECK(smp->groups >= 1);
    CHECK(smp->groups <= std::min(groups, RowSample::kMaxGroups));
    CHECK(int64_t(smp->col_idx.size()) <= 2 * RowSample::kMaxEntries);
    int64_t local = 0;
    for (int64_t g = 0; g < smp->groups; ++g) {
      const int64_t r0 = sample_group_start(g, smp->groups, smp->matrix_groups);
      CHECK(r0 % RowSample::kGroupRows == 0);
      for (int64_t r = r0; r < std::min(a.rows, r0 + RowSample::kGroupRows); ++r, ++local) {
        const int64_t b = a.row_ptr[size_t(r)], len = a.row_ptr[size_t(r) + 1] - b;
        REQUIRE(smp->row_ptr[size_t(local) + 1] - smp->row_ptr[size_t(local)] == len);
        for (int64_t k = 0; k < len; ++k) {
          const int64_t c = smp->col_idx[size_t(smp->row_ptr[size_t(local)] + k)];
          CHECK(c - local == a.col_idx[size_t(b + k)] - r);                // same offset
          CHECK((c % 192 + 192) % 192 == a.col_idx[size_t(b + k)] % 192);  // same alignment
          CHECK(smp->ref().vals<double>()[smp->row_ptr[size_t(local)] + k] == a.val[size_t(b + k)]);
        }
      }
    }
    CHECK(local == smp->rows);
  }
}

TEST_CASE("a sample of one group of long rows keeps whole slices of its first rows", "[engine]") {
  // dense:1000: one group of 192 rows would be 192,000 entries; 66 rows hold kLongEntries.
  const auto dense = generate_matrix("dense:1000", 2);
  const auto smp = sample_rows(dense.ref());
  REQUIRE(smp->groups == 1);
  CHECK(smp->rows == 2 * RowSample::kLongRows);
  CHECK(int64_t(smp->col_idx.size()) == smp->rows * 1000);
  CHECK(smp->row_ptr[size_t(smp->rows)] == smp->rows * 1000);
  const int64_t r0 = sample_group_start(0, smp->groups, smp->matrix_groups);
  for (int64_t r = 0; r < smp->rows; ++r)
    for (int64_t k = 0; k < 1000; k += 97)
      REQUIRE(smp->col_idx[size_t(r * 1000 + k)] - r ==
              dense.col_idx[size_t((r0 + r) * 1000 + k)] - (r0 + r));
  // A group at the cap or under it stays whole, and so do samples of several groups.
  CHECK(sample_rows(generate_matrix("dense:340", 2).ref())->rows == 192);
  CHECK(sample_kept_rows(2, 192, [](int64_t j) { return j * 5000; }) == 192);
  CHECK(sample_kept_rows(1, 192, [](int64_t j) { return j * 5000; }) == 64);
  CHECK(sample_kept_rows(1, 100, [](int64_t j) { return j * 100000; }) == 64);
  CHECK(sample_kept_rows(1, 40, [](int64_t j) { return j * 100000; }) == 40);
}

TEST_CASE("distinct offsets of the sample stop counting past the cap", "[engine]") {
  const auto band = sample_rows(generate_matrix("poisson2d:200", 1).ref());
  CHECK(band->distinct_offsets(128) == 5);
  const auto scattered = sample_rows(generate_matrix("random:20000:5:10", 1).ref());
  CHECK(scattered->distinct_offsets(128) == 129);
  std::set<int64_t> offs;
  for (int64_t r = 0; r < scattered->rows; ++r)
    for (int64_t k = scattered->row_ptr[size_t(r)]; k < scattered->row_ptr[size_t(r) + 1]; ++k)
      offs.insert(scattered->col_idx[size_t(k)] - r);
  CHECK(scattered->distinct_offsets(int64_t(offs.size()) + 10) == int64_t(offs.size()));
}

TEST_CASE("the row sample knows whether its rows ascend", "[engine]") {
  auto a = generate_matrix("random:200000:2:9", 5);
  CHECK(sample_rows(a.ref())->rows_ascending);
  // One row out of order: whether the sample says so depends on whether it sampled that row.
  const auto first = sample_rows(a.ref());
  const int64_t in = sample_group_start(3, first->groups, first->matrix_groups) + 5;  // sampled
  const int64_t out = sample_group_start(3, first->groups, first->matrix_groups) + RowSample::kGroupRows + 5;
  int seen[2] = {0, 0};
  for (int64_t r : {in, out, int64_t(0), a.rows - 1}) {
    auto b = a;
    const int64_t k = b.row_ptr[size_t(r)];
    std::swap(b.col_idx[size_t(k)], b.col_idx[size_t(k) + 1]);
    const auto smp = sample_rows(b.ref());
    bool sampled = false;
    for (int64_t g = 0; g < smp->groups; ++g) {
      const int64_t r0 = sample_group_start(g, smp->groups, smp->matrix_groups);
      sampled |= r >= r0 && r < r0 + RowSample::kGroupRows;
    }
    INFO("row " << r << (sampled ? " sampled" : " not sampled"));
    CHECK(smp->rows_ascending == !sampled);
    ++seen[sampled];
  }
  CHECK(seen[0] > 0);  // both cases happened
  CHECK(seen[1] > 0);
}

TEST_CASE("the row sample knows whether its rows ascend strictly", "[engine]") {
  auto a = generate_matrix("random:200000:2:9", 5);
  CHECK(sample_rows(a.ref())->rows_strict);
  // A sampled row repeating a column still ascends, not strictly; one out of order does neither.
  const auto first = sample_rows(a.ref());
  int64_t r = sample_group_start(3, first->groups, first->matrix_groups);
  while (a.row_ptr[size_t(r) + 1] - a.row_ptr[size_t(r)] < 3) ++r;  // a sampled row of 3 or more
  REQUIRE(r < sample_group_start(3, first->groups, first->matrix_groups) + RowSample::kGroupRows);
  auto b = a;
  const int64_t k = b.row_ptr[size_t(r)];
  b.col_idx[size_t(k) + 1] = b.col_idx[size_t(k)];
  const auto repeated = sample_rows(b.ref());
  CHECK(repeated->rows_ascending);
  CHECK_FALSE(repeated->rows_strict);
  std::swap(b.col_idx[size_t(k)], b.col_idx[size_t(k) + 2]);
  const auto unsorted = sample_rows(b.ref());
  CHECK_FALSE(unsorted->rows_ascending);
  CHECK_FALSE(unsorted->rows_strict);
}
