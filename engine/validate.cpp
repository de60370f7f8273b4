// CSR validation with messages that name the offending row and position.
#include "engine/validate.hpp"

#include <algorithm>
#include <atomic>
#include <string>
#include <type_traits>

#include "core/parallel.hpp"
#include "engine/formats/partition.hpp"

namespace spmvjit {
namespace {

std::string s(int64_t v) { return std::to_string(v); }

// Rows [r0, r1), the slow way: fails naming the first column out of range; whether every row
// strictly ascends.
template <class I>
bool check_rows(const CsrRef& a, int64_t base, int64_t r0, int64_t r1) {
  const I* rp = a.rp<I>();
  const I* ci = a.ci<I>();
  const uint64_t cols = uint64_t(a.cols);
  bool up = true;
  for (int64_t r = r0; r < r1; ++r) {
    const int64_t b = int64_t(rp[r]) - base, e = int64_t(rp[r + 1]) - base;
    for (int64_t k = b; k < e; ++k) {
      if (uint64_t(int64_t(ci[k]) - base) >= cols)
        fail(SPMV_STATUS_INVALID_MATRIX, "column index " + s(ci[k]) + " at position " + s(k) + " (row " +
                                             s(r + base) + ") is outside [" + s(base) + ", " +
                                             s(a.cols + base) + ")");
      up &= k == b || ci[k - 1] < ci[k];
    }
  }
  return up;
}

// Rows [r0, r1) the fast way: no branch per entry, so the entry loops vectorize (a branch and a
// test per entry ran at a third of the memory's speed on a 2-vCPU VM). An entry that is not a
// row's first must exceed the one before it: the drops among all entries of a block of rows,
// less those at row starts, must be none. Any column out of range sends the rows to check_rows,
// for the message.
template <class I>
bool check_rows_fast(const CsrRef& a, int64_t base, int64_t r0, int64_t r1) {
  using U = std::make_unsigned_t<I>;
  const I* rp = a.rp<I>();
  const I* ci = a.ci<I>();
  const U cols = U(a.cols), ubase = U(base);
  constexpr int64_t kRowBlock = 4096, kEntryBlock = int64_t(1) << 20;  // counts fit 32 bits
  U bad = 0;
  bool up = true;
  for (int64_t rb = r0; rb < r1; rb += kRowBlock) {
    const int64_t re = std::min(r1, rb + kRowBlock);
    const int64_t kb = int64_t(rp[rb]) - base, ke = int64_t(rp[re]) - base;
    if (kb < ke) bad |= U(U(ci[kb]) - ubase) >= cols;
    int64_t drops = 0;
    for (int64_t k0 = kb + 1; k0 < ke; k0 += kEntryBlock) {
      const int64_t k1 = std::min(ke, k0 + kEntryBlock);
      uint32_t d = 0;
      U b = 0;
      for (int64_t k = k0; k < k1; ++k) {
        b |= U(U(ci[k]) - ubase) >= cols;
        d += ci[k - 1] >= ci[k];
      }
      bad |= b;
      drops += d;
    }
    // kb itself is a row's first entry (row rb's, or the next nonempty row's).
    for (int64_t r = rb; r < re; ++r) {
      const int64_t b = int64_t(rp[r]) - base;
      drops -= b > kb && b < int64_t(rp[r + 1]) - base && ci[b - 1] >= ci[b];
    }
    up &= drops == 0;
  }
  if (bad) return check_rows<I>(a, base, r0, r1);
  return up;
}

template <class I>
bool check(const CsrRef& a, int64_t base) {
  const I* rp = a.rp<I>();
  if (int64_t(rp[0]) != base)
    fail(SPMV_STATUS_INVALID_MATRIX, "row_ptr[0] is " + s(rp[0]) + ", expected the index base " + s(base));
  // Monotone row_ptr first: the column pass below trusts it to stay inside [0, nnz). A flag
  // without a branch per row, then the slow loop for the message.
  parallel_for(a.rows, plan_threads(a.rows), [&](int64_t r0, int64_t r1, int) {
    unsigned down = 0;  // not a bool: GCC vectorizes no bool reduction
    for (int64_t r = r0; r < r1; ++r) down |= unsigned(rp[r + 1] < rp[r]);
    if (!down) return;
    for (int64_t r = r0; r < r1; ++r)
      if (rp[r + 1] < rp[r])
        fail(SPMV_STATUS_INVALID_MATRIX, "row_ptr is not monotone: row_ptr[" + s(r + 1) + "] = " +
                                             s(rp[r + 1]) + " < row_ptr[" + s(r) + "] = " + s(rp[r]));
  });
  if (int64_t(rp[a.rows]) - base != a.nnz)
    fail(SPMV_STATUS_INVALID_MATRIX,
         "row_ptr[rows] - base = " + s(int64_t(rp[a.rows]) - base) + " but nnz = " + s(a.nnz));
  std::atomic<bool> ascending{true};
  // Row ranges of equal entries (plus rows), not equal rows: a few dense rows are one range's.
  const int chunks = plan_threads(a.nnz + a.rows);
  const std::vector<int64_t> split =
      split_prefix(a.rows, chunks, [&](int64_t u) { return int64_t(rp[u]) - base + u; });
  parallel_for(chunks, chunks, [&](int64_t c0, int64_t c1, int) {
    if (!check_rows_fast<I>(a, base, split[size_t(c0)], split[size_t(c1)])) ascending = false;
  });
  return ascending;
}

}  // namespace

void validate_sizes(const CsrRef& a, int index_base) {
  if (index_base != 0 && index_base != 1)
    fail(SPMV_STATUS_INVALID_VALUE, "index_base must be 0 or 1, got " + s(index_base));
  if (a.rows < 0 || a.cols < 0 || a.nnz < 0)
    fail(SPMV_STATUS_INVALID_MATRIX,
         "negative size: rows " + s(a.rows) + ", cols " + s(a.cols) + ", nnz " + s(a.nnz));
  if (a.index == IndexType::i32) {
    // Kernels compute row_ptr entries and column indices in the index type; base 1 adds one.
    const int64_t lim = int64_t(INT32_MAX) - index_base;
    if (a.rows > lim || a.cols > lim || a.nnz > lim)
      fail(SPMV_STATUS_SIZE_OVERFLOW, "rows " + s(a.rows) + ", cols " + s(a.cols) + ", nnz " + s(a.nnz) +
                                          " do not fit int32 indices; use int64");
  }
  // Byte counts of rows + 1 or nnz 8-byte entries must not wrap around size_t (INT64_MAX rows
  // with int64 indices would allocate nothing and then read past the caller's arrays).
  constexpr int64_t kAddressable = int64_t(1) << 59;
  if (a.rows >= kAddressable || a.cols >= kAddressable || a.nnz >= kAddressable)
    fail(SPMV_STATUS_SIZE_OVERFLOW, "rows " + s(a.rows) + ", cols " + s(a.cols) + ", nnz " + s(a.nnz) +
                                        " exceed the addressable limit of 2^59 entries");
  if (a.row_ptr == nullptr) fail(SPMV_STATUS_INVALID_VALUE, "row_ptr is null");
  if (a.nnz > 0 && (a.col_idx == nullptr || a.val == nullptr))
    fail(SPMV_STATUS_INVALID_VALUE, "col_idx or values is null while nnz = " + s(a.nnz));
}

bool validate_csr(const CsrRef& a, int index_base) {
  validate_sizes(a, index_base);
  return a.index == IndexType::i32 ? check<int32_t>(a, index_base) : check<int64_t>(a, index_base);
}

}  // namespace spmvjit
