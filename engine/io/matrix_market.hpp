// Matrix Market (.mtx) reader and writer: text file <-> zero-based HostCsr<int64_t, double>.
#pragma once

#include <complex>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "engine/csr.hpp"

namespace spmvjit {

// What the reader does with a position (i, j) given more than once. In a symmetric or
// skew-symmetric file an entry (i, j) also stands for (j, i), so (2, 1) and (1, 2) in one such
// file are duplicates too (the lower and the upper triangle both given).
enum class DuplicatePolicy {
  sum,    // values are summed, as scipy and MKL do; a warning gives the count and the first line
  error,  // the file is refused, naming the lines of the first duplicate and its earlier entry
};

struct ReadOptions {
  DuplicatePolicy duplicates = DuplicatePolicy::sum;
  // Most bytes the reader's arrays may take (the file's text aside); a file needing more is
  // refused before anything is allocated. 0: default_read_memory_limit().
  uint64_t memory_limit = 0;
  // Optional: called with (bytes of the text read so far, its size) every few MB and once at the
  // end of the text, on the reading thread (the command line's progress line).
  std::function<void(uint64_t done, uint64_t total)> progress;
};

// The default ReadOptions::memory_limit: the machine's physical memory, or the process's
// address-space or data limit (ulimit -v / -d) when that is lower.
uint64_t default_read_memory_limit();

// Reads a Matrix Market file. Accepted: "matrix coordinate|array", fields real, double, integer
// and pattern (pattern values become 1.0), symmetries general, symmetric, skew-symmetric and
// hermitian (a real hermitian matrix is symmetric); complex files through
// read_matrix_market_complex below. Symmetric and skew-symmetric entries are
// mirrored, duplicates are handled by options.duplicates, columns are sorted within rows.
// Coordinate files keep their explicit zeros; array (dense) files keep only their nonzero
// entries, since they are read to get a sparse matrix. Throws Error: SPMV_STATUS_IO_ERROR when
// the file cannot be read or is not a regular file (a FIFO, a device, a directory),
// SPMV_STATUS_PARSE_ERROR ("path:line: what") for malformed text and refused duplicates,
// SPMV_STATUS_UNSUPPORTED for complex matrices (read them with read_matrix_market_complex),
// SPMV_STATUS_OUT_OF_MEMORY ("path:line: what", the size line's) when the declared sizes need more than
// options.memory_limit. `info`, when given, receives what the banner declared.
struct MatrixMarketInfo {
  bool symmetric = false;  // "symmetric", or "hermitian" with real entries (A = A^T; the matrix
                           // returned holds both triangles)
  bool hermitian = false;  // "hermitian" with complex entries (A = A^H; both triangles returned)
  bool complex = false;    // the field is "complex"
};
HostCsr<int64_t, double> read_matrix_market(const std::string& path, const ReadOptions& options = {},
                                            MatrixMarketInfo* info = nullptr);

// Same as read_matrix_market on text already in memory; name prefixes every message.
HostCsr<int64_t, double> parse_matrix_market(std::string_view text, const std::string& name,
                                             const ReadOptions& options = {},
                                             MatrixMarketInfo* info = nullptr);

// Complex values: a "complex" file's entries are two numbers (re im); symmetric files are mirrored
// as they are, hermitian ones conjugated (a diagonal entry with a nonzero imaginary part is refused
// with its line), skew-symmetric ones negated. Files of the other fields are read with imaginary
// parts 0: a real matrix is a complex one, and the complex kernels can be run on every real file.
// Errors as read_matrix_market's.
HostCsr<int64_t, std::complex<double>> read_matrix_market_complex(const std::string& path,
                                                                  const ReadOptions& options = {},
                                                                  MatrixMarketInfo* info = nullptr);
HostCsr<int64_t, std::complex<double>> parse_matrix_market_complex(std::string_view text,
                                                                   const std::string& name,
                                                                   const ReadOptions& options = {},
                                                                   MatrixMarketInfo* info = nullptr);

// A file's first line (up to 1 KiB, without its newline): the banner, to choose the reader before
// reading. "" when the path is not a readable regular file (the reader then says why); never
// blocks on a FIFO nor reads a device past that KiB.
std::string read_matrix_market_banner(const std::string& path);

// Writes "coordinate real general" with one-based indices and %.17g values (exact round trip).
// Throws Error(SPMV_STATUS_IO_ERROR) when the file cannot be written.
void write_matrix_market(const std::string& path, const HostCsr<int64_t, double>& a);

namespace mtx {
// "1.5 GiB" or "12.0 MiB": sizes in the reader's messages.
std::string gib(long double bytes);
}  // namespace mtx

}  // namespace spmvjit
