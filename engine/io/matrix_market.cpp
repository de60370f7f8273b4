// Matrix Market parser: the text in one buffer, from_chars, counting sort into CSR; size checks
// first. Reading the file: matrix_market_file.cpp.
#include "engine/io/matrix_market.hpp"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <complex>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <utility>
#include <vector>

#include "core/log.hpp"
#include "engine/io/mtx_duplicates.hpp"

namespace spmvjit {
namespace {

// Larger sizes are certainly a corrupt size line (x alone would take 128 GiB); how many rows fit
// is decided by the memory check, since row_ptr takes 8 bytes a row whatever the file holds.
constexpr int64_t kMaxDimension = int64_t(1) << 34;

enum class Format { coordinate, array };
enum class Field { real, integer, pattern, complex };
// hermitian: complex files only (a real hermitian file is symmetric).
enum class Symmetry { general, symmetric, skew, hermitian };
using Complex = std::complex<double>;

bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    char x = a[i], y = b[i];
    if (x >= 'A' && x <= 'Z') x = char(x - 'A' + 'a');
    if (y >= 'A' && y <= 'Z') y = char(y - 'A' + 'a');
    if (x != y) return false;
  }
  return true;
}

// '\r' counts as blank so that CRLF files parse like LF files.
inline bool is_blank(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f'; }

// Quotes a token for a message, cut short so a binary file does not flood the terminal.
std::string quote(std::string_view tok) {
  constexpr size_t kMaxShown = 40;
  std::string s = "'" + std::string(tok.substr(0, kMaxShown));
  return s + (tok.size() > kMaxShown ? "...'" : "'");
}

// Tokens of one line.
struct LineTokens {
  const char* p;
  const char* e;

  explicit LineTokens(std::string_view line) : p(line.data()), e(line.data() + line.size()) {}
  void skip_blanks() {
    while (p != e && is_blank(*p)) ++p;
  }
  // True when only blanks remain (or a '%' comment, which ends an entry line too).
  bool at_end() {
    skip_blanks();
    return p == e;
  }
  std::string_view token() {
    skip_blanks();
    const char* b = p;
    while (p != e && !is_blank(*p)) ++p;
    return std::string_view(b, size_t(p - b));
  }
  // Parses an integer token; false (p unchanged past blanks) when it is not exactly one.
  bool integer(int64_t& v) {
    skip_blanks();
    const char* b = p;
    if (b != e && *b == '+') ++b;
    auto [q, ec] = std::from_chars(b, e, v);
    if (ec != std::errc() || (q != e && !is_blank(*q))) return false;
    p = q;
    return true;
  }
  bool real(double& v) {
    skip_blanks();
    const char* b = p;
    if (b != e && *b == '+') ++b;
    auto [q, ec] = std::from_chars(b, e, v);
    if (ec == std::errc() && (q == e || is_blank(*q))) {
      p = q;
      return true;
    }
    return real_slow(v);
  }

 private:
  // Rare spellings from_chars refuses: Fortran 'D' exponents, and values that over- or
  // underflow (strtod gives inf / a denormal / 0 as other readers do).
  bool real_slow(double& v) {
    const char* b = p;
    const char* q = b;
    while (q != e && !is_blank(*q)) ++q;
    std::string tok(b, q);
    for (char& c : tok)
      if (c == 'd' || c == 'D') c = 'e';
    if (tok.empty() || tok.find_first_of("0123456789") == std::string::npos) return false;
    char* end = nullptr;
    v = std::strtod(tok.c_str(), &end);
    if (end != tok.c_str() + tok.size()) return false;
    p = q;
    return true;
  }
};

// Walks the text one line at a time and knows the 1-based number of the current line.
class Reader {
 public:
  Reader(std::string_view text, const std::string& name)
      : begin_(text.data()),
        p_(text.data()),
        end_(text.data() + text.size()),
        report_at_(end_),
        name_(name) {}

  // Calls `progress` each time another kProgressStep bytes are read (one comparison a line).
  void set_progress(const std::function<void(uint64_t, uint64_t)>* progress) {
    progress_ = progress && *progress ? progress : nullptr;
    if (progress_) report();
  }
  // The final call: all bytes read.
  void report_done() const {
    if (progress_) (*progress_)(uint64_t(end_ - begin_), uint64_t(end_ - begin_));
  }

  bool next_line(std::string_view& line) {
    if (p_ > report_at_) report();
    if (p_ == end_) return false;
    const char* nl = static_cast<const char*>(std::memchr(p_, '\n', size_t(end_ - p_)));
    const char* e = nl ? nl : end_;
    line = std::string_view(p_, size_t(e - p_));
    p_ = nl ? nl + 1 : end_;
    ++line_no_;
    return true;
  }
  // Next line that is neither blank nor a '%' comment.
  bool next_data_line(std::string_view& line) {
    while (next_line(line)) {
      LineTokens t(line);
      t.skip_blanks();
      if (t.p != t.e && *t.p != '%') return true;
    }
    return false;
  }
  int64_t line_no() const { return line_no_; }
  // Bytes after the current line.
  size_t remaining() const { return size_t(end_ - p_); }
  // An empty file reports line 1, where the banner should have been.
  [[noreturn]] void error(const std::string& what) const { fail(SPMV_STATUS_PARSE_ERROR, where() + what); }
  [[noreturn]] void refuse(spmv_status_t status, const std::string& what) const {
    fail(status, where() + what);
  }
  [[noreturn]] void unsupported(const std::string& what) const {
    fail(SPMV_STATUS_UNSUPPORTED, where() + what);
  }

 private:
  static constexpr size_t kProgressStep = size_t(4) << 20;
  const char* begin_;
  const char* p_;
  const char* end_;
  const char* report_at_;  // report() once past this (end_: never)
  const std::function<void(uint64_t, uint64_t)>* progress_ = nullptr;
  const std::string& name_;
  int64_t line_no_ = 0;

  void report() {
    (*progress_)(uint64_t(p_ - begin_), uint64_t(end_ - begin_));
    report_at_ = size_t(end_ - p_) > kProgressStep ? p_ + kProgressStep : end_;
  }

  std::string where() const { return name_ + ":" + std::to_string(std::max<int64_t>(line_no_, 1)) + ": "; }
};

struct Header {
  Format format = Format::coordinate;
  Field field = Field::real;
  Symmetry symmetry = Symmetry::general;
};

Header parse_banner(Reader& in) {
  constexpr const char* kExpected = "expected '%%MatrixMarket matrix <format> <field> <symmetry>'";
  std::string_view line;
  if (!in.next_line(line)) in.error("empty file: " + std::string(kExpected));
  if (line.substr(0, 3) == "\xEF\xBB\xBF") line.remove_prefix(3);  // UTF-8 byte order mark
  LineTokens t(line);
  if (!iequals(t.token(), "%%MatrixMarket")) in.error("missing banner: " + std::string(kExpected));
  std::string_view object = t.token(), format = t.token(), field = t.token(), sym = t.token();
  if (sym.empty()) in.error("incomplete banner: " + std::string(kExpected));
  if (!t.at_end()) in.error("unexpected " + quote(t.token()) + " at the end of the banner");
  if (!iequals(object, "matrix"))
    in.error("unknown object " + quote(object) + " (only 'matrix' is supported)");
  Header h;
  if (iequals(format, "coordinate")) {
    h.format = Format::coordinate;
  } else if (iequals(format, "array")) {
    h.format = Format::array;
  } else {
    in.error("unknown format " + quote(format) + " (expected coordinate or array)");
  }
  if (iequals(field, "real") || iequals(field, "double")) {
    h.field = Field::real;
  } else if (iequals(field, "integer")) {
    h.field = Field::integer;
  } else if (iequals(field, "pattern")) {
    h.field = Field::pattern;
  } else if (iequals(field, "complex")) {
    h.field = Field::complex;
  } else {
    in.error("unknown field " + quote(field) + " (expected real, integer, pattern or complex)");
  }
  // A hermitian matrix with real entries is symmetric.
  if (iequals(sym, "general")) {
    h.symmetry = Symmetry::general;
  } else if (iequals(sym, "hermitian") && h.field == Field::complex) {
    h.symmetry = Symmetry::hermitian;
  } else if (iequals(sym, "symmetric") || iequals(sym, "hermitian")) {
    h.symmetry = Symmetry::symmetric;
  } else if (iequals(sym, "skew-symmetric")) {
    h.symmetry = Symmetry::skew;
  } else {
    in.error("unknown symmetry " + quote(sym) +
             " (expected general, symmetric, skew-symmetric or hermitian)");
  }
  if (h.format == Format::array && h.field == Field::pattern)
    in.error("the pattern field is not allowed with the array format");
  if (h.symmetry == Symmetry::skew && h.field == Field::pattern)
    in.error("a pattern matrix cannot be skew-symmetric");
  return h;
}

// Entries as read, before mirroring; zero-based. V: double, or Complex for complex reads.
template <class V>
struct Triplets {
  std::vector<int64_t> row, col;
  std::vector<V> val;
  void reserve(size_t n) {
    row.reserve(n);
    col.reserve(n);
    val.reserve(n);
  }
  void push(int64_t r, int64_t c, V v) {
    row.push_back(r);
    col.push_back(c);
    val.push_back(v);
  }
};

double parse_value(Reader& in, LineTokens& t, Field field) {
  if (field == Field::integer) {
    int64_t iv;
    if (t.integer(iv)) return double(iv);
  } else {
    double v;
    if (t.real(v)) return v;
  }
  std::string_view tok = t.token();
  if (tok.empty()) in.error("missing value");
  in.error("invalid " + std::string(field == Field::integer ? "integer " : "") + "value " + quote(tok));
}

// One entry's value as V: a complex file's two numbers (re im), or one number (imaginary part 0
// when read as complex).
template <class V>
V parse_entry_value(Reader& in, LineTokens& t, Field field) {
  if constexpr (std::is_same_v<V, Complex>) {
    if (field == Field::complex) {
      const double re = parse_value(in, t, Field::real);
      if (t.at_end()) in.error("missing imaginary part (a complex entry holds two numbers)");
      return Complex(re, parse_value(in, t, Field::real));
    }
    return Complex(parse_value(in, t, field), 0.0);
  } else {
    return parse_value(in, t, field);
  }
}

// A hermitian matrix's diagonal is real.
template <class V>
void check_diagonal(Reader& in, const Header& h, int64_t i, int64_t j, const V& v) {
  if constexpr (std::is_same_v<V, Complex>) {
    if (h.symmetry == Symmetry::hermitian && i == j && v.imag() != 0) {
      char b[64];
      std::snprintf(b, sizeof b, "%.17g", v.imag());
      in.error("diagonal entry (" + std::to_string(i) + ", " + std::to_string(j) +
               ") of a hermitian matrix has imaginary part " + b + " (must be 0)");
    }
  }
}

void expect_line_end(Reader& in, LineTokens& t, const char* what) {
  if (!t.at_end() && *t.p != '%')
    in.error("unexpected " + quote(t.token()) + " after the " + std::string(what));
}

[[noreturn]] void end_of_file(Reader& in, int64_t found, int64_t expected) {
  in.error("unexpected end of file after " + std::to_string(found) + " of " + std::to_string(expected) +
           " entries");
}

void check_index(Reader& in, int64_t v, int64_t bound, const char* what) {
  if (v < 1 || v > bound)
    in.error(std::string(what) + " index " + std::to_string(v) + " is out of range [1, " +
             std::to_string(bound) + "]");
}

template <class V>
void read_coordinate(Reader& in, const Header& h, int64_t rows, int64_t cols, int64_t entries,
                     size_t text_size, Triplets<V>& out) {
  // Every entry takes at least 4 bytes ("1 1\n"), so a lying size line cannot make us reserve
  // more than the text can hold.
  out.reserve(size_t(std::min<int64_t>(entries, int64_t(text_size / 4 + 1))));
  std::string_view line;
  for (int64_t k = 0; k < entries;) {
    if (!in.next_line(line)) end_of_file(in, k, entries);
    LineTokens t(line);
    t.skip_blanks();
    if (t.p == t.e || *t.p == '%') continue;
    int64_t i, j;
    if (!t.integer(i)) in.error("invalid row index " + quote(t.token()));
    if (t.at_end()) in.error("missing column index");
    if (!t.integer(j)) in.error("invalid column index " + quote(t.token()));
    check_index(in, i, rows, "row");
    check_index(in, j, cols, "column");
    V v = V(1.0);
    if (h.field != Field::pattern) {
      if (t.at_end()) in.error("missing value");
      v = parse_entry_value<V>(in, t, h.field);
    }
    expect_line_end(in, t, "entry");
    check_diagonal(in, h, i, j, v);
    if (h.symmetry == Symmetry::skew && i == j)
      in.error("diagonal entry (" + std::to_string(i) + ", " + std::to_string(j) +
               ") in a skew-symmetric matrix");
    out.push(i - 1, j - 1, v);
    ++k;
  }
}

// Values an array file holds (the caller has checked that rows * cols fits int64_t); symmetric
// files are square.
int64_t array_entries(const Header& h, int64_t rows, int64_t cols) {
  if (h.symmetry == Symmetry::general) return rows * cols;
  const int64_t n = h.symmetry == Symmetry::skew ? rows - 1 : rows;  // strict lower: n - 1 rows
  if (n <= 0) return 0;
  return n % 2 == 0 ? n / 2 * (n + 1) : (n + 1) / 2 * n;
}

template <class V>
void read_array(Reader& in, const Header& h, int64_t rows, int64_t cols, Triplets<V>& out) {
  // Column-major; symmetric files hold the lower triangle, skew files the strict lower one.
  const int64_t skip = h.symmetry == Symmetry::general ? -1 : h.symmetry == Symmetry::skew ? 1 : 0;
  const int64_t expected = array_entries(h, rows, cols);
  if (expected == 0) return;  // 0 x 2^34 holds nothing: no loop over the columns
  int64_t k = 0;
  std::string_view line;
  for (int64_t j = 0; j < cols; ++j) {
    for (int64_t i = skip < 0 ? 0 : j + skip; i < rows; ++i) {
      if (!in.next_data_line(line)) end_of_file(in, k, expected);
      LineTokens t(line);
      const V v = parse_entry_value<V>(in, t, h.field);
      expect_line_end(in, t, "value");
      check_diagonal(in, h, i + 1, j + 1, v);
      if (v != V(0.0)) out.push(i, j, v);  // array files are dense: keep only the nonzeros
      ++k;
    }
  }
}

// The entry (j, i) that (i, j, v) stands for in a file of this symmetry.
template <class V>
V mirrored(Symmetry sym, const V& v) {
  if (sym == Symmetry::skew) return -v;
  if constexpr (std::is_same_v<V, Complex>)
    if (sym == Symmetry::hermitian) return std::conj(v);
  return v;
}

// Counting sort by row (mirroring symmetric entries), then sorted columns and summed duplicates.
// `summed` receives the (row, column) of every merge, for the duplicate report.
template <class V>
HostCsr<int64_t, V> build_csr(int64_t rows, int64_t cols, Symmetry sym, const Triplets<V>& t,
                              std::vector<mtx::Position>& summed) {
  HostCsr<int64_t, V> a;
  a.rows = rows;
  a.cols = cols;
  const size_t n = t.row.size();
  const bool mirror = sym != Symmetry::general;
  // Counts go to rp[r + 2] so that, after the prefix sum, rp[r + 1] is the insertion cursor of
  // row r, and after the scatter it is the end of row r: no second array needed.
  std::vector<int64_t>& rp = a.row_ptr;
  rp.assign(size_t(rows) + 2, 0);
  for (size_t k = 0; k < n; ++k) {
    ++rp[size_t(t.row[k]) + 2];
    if (mirror && t.row[k] != t.col[k]) ++rp[size_t(t.col[k]) + 2];
  }
  for (size_t r = 2; r < rp.size(); ++r) rp[r] += rp[r - 1];
  const size_t total = size_t(rp.back());
  a.col_idx.resize(total);
  a.val.resize(total);
  int64_t* ci = a.col_idx.data();
  V* va = a.val.data();
  for (size_t k = 0; k < n; ++k) {
    const int64_t r = t.row[k], c = t.col[k];
    int64_t& pos = rp[size_t(r) + 1];
    ci[pos] = c;
    va[pos++] = t.val[k];
    if (mirror && r != c) {
      int64_t& mpos = rp[size_t(c) + 1];
      ci[mpos] = r;
      va[mpos++] = mirrored(sym, t.val[k]);
    }
  }
  rp.pop_back();

  // Files are usually sorted by column, which the stable scatter keeps; sort only other rows.
  std::vector<std::pair<int64_t, V>> tmp;
  int64_t write = 0, begin = 0;
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t end = rp[size_t(r) + 1];
    if (!std::is_sorted(ci + begin, ci + end)) {
      tmp.clear();
      for (int64_t k = begin; k < end; ++k) tmp.emplace_back(ci[k], va[k]);
      // Stable, so duplicates are summed in file order on every standard library.
      std::stable_sort(tmp.begin(), tmp.end(),
                       [](const auto& x, const auto& y) { return x.first < y.first; });
      for (int64_t k = begin; k < end; ++k) {
        ci[k] = tmp[size_t(k - begin)].first;
        va[k] = tmp[size_t(k - begin)].second;
      }
    }
    const int64_t row_start = write;
    for (int64_t k = begin; k < end; ++k) {
      if (write > row_start && ci[write - 1] == ci[k]) {
        va[write - 1] += va[k];  // duplicates are summed, as scipy and MKL do
        summed.emplace_back(r, ci[k]);
      } else {
        ci[write] = ci[k];
        va[write++] = va[k];
      }
    }
    rp[size_t(r) + 1] = write;
    begin = end;
  }
  a.col_idx.resize(size_t(write));
  a.val.resize(size_t(write));
  return a;
}

