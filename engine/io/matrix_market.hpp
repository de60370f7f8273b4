// Matrix Market (.mtx) reader and writer: text file <-> zero-based HostCsr<int64_t, double>.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "engine/csr.hpp"

namespace spmvjit {

// Reads a Matrix Market file. Accepted: "matrix coordinate|array", fields real, double, integer
// and pattern (pattern values become 1.0), symmetries general, symmetric, skew-symmetric and
// hermitian (a real hermitian matrix is symmetric). Symmetric and skew-symmetric entries are
// mirrored, duplicates are summed, columns are sorted within rows. Coordinate files keep their
// explicit zeros; array (dense) files keep only their nonzero entries, since they are read to
// get a sparse matrix. Throws Error: SPMV_STATUS_IO_ERROR when the file cannot be read,
// SPMV_STATUS_PARSE_ERROR ("path:line: what") for malformed text, SPMV_STATUS_UNSUPPORTED for
// complex matrices.
HostCsr<int64_t, double> read_matrix_market(const std::string& path);

// Same as read_matrix_market on text already in memory; name prefixes every message.
HostCsr<int64_t, double> parse_matrix_market(std::string_view text, const std::string& name);

// Writes "coordinate real general" with one-based indices and %.17g values (exact round trip).
// Throws Error(SPMV_STATUS_IO_ERROR) when the file cannot be written.
void write_matrix_market(const std::string& path, const HostCsr<int64_t, double>& a);

}  // namespace spmvjit
