// Generators built from whole-matrix structure rather than row by row: the R-MAT graph (edges
// drawn anywhere, then bucketed by row), random permutations and block-diagonal replication.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "engine/gen/gen_common.hpp"
#include "engine/io/matrix_market.hpp"

namespace spmvjit::gen {
namespace {

// Edges per random stream: R-MAT draws edges, not rows, so streams are per chunk of edges.
constexpr int64_t kEdgeChunk = int64_t(1) << 16;

// The quadrant thresholds of R-MAT as 16-bit integers: a draw u in [0, 65536) picks A when u < a,
// B when u < ab, C when u < abc, else D. Integers keep the choice identical on every platform.
struct Quadrants {
  uint32_t a, ab, abc;
};

// A bijection of [0, 2^bits) that scatters labels: multiply by an odd number and add (both
// invertible modulo 2^bits), then xor-shift right (invertible), three times. Graph500 scrambles
// vertex labels likewise, so that a vertex's degree says nothing about its index.
class Scramble {
 public:
  Scramble(int bits, uint64_t seed) : mask_((uint64_t(1) << bits) - 1), shift_((bits + 1) / 2) {
    Rng rng(seed, kRmatLabelStream, 0);
    for (int i = 0; i < 3; ++i) {
      mul_[i] = rng.next() | 1;
      add_[i] = rng.next();
    }
  }
  uint64_t operator()(uint64_t x) const {
    for (int i = 0; i < 3; ++i) {
      x = (x * mul_[i] + add_[i]) & mask_;
      x ^= x >> shift_;
    }
    return x;
  }

