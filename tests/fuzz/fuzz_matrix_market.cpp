// libFuzzer target: parse_matrix_market on arbitrary text; errors are fine, crashes and bad CSR are not.
#include <charconv>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "core/error.hpp"
#include "engine/io/matrix_market.hpp"

namespace {

// The reader allocates rows + 1 row pointers and loops over the columns of an array file before
// reading a value, as its format asks; sizes up to 2^34 pass its check. Those allocations and
// loops are the resource limits work of another branch: skip such inputs here, so the fuzzer
// spends its time on the parser instead of stopping at its first huge (but intended) malloc.
constexpr int64_t kMaxFuzzedDimension = int64_t(1) << 20;
constexpr int64_t kReaderMaxDimension = int64_t(1) << 34;

bool blank(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f'; }

// True when the size line (the first non-comment line after the banner) declares a dimension the
// reader would accept but that would allocate or loop more than a fuzz run should.
bool declares_huge_dimension(std::string_view text) {
  size_t nl = text.find('\n');
  while (nl != std::string_view::npos) {
    text.remove_prefix(nl + 1);
    nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    size_t b = 0;
    while (b < line.size() && blank(line[b])) ++b;
    if (b == line.size() || line[b] == '%') continue;
    for (int field = 0; field < 2; ++field) {
      while (b < line.size() && blank(line[b])) ++b;
      if (b < line.size() && line[b] == '+') ++b;
      int64_t v = 0;
      auto [p, ec] = std::from_chars(line.data() + b, line.data() + line.size(), v);
      if (ec != std::errc()) return false;
      if (v > kMaxFuzzedDimension && v <= kReaderMaxDimension) return true;
      b = size_t(p - line.data());
    }
    return false;
  }
  return false;
}

[[noreturn]] void broken(const char* what, int64_t where) {
  std::fprintf(stderr, "fuzz_matrix_market: parsed CSR is broken: %s at %lld\n", what,
               static_cast<long long>(where));
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  if (declares_huge_dimension(text)) return 0;
  try {
    const auto a = spmvjit::parse_matrix_market(text, "fuzz");
    // What the reader promises: zero-based CSR, sorted unique columns in range.
    if (a.rows < 0 || a.cols < 0 || a.row_ptr.size() != size_t(a.rows) + 1) broken("shape", a.rows);
    if (a.row_ptr[0] != 0) broken("row_ptr[0]", 0);
    if (a.col_idx.size() != a.val.size() || a.row_ptr.back() != int64_t(a.col_idx.size()))
      broken("nnz", a.row_ptr.back());
    for (int64_t r = 0; r < a.rows; ++r) {
      const int64_t b = a.row_ptr[size_t(r)], e = a.row_ptr[size_t(r) + 1];
      if (e < b) broken("row_ptr not monotone", r);
      for (int64_t k = b; k < e; ++k) {
        const int64_t c = a.col_idx[size_t(k)];
        if (c < 0 || c >= a.cols) broken("column out of range", k);
        if (k > b && c <= a.col_idx[size_t(k) - 1]) broken("columns not sorted and unique", k);
      }
    }
  } catch (const spmvjit::Error&) {
    // Malformed or unsupported input, reported as such: what the reader should do.
  }
  return 0;
}
