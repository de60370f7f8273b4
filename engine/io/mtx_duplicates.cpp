// Duplicate entries of a Matrix Market file: which, how many, and on which lines (rare path).
#include "engine/io/mtx_duplicates.hpp"

#include <algorithm>
#include <cstring>
#include <unordered_map>

namespace spmvjit::mtx {
namespace {

Position key(int64_t r, int64_t c, bool symmetric) {
  return symmetric && r < c ? Position{c, r} : Position{r, c};
}

struct PositionHash {
  size_t operator()(const Position& p) const {
    return size_t(uint64_t(p.first) * 0x9e3779b97f4a7c15ULL ^ uint64_t(p.second));
  }
};

}  // namespace

DuplicateReport find_duplicates(const std::vector<int64_t>& row, const std::vector<int64_t>& col,
                                bool symmetric, std::vector<Position> summed) {
  for (Position& p : summed) p = key(p.first, p.second, symmetric);
  std::sort(summed.begin(), summed.end());
  summed.erase(std::unique(summed.begin(), summed.end()), summed.end());
  DuplicateReport d;
  std::unordered_map<Position, int64_t, PositionHash> seen;  // position -> its first entry
  seen.reserve(summed.size());
  for (size_t k = 0; k < row.size(); ++k) {
    const Position p = key(row[k], col[k], symmetric);
    if (!std::binary_search(summed.begin(), summed.end(), p)) continue;
    const auto [it, fresh] = seen.emplace(p, int64_t(k));
    if (fresh) continue;
    if (d.count++ == 0) {
      d.first = int64_t(k);
      d.earlier = it->second;
      d.mirrored = row[k] != row[size_t(it->second)];
    }
  }
  return d;
}

std::vector<int64_t> entry_lines(std::string_view text, const std::vector<int64_t>& entries) {
  std::vector<int64_t> lines(entries.size(), 0);
  if (entries.empty()) return lines;
  const int64_t last = *std::max_element(entries.begin(), entries.end());
  const char* p = text.data();
  const char* const end = p + text.size();
  int64_t line = 0, data_lines = 0;  // the size line is data line 0, entry k is data line k + 1
  while (p != end && data_lines <= last + 1) {
    const char* nl = static_cast<const char*>(std::memchr(p, '\n', size_t(end - p)));
    const char* e = nl ? nl : end;
    ++line;
    const char* q = p;
    while (q != e && (*q == ' ' || *q == '\t' || *q == '\r' || *q == '\v' || *q == '\f')) ++q;
    if (line > 1 && q != e && *q != '%') {
      for (size_t i = 0; i < entries.size(); ++i)
        if (entries[i] + 1 == data_lines) lines[i] = line;
      ++data_lines;
    }
    p = nl ? nl + 1 : end;
  }
  return lines;
}

}  // namespace spmvjit::mtx
