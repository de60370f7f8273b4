// Matrix Market reader internals: finding a file's duplicate entries and the lines they are on.
#pragma once

#include <cstdint>
#include <string_view>
#include <utility>
#include <vector>

namespace spmvjit::mtx {

// Zero-based position of a file entry; symmetric files compare on the lower triangle.
using Position = std::pair<int64_t, int64_t>;

struct DuplicateReport {
  int64_t count = 0;                 // entries repeating the position of an earlier entry
  int64_t first = -1, earlier = -1;  // file-order indices: the first repeat and what it repeats
  bool mirrored = false;             // the two are (i, j) and (j, i) of a symmetric file
};

// Only positions in `summed` (those the CSR build merged, in any order, repeats allowed) are
// looked at, so the cost is one pass over the entries and memory for the duplicates alone.
DuplicateReport find_duplicates(const std::vector<int64_t>& row, const std::vector<int64_t>& col,
                                bool symmetric, std::vector<Position> summed);

// 1-based line numbers of coordinate entries given by file-order index (ascending or not),
// counted as the reader counts them: the banner, then blank and '%' lines skipped.
std::vector<int64_t> entry_lines(std::string_view text, const std::vector<int64_t>& entries);

}  // namespace spmvjit::mtx