// Refuses, at the size line, sizes whose arrays would take more than the memory limit: the
// triplets as read (16 bytes and a value each), row_ptr (8 bytes a row) and the CSR entries (8
// bytes and a value each, twice for mirrored files); values of `value_bytes`. Entries are bounded by what the
// rest of the text can hold, so a lying entry count costs nothing; rows are not: an empty 2^31-row matrix is
// 16 GiB of row_ptr.
void check_memory(const Reader& in, const Header& h, int64_t rows, int64_t cols, int64_t entries,
                  const ReadOptions& options, long double value_bytes) {
  const size_t min_bytes = h.format == Format::array ? 2 : 4;  // "0\n", "1 1\n"
  const long double stored = std::min<long double>(entries, in.remaining() / min_bytes + 1);
  const long double need = (16 + value_bytes) * stored + 8 * ((long double)rows + 2) +
                           (8 + value_bytes) * stored * (h.symmetry == Symmetry::general ? 1 : 2);
  const uint64_t limit = options.memory_limit ? options.memory_limit : default_read_memory_limit();
  if (need <= (long double)limit) return;
  in.refuse(SPMV_STATUS_OUT_OF_MEMORY,
            "reading this " + std::to_string(rows) + " x " + std::to_string(cols) + " matrix with " +
                std::to_string(entries) + " entries needs about " + mtx::gib(need) + ", more than " +
                "the reader's memory limit of " + mtx::gib(limit) +
                (options.memory_limit ? "" : " (physical memory, or ulimit -v / -d when lower)"));
}

