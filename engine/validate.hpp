// CSR validation: every user matrix passes here before anything is converted or allocated.
#pragma once

#include "engine/csr.hpp"

namespace spmvjit {

// Checks sizes, index base, monotone row_ptr, nnz consistency and column range of a host CSR
// with the given base (0 or 1). Throws Error(INVALID_MATRIX / SIZE_OVERFLOW / INVALID_VALUE)
// with a message that says what is wrong and where (row, position). Returns true when every
// row's columns strictly ascend (no row repeats a column): the same pass, nearly free.
bool validate_csr(const CsrRef& a, int index_base);
// The size, overflow and null-pointer part alone: safe before anything is read or allocated.
void validate_sizes(const CsrRef& a, int index_base);

}  // namespace spmvjit
