// Argument parsing, matrix loading, timing and table formatting for the command line.
#include "tools/spmvjit/cli.hpp"

#include "core/kernel_args.hpp"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "core/error.hpp"
#include "engine/gen/generators.hpp"
#include "engine/io/matrix_market.hpp"
#include "engine/reference.hpp"
#include "engine/symmetric.hpp"
#include "tools/spmvjit/progress.hpp"

namespace spmvjit::cli {

void usage_error(const std::string& msg) { fail(SPMV_STATUS_INVALID_VALUE, msg); }

void write_json_file(const std::string& path, const Json& j) {
  std::ofstream f(path);
  f << j.dump() << "\n";
  f.close();
  if (!f) fail(SPMV_STATUS_IO_ERROR, "cannot write " + path);
}

Args::Args(int argc, char** argv, int first, const std::vector<std::string>& flags,
           const std::vector<std::string>& valued) {
  for (int i = first; i < argc; ++i) {
    std::string a = argv[i];
    if (a.rfind("--", 0) == 0 && a.size() > 2) {
      std::string key = a.substr(2), val = "1";
      if (auto eq = key.find('='); eq != std::string::npos) {
        val = key.substr(eq + 1);
        key = key.substr(0, eq);
      } else if (std::find(valued.begin(), valued.end(), key) != valued.end()) {
        if (i + 1 >= argc) usage_error("option --" + key + " needs a value");
        val = argv[++i];
      }
      const bool known = std::find(flags.begin(), flags.end(), key) != flags.end() ||
                         std::find(valued.begin(), valued.end(), key) != valued.end();
      if (!known) usage_error("unknown option --" + key + " (see --help)");
      opts_[key] = val;
    } else if (a == "-o" && i + 1 < argc) {
      opts_["output"] = argv[++i];
    } else {
      pos_.push_back(a);
    }
  }
}

std::string Args::get(const std::string& k, const std::string& def) const {
  auto it = opts_.find(k);
  return it == opts_.end() ? def : it->second;
}

int64_t Args::get_int(const std::string& k, int64_t def, int64_t lo, int64_t hi) const {
  if (!has(k)) return def;
  char* end = nullptr;
  const std::string v = get(k);
  errno = 0;
  const long long x = std::strtoll(v.c_str(), &end, 10);
  if (v.empty() || *end) usage_error("--" + k + " expects an integer, got '" + v + "'");
  if (errno == ERANGE || x < lo || x > hi)
    usage_error("--" + k + " must be in [" + std::to_string(lo) + ", " + std::to_string(hi) + "], got " + v);
  return x;
}

double Args::get_double(const std::string& k, double def) const {
  if (!has(k)) return def;
  char* end = nullptr;
  const std::string v = get(k);
  const double x = std::strtod(v.c_str(), &end);
  if (v.empty() || *end) usage_error("--" + k + " expects a number, got '" + v + "'");
  return x;
}

HostCsr<int64_t, double> load_matrix(const Args& args, std::string* name, bool* symmetric) {
  if (symmetric) *symmetric = false;
  if (args.has("gen")) {
    *name = args.get("gen");
    return generate_matrix(args.get("gen"), uint64_t(args.get_int("seed", 1, 0)));
  }
  if (args.positional().empty()) usage_error("give a Matrix Market FILE or --gen SPEC");
  const std::string path = args.positional()[0];
  *name = path.substr(path.find_last_of('/') + 1);
  ReadOptions o;
  const std::string dup = args.get("duplicates", "sum");
  if (dup == "error")
    o.duplicates = DuplicatePolicy::error;
  else if (dup != "sum")
    usage_error("unknown --duplicates policy '" + dup + "' (sum, error)");
  Progress progress;
  if (progress.on())
    o.progress = [&](uint64_t done, uint64_t total) {
      progress.update("reading " + *name + ": " + progress_bytes(done, total));
      if (done == total) progress.done();  // before the reader's own messages (duplicates)
    };
  MatrixMarketInfo info;
  auto a = read_matrix_market(path, o, &info);
  if (symmetric) *symmetric = info.symmetric;
  return a;
}

bool file_is_complex(const Args& args) {
  if (args.has("gen") || args.positional().empty()) return false;
  // A FIFO, a device or an unreadable path: not complex, and the reader says what is wrong.
  std::string banner = read_matrix_market_banner(args.positional()[0]);
  for (char& c : banner) c = char(std::tolower(static_cast<unsigned char>(c)));
  // "%%matrixmarket matrix <format> complex <symmetry>": the field is the fourth token.
  std::istringstream t(banner);
  std::string tok[4];
  for (std::string& x : tok) t >> x;
  return tok[0].rfind("%%matrixmarket", 0) == 0 && tok[3] == "complex";
}

HostCsr<int64_t, std::complex<double>> with_random_imaginary(const HostCsr<int64_t, double>& a,
                                                             uint64_t seed) {
  const std::vector<double> im = random_vector<double>(a.nnz(), seed * 2 + 1);
  HostCsr<int64_t, std::complex<double>> c;
  c.rows = a.rows;
  c.cols = a.cols;
  c.row_ptr = a.row_ptr;
  c.col_idx = a.col_idx;
  c.val.resize(a.val.size());
  for (size_t k = 0; k < a.val.size(); ++k) c.val[k] = {a.val[k], im[k]};
  return c;
}

HostCsr<int64_t, std::complex<double>> load_matrix_complex(const Args& args, std::string* name,
                                                           Symmetry* file) {
  *file = Symmetry::general;
  if (args.has("gen"))  // the generator's values as real parts, random imaginary parts
    return with_random_imaginary(load_matrix(args, name), uint64_t(args.get_int("seed", 1, 0)));
  if (args.positional().empty()) usage_error("give a Matrix Market FILE or --gen SPEC");
  const std::string path = args.positional()[0];
  *name = path.substr(path.find_last_of('/') + 1);
  ReadOptions o;
  const std::string dup = args.get("duplicates", "sum");
  if (dup == "error")
    o.duplicates = DuplicatePolicy::error;
  else if (dup != "sum")
    usage_error("unknown --duplicates policy '" + dup + "' (sum, error)");
  MatrixMarketInfo info;
  auto a = read_matrix_market_complex(path, o, &info);
  *file = info.hermitian ? Symmetry::hermitian : info.symmetric ? Symmetry::symmetric : Symmetry::general;
  return a;
}

template <class V>
HostCsr<int64_t, V> symmetric_from_lower(const HostCsr<int64_t, V>& a, bool hermitian) {
  if (a.rows != a.cols)
    usage_error(std::string(hermitian ? "--hermitian" : "--symmetric") + " needs a square matrix, got " +
                std::to_string(a.rows) + " x " + std::to_string(a.cols));
  HostSymmetric full = expand_symmetric_on_host(a.ref(), 0, false, {hermitian, false});
  HostCsr<int64_t, V> s;
  s.rows = s.cols = a.rows;
  const int64_t* rp = full.ref.rp<int64_t>();
  const int64_t* ci = full.ref.ci<int64_t>();
  const V* v = full.ref.vals<V>();
  s.row_ptr.assign(rp, rp + a.rows + 1);
  s.col_idx.assign(ci, ci + full.ref.nnz);
  s.val.assign(v, v + full.ref.nnz);
  return s;
}

template <class V>
Symmetry apply_symmetry(const Args& args, Symmetry file, HostCsr<int64_t, V>& a, spmv_options_t& o) {
  const int asked = int(args.has("symmetric")) + int(args.has("hermitian")) + int(args.has("general"));
  if (asked > 1) usage_error("--symmetric, --hermitian and --general exclude each other");
  Symmetry want = args.has("symmetric")   ? Symmetry::symmetric
                  : args.has("hermitian") ? Symmetry::hermitian
                                          : file;
  if (args.has("general") || want == Symmetry::general) return Symmetry::general;
  if (!is_complex_v<V> && want == Symmetry::hermitian)
    want = Symmetry::symmetric;  // the same for real values
  if (want != file) a = symmetric_from_lower(a, want == Symmetry::hermitian);
  o.matrix_type = want == Symmetry::hermitian ? SPMV_MATRIX_HERMITIAN : SPMV_MATRIX_SYMMETRIC;
  o.fill_mode = SPMV_FILL_LOWER;
  return want;
}

template HostCsr<int64_t, double> symmetric_from_lower(const HostCsr<int64_t, double>&, bool);
template HostCsr<int64_t, std::complex<double>> symmetric_from_lower(
    const HostCsr<int64_t, std::complex<double>>&, bool);
template Symmetry apply_symmetry(const Args&, Symmetry, HostCsr<int64_t, double>&, spmv_options_t&);
template Symmetry apply_symmetry(const Args&, Symmetry, HostCsr<int64_t, std::complex<double>>&,
                                 spmv_options_t&);

namespace {

// Where the SuiteSparse .mtx files are: $SPMVJIT_MATRICES_DIR (the variable the tests read), else
// ../shared/matrices from the working directory (the CMake default, seen from the source tree).
std::string matrices_dir() {
  const char* dir = std::getenv("SPMVJIT_MATRICES_DIR");
  return dir && *dir ? dir : "../shared/matrices";
}

// A replicate: spec for a shared matrix, or "" when the file is missing (or its path cannot be
// written in a spec): the suite then simply runs without it.
std::string replicate_spec(const std::string& file, int64_t min_nnz) {
  const std::string path = matrices_dir() + "/" + file;
  if (path.find_first_of(":@") != std::string::npos || !std::ifstream(path)) return "";
  return "replicate:" + path + ":" + std::to_string(min_nnz);
}

}  // namespace

std::vector<std::pair<std::string, std::string>> default_suite(bool large) {
  std::vector<std::pair<std::string, std::string>> suite;
  if (large) {  // the GPU suite: every matrix well above a 50 MB L2
    suite = {{"poisson2d-4M", "poisson2d:2000"},
             {"stencil27-1M", "stencil27:100"},
             {"random-2M", "random:2000000:1:40"},
             {"powerlaw-2M", "powerlaw:2000000"},
             {"denserows-1M", "denserows:1000000:10:16"},
             {"short-8M", "short:8000000:2"},
             {"dense-2000", "dense:2000"},
             // The harder kinds (issue 11), 15-32M nonzeros each.
             {"rmat-21", "rmat:21:16"},
             {"blockfem3-192K", "blockfem:40:3"},
             {"varband-300K", "varband:300000"},
             {"lpwide-400K", "lpwide:400000"},
             {"circuit-4M", "circuit:4000000"},
             {"perm-16M", "perm:16000000"}};
    if (const std::string r = replicate_spec("bcsstk13.mtx", 16000000); !r.empty())
      suite.emplace_back("bcsstk13-x191", r);
    return suite;
  }
  suite = {{"poisson2d-1M", "poisson2d:1000"},
           {"stencil27-216K", "stencil27:60"},
           {"random-500K", "random:500000:1:40"},
           {"powerlaw-500K", "powerlaw:500000"},
           {"denserows-500K", "denserows:500000:10:16"},
           {"short-2M", "short:2000000:2"},
           {"dense-1000", "dense:1000"},
           // The harder kinds at CPU sizes, about 2M nonzeros each.
           {"rmat-17", "rmat:17:16"},
           {"blockfem3-24K", "blockfem:20:3"},
           {"varband-30K", "varband:30000"},
           {"lpwide-40K", "lpwide:40000"},
           {"circuit-400K", "circuit:400000"},
           {"perm-2M", "perm:2000000"}};
  if (const std::string r = replicate_spec("bcsstk13.mtx", 2000000); !r.empty())
    suite.emplace_back("bcsstk13-x24", r);
  return suite;
}

spmv_backend_t backend_from(const std::string& s) {
  if (s == "auto" || s.empty()) return SPMV_BACKEND_AUTO;
  if (s == "cpu") return SPMV_BACKEND_CPU;
  if (s == "cuda") return SPMV_BACKEND_CUDA;
  if (s == "hip") return SPMV_BACKEND_HIP;
  usage_error("unknown backend '" + s + "' (auto, cpu, cuda, hip)");
}

IndexType index_from(const std::string& s) {
  if (s == "int32" || s.empty()) return IndexType::i32;
  if (s == "int64") return IndexType::i64;
  usage_error("unknown index type '" + s + "' (int32, int64)");
}

IndexType index_for(const Args& args, const HostCsr<int64_t, double>& a) {
  return index_for(args, a.rows, a.cols, a.nnz());
}

IndexType index_for(const Args& args, int64_t rows, int64_t cols, int64_t nnz) {
  const bool fits = rows <= INT32_MAX && cols <= INT32_MAX && nnz <= INT32_MAX;
  const std::string sizes =
      std::to_string(rows) + " x " + std::to_string(cols) + " with " + std::to_string(nnz) + " nonzeros";
  if (args.has("index")) {
    const IndexType i = index_from(args.get("index"));
    if (i == IndexType::i32 && !fits)
      usage_error("--index int32: the matrix is " + sizes +
                  ", beyond int32 indices (at most 2147483647); use --index int64 or leave --index out");
    return i;
  }
  if (fits) return IndexType::i32;
  std::fprintf(stderr, "note: int64 indices: the matrix is %s, beyond int32 indices\n", sizes.c_str());
  return IndexType::i64;
}

void check_run_memory(const HostCsr<int64_t, double>& a, IndexType index, ValueType value) {
  check_run_memory(a.rows, a.cols, a.nnz(), index, value);
}

void check_run_memory(int64_t rows_i, int64_t cols_i, int64_t nnz_i, IndexType index, ValueType value) {
  const long double is = (long double)size_of(index), vs = (long double)size_of(value);
  const long double rows = (long double)rows_i, cols = (long double)cols_i, nnz = (long double)nnz_i;
  // x; y, its copy and the fetched result; the reference's four long doubles a row; the typed
  // copy of the matrix and about as much again for the plan's own arrays.
  const long double need = cols * vs + 3 * rows * vs + 64 * rows + 2 * ((rows + 1) * is + nnz * (is + vs));
  const uint64_t limit = default_read_memory_limit();
  if (need <= (long double)limit) return;
  auto gib = [](long double b) { return fmt(double(b / (1024.0L * 1024 * 1024)), 1) + " GiB"; };
  fail(SPMV_STATUS_OUT_OF_MEMORY,
       "a " + std::to_string(rows_i) + " x " + std::to_string(cols_i) + " matrix needs about " + gib(need) +
           " to plan, run and verify (x alone is " + gib(cols * vs) + "), more than the " +
           gib((long double)limit) + " of memory here (physical, or ulimit -v / -d when lower)");
}

ValueType value_from(const std::string& s) {
  if (s == "double" || s.empty()) return ValueType::f64;
  if (s == "float") return ValueType::f32;
  if (s == "complex_double") return ValueType::c64;
  if (s == "complex_float") return ValueType::c32;
  usage_error("unknown value type '" + s + "' (float, double, complex_float, complex_double)");
}

spmv_options_t options_from(const Args& args) {
  spmv_options_t o;
  spmv_options_init(&o);
  o.backend = backend_from(args.get("backend", "auto"));
  o.device = int(args.get_int("device", 0, 0, 1023));
  o.threads = int(args.get_int("threads", 0, 0, 65536));
  o.deterministic = args.has("deterministic");
  if (args.has("cache-dir")) o.cache_dir = nullptr;  // set by caller, which owns the string
  // run and bench: --vectors K and --layout col|row (spmm_execute).
  o.vectors = int(args.get_int("vectors", 1, 1, kMaxVectors));
  const std::string layout = args.get("layout");
  if (!layout.empty() && layout != "col" && layout != "row")
    usage_error("--layout is col or row, got '" + layout + "'");
  o.layout = layout == "row" ? SPMV_LAYOUT_ROW_MAJOR : SPMV_LAYOUT_COL_MAJOR;
  if (args.has("transpose")) o.operation = SPMV_OPERATION_TRANSPOSE;
  if (args.has("conjugate-transpose")) {  // run only (bench: A^T)
    if (args.has("transpose")) usage_error("--transpose and --conjugate-transpose: one of them");
    o.operation = SPMV_OPERATION_CONJUGATE_TRANSPOSE;
  }
  return o;
}

double median_seconds(const std::function<void()>& fn, int min_iters, double min_seconds) {
  std::vector<double> t;
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < 100000; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    fn();
    const auto t1 = std::chrono::steady_clock::now();
    t.push_back(std::chrono::duration<double>(t1 - t0).count());
    if (int(t.size()) >= min_iters && std::chrono::duration<double>(t1 - start).count() >= min_seconds) break;
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

std::string fmt(double v, int precision) {
  char b[64];
  std::snprintf(b, sizeof b, "%.*f", precision, v);
  return b;
}

std::string format_table(const std::vector<std::string>& header,
                         const std::vector<std::vector<std::string>>& rows) {
  std::vector<size_t> w(header.size());
  for (size_t c = 0; c < header.size(); ++c) w[c] = header[c].size();
  for (const auto& r : rows)
    for (size_t c = 0; c < r.size() && c < w.size(); ++c) w[c] = std::max(w[c], r[c].size());
  auto line = [&](const std::vector<std::string>& r) {
    std::string s;
    for (size_t c = 0; c < w.size(); ++c) {
      const std::string& v = c < r.size() ? r[c] : "";
      const std::string pad(w[c] - v.size(), ' ');
      s += (c ? "  " : "") + (c == 0 ? v + pad : pad + v);
    }
    return s + "\n";
  };
  std::string out = line(header);
  size_t total = 0;
  for (size_t c = 0; c < w.size(); ++c) total += w[c] + (c ? 2 : 0);
  out += std::string(total, '-') + "\n";
  for (const auto& r : rows) out += line(r);
  return out;
}

}  // namespace spmvjit::cli