template <class V>
void report_duplicates(std::string_view text, const std::string& name, const Triplets<V>& trip, Symmetry sym,
                       std::vector<mtx::Position> summed, DuplicatePolicy policy) {
  const mtx::DuplicateReport d =
      mtx::find_duplicates(trip.row, trip.col, sym != Symmetry::general, std::move(summed));
  if (d.count == 0) return;  // SPMVJIT_ASSERT would be harsh: summed is never empty here
  const std::vector<int64_t> lines = mtx::entry_lines(text, {d.first, d.earlier});
  auto pos = [&](int64_t k) {
    return "(" + std::to_string(trip.row[size_t(k)] + 1) + ", " + std::to_string(trip.col[size_t(k)] + 1) +
           ")";
  };
  const std::string what = "entry " + pos(d.first) + (d.mirrored ? " mirrors " : " repeats ") +
                           pos(d.earlier) + " from line " + std::to_string(lines[1]) +
                           (d.mirrored ? " (a symmetric file holds one triangle)" : "");
  if (policy == DuplicatePolicy::error)
    fail(SPMV_STATUS_PARSE_ERROR,
         name + ":" + std::to_string(lines[0]) + ": duplicate " + what +
             (d.count > 1 ? "; " + std::to_string(d.count) + " duplicates in all" : "") +
             " (duplicates are refused)");
  log_warn(name + ": " + std::to_string(d.count) + " duplicate entr" + (d.count > 1 ? "ies" : "y") +
           " summed; the first, line " + std::to_string(lines[0]) + ": " + what);
}

