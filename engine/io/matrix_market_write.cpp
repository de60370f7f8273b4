// Matrix Market writer: "coordinate real general", one-based, values that read back exactly.
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <string>

#include "engine/io/matrix_market.hpp"

namespace spmvjit {
namespace {

std::string os_error(const std::string& what, const std::string& path) {
  return what + " '" + path + "': " + std::strerror(errno);
}

}  // namespace

void write_matrix_market(const std::string& path, const HostCsr<int64_t, double>& a) {
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) fail(SPMV_STATUS_IO_ERROR, os_error("cannot open", path) + " for writing");
  std::string buf;
  constexpr size_t kFlushAt = size_t(1) << 20;
  buf.reserve(kFlushAt + 128);
  bool ok = true;
  auto flush = [&] {
    if (!buf.empty() && std::fwrite(buf.data(), 1, buf.size(), f) != buf.size()) ok = false;
    buf.clear();
  };
  buf += "%%MatrixMarket matrix coordinate real general\n";
  buf += std::to_string(a.rows) + " " + std::to_string(a.cols) + " " + std::to_string(a.nnz()) + "\n";
  char line[128];
  char* const lend = line + sizeof line;
  for (int64_t r = 0; r < a.rows && ok; ++r) {
    for (int64_t k = a.row_ptr[size_t(r)]; k < a.row_ptr[size_t(r) + 1]; ++k) {
      // to_chars with precision 17 prints exactly what %.17g prints, without printf's overhead.
      // 128 bytes always suffice (two 19-digit indices and a 24-character double).
      char* p = std::to_chars(line, lend - 100, r + 1).ptr;
      *p++ = ' ';
      p = std::to_chars(p, lend - 60, a.col_idx[size_t(k)] + 1).ptr;
      *p++ = ' ';
      p = std::to_chars(p, lend - 2, a.val[size_t(k)], std::chars_format::general, 17).ptr;
      *p++ = '\n';
      buf.append(line, size_t(p - line));
      if (buf.size() >= kFlushAt) flush();
    }
  }
  flush();
  if (std::fclose(f) != 0) ok = false;
  if (!ok) fail(SPMV_STATUS_IO_ERROR, os_error("cannot write", path));
}

}  // namespace spmvjit
