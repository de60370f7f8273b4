// CSR validation with messages that name the offending row and position.
#include "engine/validate.hpp"

#include <atomic>
#include <string>

#include "core/parallel.hpp"
#include "engine/formats/partition.hpp"

namespace spmvjit {
namespace {

std::string s(int64_t v) { return std::to_string(v); }

template <class I>
bool check(const CsrRef& a, int64_t base) {
  const I* rp = a.rp<I>();
  const I* ci = a.ci<I>();
  if (int64_t(rp[0]) != base)
    fail(SPMV_STATUS_INVALID_MATRIX, "row_ptr[0] is " + s(rp[0]) + ", expected the index base " + s(base));
  // Monotone row_ptr first: the column pass below trusts it to stay inside [0, nnz).
  parallel_for(a.rows, plan_threads(a.rows), [&](int64_t r0, int64_t r1, int) {
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
    const int64_t r0 = split[size_t(c0)], r1 = split[size_t(c1)];
    // Unsigned compare: one branch per entry catches both c < 0 and c >= cols.
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
    if (!up) ascending = false;
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