template <class V>
HostCsr<int64_t, V> parse_text(std::string_view text, const std::string& name, const ReadOptions& options,
                               MatrixMarketInfo* info) {
  Reader in(text, name);
  in.set_progress(&options.progress);
  const Header h = parse_banner(in);
  if (!std::is_same_v<V, Complex> && h.field == Field::complex)
    in.unsupported(
        "a complex matrix cannot be read into real values (read it as complex: "
        "read_matrix_market_complex, or `spmvjit run FILE` / `--value complex_double`; bench and "
        "inspect take real matrices only)");
  if (info) {
    info->symmetric = h.symmetry == Symmetry::symmetric;
    info->hermitian = h.symmetry == Symmetry::hermitian;
    info->complex = h.field == Field::complex;
  }

  std::string_view line;
  if (!in.next_data_line(line)) in.error("unexpected end of file: missing the size line");
  LineTokens t(line);
  const char* shape = h.format == Format::coordinate ? "'rows cols entries'" : "'rows cols'";
  int64_t rows, cols, entries = 0;
  if (!t.integer(rows) || !t.integer(cols) || (h.format == Format::coordinate && !t.integer(entries))) {
    std::string_view tok = t.token();
    in.error("invalid size line: expected " + std::string(shape) +
             (tok.empty() ? std::string(", the line ends early") : ", got " + quote(tok)));
  }
  expect_line_end(in, t, "size line");
  if (rows < 0 || cols < 0 || entries < 0)
    in.error("negative size in the size line: " + std::to_string(rows) + " " + std::to_string(cols) +
             (h.format == Format::coordinate ? " " + std::to_string(entries) : ""));
  if (rows > kMaxDimension || cols > kMaxDimension)
    in.error("matrix of " + std::to_string(rows) + " x " + std::to_string(cols) +
             " is too large (at most 2^34 rows and columns)");
  if (h.symmetry != Symmetry::general && rows != cols)
    in.error("a symmetric, skew-symmetric or hermitian matrix must be square, got " + std::to_string(rows) +
             " x " + std::to_string(cols));
  if (h.format == Format::array) {
    if (rows != 0 && cols > INT64_MAX / rows) in.error("array matrix is too large");
    entries = array_entries(h, rows, cols);
  }
  check_memory(in, h, rows, cols, entries, options, sizeof(V));

  Triplets<V> trip;
  if (h.format == Format::coordinate) {
    read_coordinate(in, h, rows, cols, entries, text.size(), trip);
  } else {
    read_array(in, h, rows, cols, trip);
  }
  if (in.next_data_line(line))
    in.error("more entries than the size line declares (" +
             std::to_string(h.format == Format::coordinate ? entries : int64_t(trip.row.size())) + ")");
  in.report_done();
  std::vector<mtx::Position> summed;
  HostCsr<int64_t, V> a = build_csr(rows, cols, h.symmetry, trip, summed);
  if (!summed.empty()) report_duplicates(text, name, trip, h.symmetry, std::move(summed), options.duplicates);
  return a;
}

}  // namespace

