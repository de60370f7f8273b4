// RowSample of a host CSR: evenly spread groups of kGroupRows rows, columns shifted with the rows.
#include "engine/sample.hpp"

#include <algorithm>
#include <climits>
#include <cstring>
#include <vector>

namespace spmvjit {
#include "templates/contract/device_plan.h"

static_assert(DP_SAMPLE_GROUP_ROWS == RowSample::kGroupRows, "sample groups differ");

int64_t sample_group_start(int64_t g, int64_t groups, int64_t matrix_groups) {
  return dp_sample_group_start(g, groups, matrix_groups);
}

int64_t sample_groups(int64_t rows, int64_t nnz) {
  const int64_t matrix_groups = (rows + RowSample::kGroupRows - 1) / RowSample::kGroupRows;
  // Enough groups for a few thousand rows, few enough that the entries stay under kMaxEntries.
  const double per_group = double(nnz) / double(std::max<int64_t>(matrix_groups, 1));
  const int64_t by_entries = int64_t(double(RowSample::kMaxEntries) / std::max(per_group, 1.0));
  return std::clamp<int64_t>(std::min(RowSample::kMaxGroups, by_entries), std::min<int64_t>(1, matrix_groups),
                             matrix_groups);
}

int64_t RowSample::distinct_offsets(int64_t cap, int64_t first_rows) const {
  // Open addressing over a table at most a quarter full: short probes, early exit. The table is
  // the thread's, reused (a fresh one costs a page fault per 4 KiB on every plan); it starts at
  // 256 slots and doubles as offsets come, up to four times the cap (no more distinct offsets than
  // entries), so a banded matrix (a few diagonals) clears 2 KiB instead of up to 256 KiB.
  const int64_t last_row = std::min(rows, first_rows);
  cap = std::min(cap, last_row > 0 ? row_ptr[size_t(last_row)] : 0);
  size_t limit = 4;
  while (limit < size_t(4 * (cap + 1))) limit <<= 1;
  size_t size = std::min<size_t>(limit, 256);
  thread_local HostVector<int64_t> table;
  table.assign(size, INT64_MIN);
  size_t mask = size - 1;
  auto slot = [&](int64_t off) {
    size_t h = size_t(uint64_t(off) * 0x9e3779b97f4a7c15ULL >> 17) & mask;
    while (table[h] != INT64_MIN && table[h] != off) h = (h + 1) & mask;
    return h;
  };
  int64_t distinct = 0;
  for (int64_t r = 0; r < last_row; ++r) {
    const int64_t b = row_ptr[size_t(r)], e = row_ptr[size_t(r) + 1];
    // Banded rows repeat the previous row's offsets position by position: those are known.
    const int64_t pb = r ? row_ptr[size_t(r) - 1] : b, plen = b - pb;
    for (int64_t k = b; k < e; ++k) {
      const int64_t off = col_idx[size_t(k)] - r;
      if (k - b < plen && col_idx[size_t(pb + k - b)] - (r - 1) == off) continue;
      const size_t h = slot(off);
      if (table[h] == off) continue;
      table[h] = off;
      if (++distinct > cap) return distinct;
      if (size_t(distinct) * 4 > size && size < limit) {  // a quarter full: twice the slots
        std::vector<int64_t> kept;
        for (int64_t t : table)
          if (t != INT64_MIN) kept.push_back(t);
        size *= 2;
        mask = size - 1;
        table.assign(size, INT64_MIN);
        for (int64_t t : kept) table[slot(t)] = t;
      }
    }
  }
  return distinct;
}

void mark_ascending(RowSample& s) {
  s.rows_ascending = s.rows_strict = true;
  const int64_t* ci = s.col_idx.data();
  for (int64_t r = 0; r < s.rows && s.rows_ascending; ++r) {
    bool strict = true;
    for (int64_t k = s.row_ptr[size_t(r)] + 1; k < s.row_ptr[size_t(r) + 1]; ++k) {
      if (ci[k] < ci[k - 1]) {
        s.rows_ascending = false;
        break;
      }
      strict &= ci[k] != ci[k - 1];
    }
    s.rows_strict &= strict;
  }
  s.rows_strict &= s.rows_ascending;
}

std::shared_ptr<const RowSample> sample_rows(const CsrRef& a) {
  auto s = std::make_shared<RowSample>();
  s->cols = a.cols;
  s->value = a.value;
  s->matrix_groups = (a.rows + RowSample::kGroupRows - 1) / RowSample::kGroupRows;
  s->groups = sample_groups(a.rows, a.nnz);
  const size_t vs = size_of(a.value);
  // Where the sampled group starting at row r0 ends (short of its 192 rows only in a sample of
  // one group of long rows).
  auto group_end = [&](int64_t r0) {
    const int64_t n = std::min(a.rows, r0 + RowSample::kGroupRows) - r0;
    return r0 +
           sample_kept_rows(s->groups, n, [&](int64_t j) { return a.row_begin(r0 + j) - a.row_begin(r0); });
  };
  // Sizes first: the arrays are written once, without growing.
  int64_t rows = 0, entries = 0;
  for (int64_t g = 0; g < s->groups; ++g) {
    const int64_t r0 = sample_group_start(g, s->groups, s->matrix_groups);
    const int64_t r1 = group_end(r0);
    rows += r1 - r0;
    entries += a.row_begin(r1) - a.row_begin(r0);
  }
  s->row_ptr.resize(size_t(rows) + 1);
  s->col_idx.resize(size_t(entries));
  s->values = AlignedBuffer(size_t(entries) * vs);
  int64_t* rp = s->row_ptr.data();
  int64_t* ci = s->col_idx.data();
  char* vals = static_cast<char*>(s->values.data());
  int64_t out = 0;
  for (int64_t g = 0; g < s->groups; ++g) {
    const int64_t r0 = sample_group_start(g, s->groups, s->matrix_groups);
    const int64_t r1 = group_end(r0);
    const int64_t shift = r0 - s->rows;  // a multiple of kGroupRows
    const int64_t b = a.row_begin(r0), e = a.row_begin(r1);
    for (int64_t k = b; k < e; ++k)
      ci[out + k - b] =
          (a.index == IndexType::i32 ? int64_t(a.ci<int32_t>()[k]) : a.ci<int64_t>()[k]) - shift;
    if (e > b)
      std::memcpy(vals + size_t(out) * vs, static_cast<const char*>(a.val) + size_t(b) * vs,
                  size_t(e - b) * vs);
    for (int64_t r = r0; r < r1; ++r) rp[s->rows + (r - r0) + 1] = out + a.row_begin(r + 1) - b;
    out += e - b;
    s->rows += r1 - r0;
  }
  mark_ascending(*s);
  return s;
}

}  // namespace spmvjit
