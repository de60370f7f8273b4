// Symmetric matrices given by one triangle (spmv_options_t::matrix_type): the full matrix built at
// plan time on the host, so that every format can then be planned on it.
#pragma once

#include <cstdint>

#include "core/buffer.hpp"
#include "engine/csr.hpp"

namespace spmvjit {

// A symmetric matrix given by one triangle (spmv_options_t::matrix_type): the full matrix built
// at plan time on the host, every format then planned on it.
struct HostSymmetric {
  AlignedBuffer row_ptr, col_idx, values, position;
  CsrRef ref;  // the full matrix (the arrays above): zero-based, a's index and value types
};

// `a`: a validated square CSR in host memory, index base `base` (0 or 1). upper: the triangle read
// is col >= row, else col <= row; entries of the other triangle are ignored. The full matrix A has,
// for every read entry (r, c, v): (r, c, v) and, when r != c, (c, r, v). Row i of A holds first the
// entries with col < i, then col == i, then col > i; the entries coming from a's own row i keep a's
// order, the mirrored ones come in increasing order of their source row (so when a's rows are sorted,
// A's are sorted too; duplicates in a stay duplicates). position holds 2 * a.nnz entries of a's index
// type: position[2k] = where a's k-th entry landed in A's arrays, position[2k + 1] = where its mirror
// landed; -1 where there is none (the diagonal's mirror, an ignored entry's both).
// Throws Error(SPMV_STATUS_INVALID_VALUE, ...) when rows != cols, and Error(SPMV_STATUS_UNSUPPORTED, a
// clear message naming the count and suggesting int64 indices) when A's nonzero count does not fit a's
// index type (int32: more than INT32_MAX). Parallel (plan_threads / parallel_for), O(nnz + rows), no
// per-entry allocation; the layout must not depend on the thread count.
// Complex values (`how`): a Hermitian matrix's mirrors are conjugated, its diagonal's imaginary
// parts dropped (BLAS's zhemv); `conjugate` then conjugates every value of A (op(A) = conj(A)).
// Real values ignore both.
struct SymmetricValues {
  bool hermitian = false;
  bool conjugate = false;
};
HostSymmetric expand_symmetric_on_host(const CsrRef& a, int base, bool upper, SymmetricValues how = {});

// to[position[2k]] = from[k] and to[position[2k + 1]] = from[k] where those are >= 0 (k < nnz, a's
// count), each value as `how` makes it: new values of a in A's order (spmv_plan_update_values).
// `to` has A's nonzero count; every slot of it is written by exactly that rule (A has no other
// entries).
void expand_symmetric_values(const void* from, void* to, const void* position, int64_t nnz, IndexType index,
                             ValueType value, SymmetricValues how = {});

}  // namespace spmvjit