 private:
  uint64_t mask_;
  int shift_;
  uint64_t mul_[3], add_[3];
};

// One R-MAT edge: `scale` levels, each choosing a quadrant from 16 random bits (four levels per
// 64-bit draw). Returns (row << 32) | col before scrambling. Branch-free: the quadrant is random,
// so a branch on it would be mispredicted half the time.
inline uint64_t rmat_edge(Rng& rng, int scale, const Quadrants& q) {
  uint64_t row = 0, col = 0, bits = 0;
  for (int level = 0; level < scale; ++level) {
    if (level % 4 == 0) bits = rng.next();
    const uint32_t u = uint32_t(bits & 0xFFFF);
    bits >>= 16;
    // Row bit: C or D. Column bit: B or D, i.e. an odd number of the three thresholds passed.
    row = row << 1 | uint64_t(u >= q.ab);
    col = col << 1 | uint64_t((u >= q.a) ^ (u >= q.ab) ^ (u >= q.abc));
  }
  return row << 32 | col;
}

Quadrants quadrants_from(const Params& p) {
  const double a = p.real(2, 0.57, 0.0, 1.0);
  const double b = p.real(3, 0.19, 0.0, 1.0);
  const double c = p.real(4, 0.19, 0.0, 1.0);
  if (a + b + c > 1.0 + 1e-9)
    p.bad("A+B+C=" + std::to_string(a + b + c) + " must be at most 1 (D = 1-A-B-C)");
  auto level = [](double x) { return uint32_t(std::min<int64_t>(std::llround(x * 65536.0), 65536)); };
  return {level(a), level(a + b), level(a + b + c)};
}

// The edges of an R-MAT graph (row << 32 | col, scrambled), grouped by block of rows: block k holds
// rows [k << shift, (k+1) << shift) in edges[start[k], start[k+1]). Grouping is a radix pass with
// one histogram per chunk of edges, so every position is fixed by the chunks, not the threads, and
// no two threads write one counter (no atomics: they cost more than drawing the edge on a VM).
// `spare` is the array the edges were drawn into, handed on as room for the columns: every fresh
// array costs its page faults, a large part of the time here.
struct EdgeBlocks {
  std::vector<uint64_t> edges;
  std::vector<int64_t> start;
  int shift = 0;
  std::vector<int64_t> spare;
};

EdgeBlocks draw_edges(int64_t edges, int scale, const Quadrants& q, uint64_t seed) {
  EdgeBlocks out;
  out.shift = std::max(scale - 10, 0);  // at most 1024 blocks: small histograms
  const int64_t blocks = int64_t(1) << (scale - out.shift);
  const int64_t chunks = (edges + kEdgeChunk - 1) / kEdgeChunk;
  std::vector<int64_t>& drawn = out.spare;
  assign_huge(drawn, size_t(edges), int64_t(0));
  std::vector<int64_t> at(size_t(chunks * blocks), 0);  // per chunk: counts, then write positions
  const Scramble scramble(scale, seed);
  parallel_for(edges, kEdgeChunk, [&](int64_t b, int64_t e) {
    Rng rng(seed, kRmatEdgeStream, uint64_t(b / kEdgeChunk));
    int64_t* count = at.data() + b / kEdgeChunk * blocks;
    for (int64_t i = b; i < e; ++i) {
      const uint64_t edge = rmat_edge(rng, scale, q);
      const uint64_t row = scramble(edge >> 32), col = scramble(edge & 0xFFFFFFFFu);
      drawn[size_t(i)] = int64_t(row << 32 | col);
      ++count[row >> out.shift];
    }
  });
  // Block-major exclusive scan: block k's edges, chunk by chunk, in edge order within a chunk.
  out.start.assign(size_t(blocks) + 1, 0);
  int64_t sum = 0;
  for (int64_t k = 0; k < blocks; ++k) {
    out.start[size_t(k)] = sum;
    for (int64_t c = 0; c < chunks; ++c) {
      const int64_t n = at[size_t(c * blocks + k)];
      at[size_t(c * blocks + k)] = sum;
      sum += n;
    }
  }
  out.start[size_t(blocks)] = sum;
  assign_huge(out.edges, size_t(edges), uint64_t(0));
  parallel_for(edges, kEdgeChunk, [&](int64_t b, int64_t e) {
    int64_t* pos = at.data() + b / kEdgeChunk * blocks;
    for (int64_t i = b; i < e; ++i) {
      const uint64_t edge = uint64_t(drawn[size_t(i)]);
      out.edges[size_t(pos[edge >> 32 >> out.shift]++)] = edge;
    }
  });
  return out;
}

// Within one block: counting sort by row into cols[] (at the edges' own positions), then each row
// sorted and its repeats dropped. Writes the row's first position (start) and its distinct length.
void sort_block(const EdgeBlocks& g, int64_t k, int64_t* cols, int64_t* start, int64_t* len) {
  const int64_t first_row = k << g.shift, rows = int64_t(1) << g.shift;
  const int64_t b = g.start[size_t(k)], e = g.start[size_t(k) + 1];
  thread_local std::vector<int64_t> cursor;
  cursor.assign(size_t(rows) + 1, 0);
  for (int64_t i = b; i < e; ++i) ++cursor[size_t((g.edges[size_t(i)] >> 32) - first_row) + 1];
  for (int64_t r = 0; r < rows; ++r) cursor[size_t(r) + 1] += cursor[size_t(r)];
  for (int64_t r = 0; r < rows; ++r) start[first_row + r] = b + cursor[size_t(r)];
  for (int64_t i = b; i < e; ++i) {
    const uint64_t edge = g.edges[size_t(i)];
    cols[b + cursor[size_t((edge >> 32) - first_row)]++] = int64_t(edge & 0xFFFFFFFFu);
  }
  for (int64_t r = first_row; r < first_row + rows; ++r) {
    int64_t* lo = cols + start[r];
    int64_t* hi = cols + (r + 1 < first_row + rows ? start[r + 1] : e);
    std::sort(lo, hi);
    len[r] = std::unique(lo, hi) - lo;
  }
}

// The CSR of ones from the grouped edges, repeated edges kept once. The columns are sorted in
// the spare array at the edges' positions, then moved left over the dropped repeats (one serial
// pass: each row moves to or below where it was, so rows in order never overwrite unread ones).
HostCsr<int64_t, double> csr_from_blocks(int64_t n, EdgeBlocks& g) {
  HostCsr<int64_t, double> a;
  a.rows = a.cols = n;
  a.col_idx = std::move(g.spare);
  std::vector<int64_t> start;
  assign_huge(start, size_t(n), int64_t(0));
  assign_huge(a.row_ptr, size_t(n) + 1, int64_t(0));
  parallel_for(int64_t(g.start.size()) - 1, 1, [&](int64_t b, int64_t e) {
    for (int64_t k = b; k < e; ++k) sort_block(g, k, a.col_idx.data(), start.data(), a.row_ptr.data() + 1);
  });
  g = EdgeBlocks();  // 8 bytes an edge, no longer needed
  int64_t* c = a.col_idx.data();
  for (int64_t r = 0; r < n; ++r) {
    const int64_t len = a.row_ptr[size_t(r) + 1];
    a.row_ptr[size_t(r) + 1] += a.row_ptr[size_t(r)];
    if (a.row_ptr[size_t(r)] != start[size_t(r)])
      std::memmove(c + a.row_ptr[size_t(r)], c + start[size_t(r)], size_t(len) * sizeof(int64_t));
  }
  a.col_idx.resize(size_t(a.row_ptr.back()));
  assign_huge(a.val, size_t(a.row_ptr.back()), 1.0);
  return a;
}

}  // namespace

// Graph500's R-MAT: EDGEFACTOR * 2^SCALE directed edges, each chosen by descending SCALE levels of
// a 2 x 2 quadrant split with probabilities A, B, C, D; the edge list is then a CSR of ones with
// repeated edges kept once. Self loops stay: they are part of the graph Graph500 draws.
HostCsr<int64_t, double> gen_rmat(const Params& p, uint64_t seed) {
  const int scale = int(p.integer(0, 0, 1, 26));
  const int64_t edge_factor = p.integer(1, 16, 1, kMaxNnz);
  const Quadrants q = quadrants_from(p);
  const int64_t n = int64_t(1) << scale;
  const int64_t edges = checked_mul(n, edge_factor, "EDGEFACTOR*2^SCALE");
  EdgeBlocks g = draw_edges(edges, scale, q, seed);
  return csr_from_blocks(n, g);
}

// A uniformly random permutation (Fisher-Yates on one stream), one entry per row.
HostCsr<int64_t, double> gen_perm(const Params& p, uint64_t seed) {
  const int64_t n = p.integer(0, 0, 1, kMaxNnz);
  std::vector<int64_t> target;
  assign_huge(target, size_t(n), int64_t(0));
  for (int64_t i = 0; i < n; ++i) target[size_t(i)] = i;
  Rng rng(seed, kPermStream, 0);
  for (int64_t i = n - 1; i > 0; --i) std::swap(target[size_t(i)], target[size_t(rng.below(i + 1))]);
  auto fill = [&](int64_t r, int64_t* c, double* v, int64_t) {
    Rng values(seed, kFillStream, uint64_t(r));
    c[0] = target[size_t(r)];
    v[0] = values.value();
  };
  return build(
      p, n, n, [](int64_t) { return int64_t(1); }, fill);
}

// Copies of one real matrix along the diagonal: its structure and values, at any size.
HostCsr<int64_t, double> gen_replicate(const Params& p) {
  const std::string path = p.text(0);
  const int64_t min_nnz = p.integer(1, 10000000, 1, kMaxNnz);
  const HostCsr<int64_t, double> m = read_matrix_market(path);
  if (m.nnz() == 0) p.bad("'" + path + "' has no nonzeros");
  const int64_t copies = (min_nnz + m.nnz() - 1) / m.nnz();
  checked_mul(copies, m.nnz(), "the number of nonzeros");
  const int64_t rows = checked_mul(copies, m.rows, "the number of rows");
  const int64_t cols = checked_mul(copies, m.cols, "the number of columns");
  auto len = [&](int64_t r) { return row_len(m, r % m.rows); };
  auto fill = [&](int64_t r, int64_t* c, double* v, int64_t k) {
    const int64_t src = m.row_ptr[size_t(r % m.rows)], shift = (r / m.rows) * m.cols;
    for (int64_t i = 0; i < k; ++i) {
      c[i] = m.col_idx[size_t(src + i)] + shift;
      v[i] = m.val[size_t(src + i)];
    }
  };
  return build(p, rows, cols, len, fill);
}

}  // namespace spmvjit::gen