std::string mtx::gib(long double bytes) {
  char b[32];
  const bool large = bytes >= 1024.0L * 1024 * 1024;
  std::snprintf(b, sizeof b, "%.1Lf %s", bytes / (large ? 1024.0L * 1024 * 1024 : 1024.0L * 1024),
                large ? "GiB" : "MiB");
  return b;
}

namespace {
template <class V>
HostCsr<int64_t, V> parse_guarded(std::string_view text, const std::string& name, const ReadOptions& options,
                                  MatrixMarketInfo* info) {
  try {
    return parse_text<V>(text, name, options, info);
  } catch (const std::bad_alloc&) {
    // The memory check leaves this to an allocation beyond the estimate, or memory taken by
    // others meanwhile: still a message, never "std::bad_alloc".
    fail(SPMV_STATUS_OUT_OF_MEMORY, name + ": out of host memory while reading the matrix");
  }
}
}  // namespace

HostCsr<int64_t, double> parse_matrix_market(std::string_view text, const std::string& name,
                                             const ReadOptions& options, MatrixMarketInfo* info) {
  return parse_guarded<double>(text, name, options, info);
}

HostCsr<int64_t, std::complex<double>> parse_matrix_market_complex(std::string_view text,
                                                                   const std::string& name,
                                                                   const ReadOptions& options,
                                                                   MatrixMarketInfo* info) {
  return parse_guarded<Complex>(text, name, options, info);
}

}  // namespace spmvjit
