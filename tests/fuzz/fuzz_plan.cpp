// libFuzzer target: spmv_plan (CPU, host memory, memory-only cache) on CSR descriptors decoded from the
// input.
//
// Every array is exactly as long as its descriptor declares (the C API cannot check lengths, so a
// shorter one would be the caller's bug, not spmvjit's), and ASan sees each as its own block: a
// read past a declared length is reported. Contents are anything: non-monotone row_ptr, a wrong
// row_ptr[0], columns out of range, unsorted or repeated, NaN and infinite values, sizes that
// are zero, negative or too large for the index type. The oracle: spmv_plan succeeds exactly on
// valid matrices (an unknown or inapplicable forced format aside), and then spmv_execute (and
// spmv_plan_update_values) agree with a plain CSR product.
//
// Input layout (scripts/fuzz.sh writes seeds in it): 11 header bytes, then up to 8 corruptions
// of 11 bytes each, then bytes that seed the generator of row lengths, columns and values.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "engine/formats/format.hpp"
#include "spmvjit/spmvjit.h"

namespace {

struct Bytes {
  const uint8_t* p;
  size_t n;
  uint64_t take(int count) {  // little-endian; zeros once the input is used up
    uint64_t v = 0;
    for (int i = 0; i < count; ++i, n = n ? n - 1 : 0) v |= uint64_t(n ? *p++ : 0) << (8 * i);
    return v;
  }
};

struct Rng {  // splitmix64: structure from the tail of the input without consuming it byte by byte
  uint64_t s;
  uint64_t next() {
    uint64_t z = (s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  int64_t below(int64_t n) { return n > 0 ? int64_t(next() % uint64_t(n)) : 0; }
};

constexpr int64_t kI64Min = std::numeric_limits<int64_t>::min();
constexpr int64_t kI64Max = std::numeric_limits<int64_t>::max();
// Sizes the API must refuse before reading any array (so arrays need not be that long).
constexpr int64_t kRefusedRows32[] = {
    -1, kI64Min, int64_t(1) << 31, (int64_t(1) << 31) + 7, int64_t(1) << 59, kI64Max};
constexpr int64_t kRefusedRows64[] = {-1, kI64Min, -(int64_t(1) << 40), int64_t(1) << 59, kI64Max};
// Columns size no input array, so anything goes (x is allocated only when it is small).
constexpr int64_t kAnyCols[] = {0,
                                1,
                                2,
                                7,
                                255,
                                65536,
                                INT32_MAX,
                                int64_t(1) << 31,
                                int64_t(1) << 40,
                                (int64_t(1) << 59) - 1,
                                int64_t(1) << 59,
                                kI64Max,
                                -1,
                                kI64Min};
constexpr int64_t kMaxExecutedCols = int64_t(1) << 22;
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kSpecial[] = {
    std::numeric_limits<double>::quiet_NaN(), kInf, -kInf, -0.0, 1e308, 5e-324, 3.4e38, 1e-45};
constexpr double kFew[] = {1.0, -1.0, 0.5, 2.0, 0.0, 3.0, -0.25, 10.0};

struct Matrix {
  int64_t rows = 0, cols = 0, nnz = 0;
  std::vector<int64_t> rp, ci;  // zero-based while generated, base and type applied at the end
  std::vector<double> val;
};

// A valid zero-based CSR of one of a few shapes formats care about.
void generate(Matrix& m, int shape, int64_t mean, Rng& rng) {
  const int64_t c = std::clamp<int64_t>(m.cols, 0, int64_t(1) << 20);  // negative: empty rows
  m.rp.assign(size_t(m.rows) + 1, 0);
  for (int64_t r = 0; r < m.rows; ++r) {
    int64_t len =
        shape == 4 ? (rng.below(16) == 0 ? rng.below(40 * mean + 2) : rng.below(3)) : rng.below(2 * mean + 1);
    if (c == 0) len = 0;
    const int64_t first = m.ci.size();
    for (int64_t j = 0; j < len; ++j) {
      int64_t col = rng.below(c);
      if (shape == 1) col = std::clamp<int64_t>(r - len / 2 + j, 0, c - 1);                       // band
      if (shape == 2) col = std::min<int64_t>((r / 4 * 4 + j) % std::max<int64_t>(c, 1), c - 1);  // blocks
      if (shape == 3) col = std::clamp<int64_t>(r + (j - len / 2) * 3, 0, c - 1);                 // diagonals
      m.ci.push_back(col);
    }
    if (shape != 5) std::sort(m.ci.begin() + first, m.ci.end());  // shape 5: unsorted, repeats
    m.rp[size_t(r) + 1] = int64_t(m.ci.size());
  }
  m.nnz = int64_t(m.ci.size());
}

void fill_values(std::vector<double>& v, int kind, Rng& rng) {
  for (double& x : v) {
    switch (kind % 5) {
      case 0: x = 1.0; break;
      case 1: x = kFew[rng.below(1 + kind / 5 % 8)]; break;
      case 2: x = double(rng.below(2001) - 1000) / 256; break;
      case 3: x = double(rng.below(9) - 4); break;
      default: x = rng.below(8) ? double(rng.below(7) - 3) : kSpecial[rng.below(8)];
    }
  }
}

template <class T>
std::vector<T> cast(const std::vector<int64_t>& v, int64_t base) {
  std::vector<T> out(v.size());
  for (size_t i = 0; i < v.size(); ++i) out[i] = T(v[i] + base);
  return out;
}

std::string exact(double v) {  // every digit: a denormal's error shows
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

[[noreturn]] void wrong(const std::string& what) {
  std::fprintf(stderr, "fuzz_plan: %s\n", what.c_str());
  std::abort();
}

// The plan's y against a long double CSR product, where every input is finite; tolerance from
// the magnitude of each row's terms, so any summation order passes.
template <class V>
void check_product(const Matrix& m, const std::vector<V>& val, const std::vector<V>& x, V alpha, V beta,
                   const std::vector<V>& y0, const std::vector<V>& y) {
  auto finite = [](const std::vector<V>& v) {
    return std::all_of(v.begin(), v.end(), [](V a) { return std::isfinite(a); });
  };
  if (!finite(val) || !finite(x) || !finite(y0) || !std::isfinite(alpha) || !std::isfinite(beta)) return;
  const long double eps = std::numeric_limits<V>::epsilon();
  for (int64_t r = 0; r < m.rows; ++r) {
    long double sum = 0, mag = 0;
    for (int64_t k = m.rp[size_t(r)]; k < m.rp[size_t(r) + 1]; ++k) {
      const long double t = (long double)val[size_t(k)] * x[size_t(m.ci[size_t(k)])];
      sum += t;
      mag += std::fabs(t);
    }
    const long double y_in = beta == 0 ? 0 : (long double)beta * y0[size_t(r)];
    const long double ref = alpha * sum + y_in;
    // Relative rounding, and below the normal range an absolute half step per operation: a
    // product, a sum or alpha's scaling of a denormal sum rounds by up to denorm_min / 2 each.
    const int64_t len = m.rp[size_t(r) + 1] - m.rp[size_t(r)];
    const long double tol = (std::fabs((long double)alpha) * mag + std::fabs(y_in)) * eps * (len + 8) * 4 +
                            (std::fabs((long double)alpha) * (2 * len + 2) + 4) *
                                (long double)std::numeric_limits<V>::denorm_min();
    if (!std::isfinite((double)ref) ||
        std::fabs((long double)alpha) * mag > std::numeric_limits<V>::max() / 4)
      continue;
    if (!(std::fabs(y[size_t(r)] - ref) <= tol))
      wrong("row " + std::to_string(r) + ": y = " + exact(double(y[size_t(r)])) + ", expected " +
            exact(double(ref)) + " within " + exact(double(tol)));
  }
}

template <class V>
void execute_and_check(spmv_plan_t plan, const Matrix& m, const std::vector<V>& val, int ab, Rng& rng) {
  std::vector<V> x(size_t(m.cols)), y0(size_t(m.rows)), y;
  for (V& v : x) v = V(rng.below(17) - 8) / 4;
  for (V& v : y0) v = V(rng.below(9) - 4);
  const V alphas[] = {1, 0, -1, 2.5}, betas[] = {0, 1, -0.5, 3};
  const V alpha = alphas[ab & 3], beta = betas[(ab >> 2) & 3];
  y = y0;
  if (beta == 0) std::fill(y.begin(), y.end(), std::numeric_limits<V>::quiet_NaN());  // must not be read
  if (spmv_execute(plan, &alpha, x.data(), &beta, y.data(), nullptr) != SPMV_STATUS_SUCCESS)
    wrong(std::string("spmv_execute failed: ") + spmv_last_error());
  check_product(m, val, x, alpha, beta, y0, y);
}

// Independent validation: what spmv_plan must accept (sizes aside, checked by the caller).
bool valid(const Matrix& m, int64_t base) {
  if (m.rp[0] != base) return false;
  for (int64_t r = 0; r < m.rows; ++r)
    if (m.rp[size_t(r) + 1] < m.rp[size_t(r)]) return false;
  if (m.rp[size_t(m.rows)] != m.nnz + base) return false;  // written so that nothing overflows
  for (int64_t k = 0; k < m.nnz; ++k)
    if (m.ci[size_t(k)] < base || m.ci[size_t(k)] - base >= m.cols) return false;
  return true;
}

// The decoded descriptor on stderr, to turn a crash input into a regression test.
void dump(const Matrix& m, bool i64, bool f64, int64_t base, const char* format) {
  std::fprintf(stderr, "rows %lld cols %lld nnz %lld %s %s base %lld format %s\nrow_ptr", (long long)m.rows,
               (long long)m.cols, (long long)m.nnz, i64 ? "int64" : "int32", f64 ? "double" : "float",
               (long long)base, format ? format : "(null)");
  for (int64_t v : m.rp) std::fprintf(stderr, " %lld", (long long)v);
  std::fprintf(stderr, "\ncol_idx");
  for (int64_t v : m.ci) std::fprintf(stderr, " %lld", (long long)v);
  std::fprintf(stderr, "\nvalues");
  for (double v : m.val) std::fprintf(stderr, " %.17g", v);
  std::fprintf(stderr, "\n");
}

}  // namespace

// SPMVJIT_TIERED_COMPILE=0: the specialized kernels (one per epilogue: alpha and beta select
// among them) compile at once, so execute runs what a long-lived plan runs, and each new kernel
// costs one compile instead of a quick one plus a background one. The caller's setting wins.
extern "C" int LLVMFuzzerInitialize(int*, char***) {
  setenv("SPMVJIT_TIERED_COMPILE", "0", 0);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Bytes in{data, size};
  const int flags = int(in.take(1)), format_pick = int(in.take(1));
  const bool i64 = flags & 1, f64 = flags & 2, update = flags & 16;
  const int64_t base = (flags >> 2) & 1;
  const uint64_t rows_raw = in.take(2), cols_raw = in.take(2);
  const int shape = int(in.take(1) % 6), mean = int(in.take(1) % 33), value_kind = int(in.take(1));
  const int ab = int(in.take(1)), corruptions = int(in.take(1) % 9);

  // Sizes: small and real, or refused ones with arrays of one entry (never read past it).
  Matrix m;
  bool refused_size = false;
  if (flags & 64) {
    const int64_t* list = i64 ? kRefusedRows64 : kRefusedRows32;
    const size_t count = i64 ? std::size(kRefusedRows64) : std::size(kRefusedRows32);
    m.rows = list[rows_raw % count];
    refused_size = true;
  } else {
    m.rows = int64_t(rows_raw % 1025);
  }
  m.cols = flags & 32 ? kAnyCols[cols_raw % std::size(kAnyCols)] : int64_t(cols_raw % 1025);
  Rng rng{0x5eed};
  const size_t tail = std::min<size_t>(in.n, 11 * size_t(corruptions));
  for (size_t i = tail; i < in.n; ++i) rng.s = rng.s * 131 + in.p[i];
  if (!refused_size) {
    generate(m, shape, mean, rng);
  } else {
    m.rp.assign(1, 0);
  }
  m.val.resize(m.ci.size());
  fill_values(m.val, value_kind, rng);
  for (int64_t& v : m.rp) v += base;
  for (int64_t& v : m.ci) v += base;

  for (int i = 0; i < corruptions; ++i) {  // each: what, where (16 bits), new value (64 bits)
    const int what = int(in.take(1) % 5);
    const uint64_t at = in.take(2), raw = in.take(8);
    const int64_t v = raw & 0x100 ? int64_t(raw) : int64_t(raw & 0xff) - 128 + base;  // mostly near
    if (what == 0) m.rp[at % m.rp.size()] = v;
    if (what == 1 && !m.ci.empty()) {  // a raw value, or a shift by up to 128 (wrapping)
      int64_t& c = m.ci[at % m.ci.size()];
      c = raw & 0x100 ? v : int64_t(uint64_t(c) + uint64_t(v) - uint64_t(base));
    }
    if (what == 2 && !m.val.empty()) m.val[at % m.val.size()] = kSpecial[raw % 8];
    if (what == 3 && m.rp.size() > 1) {  // rp has one entry when rows is a refused size
      const size_t i = at % (m.rp.size() - 1);
      std::swap(m.rp[i], m.rp[i + 1]);
    }
    if (what == 4) m.nnz = int64_t(raw & 0x200 ? raw >> 1 : uint64_t(m.nnz) + (raw & 7) - 3);  // nnz mismatch
  }
  if (m.nnz < 0 || m.nnz > int64_t(m.ci.size())) {  // arrays must be as long as declared: extend
    if (m.nnz < 0 || m.nnz > int64_t(1) << 20)
      m.nnz = i64 ? kI64Max : int64_t(1) << 31;  // refused
    else
      m.ci.resize(size_t(m.nnz), base), m.val.resize(size_t(m.nnz), 1.0);
  }
  refused_size = refused_size || m.nnz > int64_t(m.ci.size());
  if (!i64)  // an int32 array holds what the descriptor's type can hold; the rest is a caller bug
    for (int64_t& v : m.rp) v = int32_t(v);
  if (!i64)
    for (int64_t& v : m.ci) v = int32_t(v);

  static const std::vector<std::string> names = [] {
    std::vector<std::string> n{"", "auto", "no-such-format"};
    for (const spmvjit::Format* f : spmvjit::all_formats()) n.push_back(f->name());
    return n;
  }();
  const size_t pick = size_t(format_pick) % (names.size() + 1);  // the last one: NULL
  const char* format = pick < names.size() ? names[pick].c_str() : nullptr;

  const auto rp32 = cast<int32_t>(m.rp, 0), ci32 = cast<int32_t>(m.ci, 0);
  const std::vector<float> valf(m.val.begin(), m.val.end());
  spmv_csr_t a{m.rows,
               m.cols,
               m.nnz,
               i64 ? (const void*)m.rp.data() : rp32.data(),
               i64 ? (const void*)m.ci.data() : ci32.data(),
               f64 ? (const void*)m.val.data() : valf.data(),
               i64 ? SPMV_INDEX_INT64 : SPMV_INDEX_INT32,
               f64 ? SPMV_VALUE_DOUBLE : SPMV_VALUE_FLOAT,
               int(base),
               SPMV_MEMORY_HOST};
  spmv_options_t o;
  spmv_options_init(&o);
  o.backend = SPMV_BACKEND_CPU;
  o.threads = 1 + (flags >> 3 & 1);
  o.cache_dir = "";  // memory only: the fuzzer must not fill a disk
  o.format = format;
  o.log_level = SPMV_LOG_OFF;

  if (std::getenv("SPMVJIT_FUZZ_DUMP")) dump(m, i64, f64, base, format);  // for a regression test

  spmv_plan_t plan = nullptr;
  const spmv_status_t st = spmv_plan(&plan, &a, &o);
  const bool known_format = pick != 2;
  const bool accept = !refused_size && m.rows >= 0 && m.cols >= 0 && m.cols < (int64_t(1) << 59) &&
                      (i64 || m.cols <= INT32_MAX - base) && known_format && valid(m, base);
  if (st == SPMV_STATUS_SUCCESS && !accept) wrong("spmv_plan accepted an invalid descriptor");
  if (st != SPMV_STATUS_SUCCESS) {
    const bool forced = pick > 2 && pick < names.size();
    // A valid matrix is planned: a forced format may be inapplicable (UNSUPPORTED), nothing else.
    if (accept && !(forced && st == SPMV_STATUS_UNSUPPORTED))
      wrong(std::string("spmv_plan refused a valid matrix: ") + spmv_last_error());
    if (st == SPMV_STATUS_INTERNAL_ERROR || st == SPMV_STATUS_COMPILE_FAILED ||
        st == SPMV_STATUS_EXECUTION_FAILED)
      wrong(std::string("spmv_plan: ") + spmv_last_error());
    return 0;
  }
  for (int64_t& v : m.rp) v -= base;  // zero-based for the reference product
  for (int64_t& v : m.ci) v -= base;
  if (m.cols <= kMaxExecutedCols) {
    if (f64)
      execute_and_check(plan, m, m.val, ab, rng);
    else
      execute_and_check(plan, m, valf, ab, rng);
    if (update) {  // new values, same pattern: other codecs, a value map, or a reconversion
      fill_values(m.val, value_kind / 5 + 1, rng);
      const std::vector<float> newf(m.val.begin(), m.val.end());
      if (spmv_plan_update_values(plan, f64 ? (const void*)m.val.data() : newf.data(), SPMV_MEMORY_HOST) !=
          SPMV_STATUS_SUCCESS)
        wrong(std::string("spmv_plan_update_values failed: ") + spmv_last_error());
      if (f64)
        execute_and_check(plan, m, m.val, ab >> 4, rng);
      else
        execute_and_check(plan, m, newf, ab >> 4, rng);
    }
  }
  if (spmv_plan_destroy(plan) != SPMV_STATUS_SUCCESS) wrong("spmv_plan_destroy failed");
  return 0;
}
