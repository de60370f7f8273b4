// Host CSR containers and the type-erased view the engine passes between stages.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "core/types.hpp"

namespace spmvjit {

// Zero-based CSR on the host, borrowed (no ownership). Every converter reads this.
struct CsrRef {
  int64_t rows = 0;
  int64_t cols = 0;
  int64_t nnz = 0;
  IndexType index = IndexType::i32;
  ValueType value = ValueType::f64;
  const void* row_ptr = nullptr;
  const void* col_idx = nullptr;
  const void* val = nullptr;

  template <class I>
  const I* rp() const { return static_cast<const I*>(row_ptr); }
  template <class I>
  const I* ci() const { return static_cast<const I*>(col_idx); }
  template <class V>
  const V* vals() const { return static_cast<const V*>(val); }
  // Row length of row r, whatever the index type.
  int64_t row_len(int64_t r) const {
    return index == IndexType::i32 ? int64_t(rp<int32_t>()[r + 1]) - rp<int32_t>()[r]
                                   : rp<int64_t>()[r + 1] - rp<int64_t>()[r];
  }
  int64_t row_begin(int64_t r) const {
    return index == IndexType::i32 ? int64_t(rp<int32_t>()[r]) : rp<int64_t>()[r];
  }
};

// Owning zero-based host CSR; used by the reader, the generators, the tools and the tests.
template <class I, class V>
struct HostCsr {
  int64_t rows = 0;
  int64_t cols = 0;
  std::vector<I> row_ptr{I(0)};
  std::vector<I> col_idx;
  std::vector<V> val;

  int64_t nnz() const { return int64_t(col_idx.size()); }
  CsrRef ref() const {
    return CsrRef{rows,
                  cols,
                  nnz(),
                  index_type_of<I>(),
                  value_type_of<V>(),
                  row_ptr.data(),
                  col_idx.data(),
                  val.data()};
  }
  // Same matrix in other index/value types. Throws SPMV_STATUS_SIZE_OVERFLOW if an index
  // does not fit the target type.
  template <class I2, class V2>
  HostCsr<I2, V2> cast() const {
    HostCsr<I2, V2> out;
    if constexpr (sizeof(I2) < sizeof(I)) {
      if (nnz() > int64_t(INT32_MAX) || rows > int64_t(INT32_MAX) || cols > int64_t(INT32_MAX))
        fail(SPMV_STATUS_SIZE_OVERFLOW,
             "matrix with " + std::to_string(rows) + " rows, " + std::to_string(cols) +
                 " columns and " + std::to_string(nnz()) + " nonzeros does not fit int32 indices");
    }
    out.rows = rows;
    out.cols = cols;
    out.row_ptr.assign(row_ptr.begin(), row_ptr.end());
    out.col_idx.assign(col_idx.begin(), col_idx.end());
    out.val.assign(val.begin(), val.end());
    return out;
  }
};

}  // namespace spmvjit
