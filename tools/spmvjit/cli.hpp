// Shared pieces of the spmvjit command line: argument parsing, matrix loading, timing, tables.
#pragma once

#include <complex>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "core/json.hpp"
#include "engine/csr.hpp"
#include "spmvjit/spmvjit.h"

namespace spmvjit::cli {

// "--key value" / "--flag" options plus positional arguments. Unknown options are errors.
class Args {
 public:
  Args(int argc, char** argv, int first, const std::vector<std::string>& flags,
       const std::vector<std::string>& valued);
  bool has(const std::string& k) const { return opts_.count(k) > 0; }
  std::string get(const std::string& k, const std::string& def = "") const;
  // --k as an integer in [lo, hi] (a usage error otherwise, out-of-range values included).
  int64_t get_int(const std::string& k, int64_t def, int64_t lo = INT64_MIN, int64_t hi = INT64_MAX) const;
  double get_double(const std::string& k, double def) const;
  const std::vector<std::string>& positional() const { return pos_; }

 private:
  std::map<std::string, std::string> opts_;
  std::vector<std::string> pos_;
};

// FILE (Matrix Market, read with --duplicates sum|error) or --gen SPEC; `name` receives a short
// label.
// `symmetric`, when given, says whether the file declared the matrix symmetric.
HostCsr<int64_t, double> load_matrix(const Args& args, std::string* name, bool* symmetric = nullptr);
// Whether FILE (not --gen) is a Matrix Market file of complex values (its banner says so).
bool file_is_complex(const Args& args);
// What a Matrix Market file declares, or a run asks (--symmetric, --hermitian).
enum class Symmetry { general, symmetric, hermitian };
// FILE or --gen SPEC as complex values: a file read with read_matrix_market_complex (its symmetric
// or hermitian triangles mirrored: `file` says which), a generator's values as real parts with
// random imaginary parts (from --seed).
HostCsr<int64_t, std::complex<double>> load_matrix_complex(const Args& args, std::string* name,
                                                           Symmetry* file);
// a's values as real parts with random imaginary parts (from `seed`, as --gen with a complex
// --value makes them).
HostCsr<int64_t, std::complex<double>> with_random_imaginary(const HostCsr<int64_t, double>& a,
                                                             uint64_t seed);
// --symmetric or --hermitian, or a symmetric or hermitian Matrix Market file without --general:
// plans are told what the matrix is (options.matrix_type, read from the lower triangle). A matrix
// that is not so already (--gen, a general file, another kind) is made so from its lower triangle
// first, so that every plan, peer and check computes with the same matrix. Returns what the matrix
// is now declared (--hermitian with real values: symmetric).
template <class V>
Symmetry apply_symmetry(const Args& args, Symmetry file, HostCsr<int64_t, V>& a, spmv_options_t& o);
// The symmetric matrix whose lower triangle is a's (rows sorted when a's are); hermitian: its
// mirrors conjugated and its diagonal real (complex values).
template <class V>
HostCsr<int64_t, V> symmetric_from_lower(const HostCsr<int64_t, V>& a, bool hermitian = false);
// The generated benchmark suite (name, spec) used by `bench --suite`.
std::vector<std::pair<std::string, std::string>> default_suite(bool large);

spmv_options_t options_from(const Args& args);
spmv_backend_t backend_from(const std::string& s);

// Median seconds of fn() over at least `min_iters` calls and `min_seconds` of wall time.
double median_seconds(const std::function<void()>& fn, int min_iters, double min_seconds);

// A plain text table with right-aligned numeric columns.
std::string format_table(const std::vector<std::string>& header,
                         const std::vector<std::vector<std::string>>& rows);
std::string fmt(double v, int precision = 3);

// Parses "int32"/"int64" and "float"/"double"/"complex_float"/"complex_double".
IndexType index_from(const std::string& s);
// --index when given (int32 for a matrix beyond it is refused), else int32 when the matrix fits
// and int64 with a one-line note on stderr when it does not.
IndexType index_for(const Args& args, const HostCsr<int64_t, double>& a);
IndexType index_for(const Args& args, int64_t rows, int64_t cols, int64_t nnz);
// Refuses (OUT_OF_MEMORY, before any of it is allocated) a run whose x, y, reference and typed
// copy of the matrix would not fit the host's memory (physical, or ulimit -v / -d).
void check_run_memory(const HostCsr<int64_t, double>& a, IndexType index, ValueType value);
void check_run_memory(int64_t rows, int64_t cols, int64_t nnz, IndexType index, ValueType value);
ValueType value_from(const std::string& s);

[[noreturn]] void usage_error(const std::string& msg);

// Writes j.dump() and a newline to `path`; fails with IO_ERROR when it cannot.
void write_json_file(const std::string& path, const Json& j);

}  // namespace spmvjit::cli
