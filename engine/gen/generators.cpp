// Synthetic matrix generators: stencils, random, power-law, dense rows, banded, blocked, block FEM;
// the spec parser and value suffixes. The newer kinds live in generators_graph.cpp and
// generators_shapes.cpp.
#include "engine/gen/generators.hpp"

#include <algorithm>
#include <cmath>
#include <string_view>
#include <vector>

#include "engine/gen/gen_common.hpp"

namespace spmvjit {
namespace {

using namespace gen;

constexpr const char* kHelp[] = {
    "poisson2d:N                        5-point Laplacian on an N x N grid (4, -1)",
    "poisson3d:N                        7-point Laplacian on an N x N x N grid (6, -1)",
    "stencil27:N                        27-point stencil on an N x N x N grid (26, -1)",
    "random:ROWS[:MIN=1:MAX=40[:COLS=ROWS]]  row lengths uniform in [MIN, MAX], random columns",
    "powerlaw:ROWS[:ALPHA=2.0[:MAXLEN=min(ROWS/10,100000)]]  power-law row lengths in "
    "[1, MAXLEN]",
    "denserows:ROWS[:K=10[:BASE=8]]     rows of about BASE nonzeros plus K fully dense rows",
    "short:ROWS[:MAX=2]                 row lengths uniform in [0, MAX]: many empty rows",
    "dense:N[:M=N]                      dense N x M matrix",
    "diag:N[:BANDS=5]                   N x N band of BANDS adjacent diagonals around the main one",
    "blocks:ROWS[:B=4[:BLOCKS_PER_ROW=4]]  rows made of runs of B consecutive, B-aligned columns",
    "blockfem:N[:B=3]                   27-point stencil on N^3 nodes, B unknowns each: dense B x B blocks "
    "(3D FEM)",
    "rmat:SCALE[:EDGEFACTOR=16[:A=0.57[:B=0.19[:C=0.19]]]]  Graph500 R-MAT graph: 2^SCALE vertices "
    "(scrambled), EDGEFACTOR*2^SCALE edges drawn, duplicates merged; values 1",
    "varband:N[:MINW=2[:MAXW=64]]       N x N band whose half-widths vary smoothly in [MINW, MAXW]",
    "lpwide:ROWS[:RATIO=20[:MIN=2[:MAX=200]]]  ROWS x RATIO*ROWS, log-uniform row lengths in "
    "[MIN, MAX] (LP-like)",
    "circuit:ROWS[:BIG=4[:BIGLEN=50000]]  diagonal, 0-5 entries within +-64, dense column 0, BIG rows "
    "of ~BIGLEN",
    "perm:N                             random N x N permutation matrix",
    "replicate:PATH[:MINNNZ=10000000]   copies of a Matrix Market file (PATH without ':' or '@') along "
    "the diagonal up to MINNNZ nonzeros",
};

// The value suffixes: SPEC@KIND replaces the values the kind would give.
constexpr const char* kValueHelp[] = {
    "@random                          values uniform in [-1, 1)",
    "@few                             values drawn from the 8 integers -4..-1, 1..4 (few distinct)",
    "@ones                            every value 1",
};

// Number of in-range neighbours (-1, 0, +1) of coordinate k on a line of n points.
inline int64_t span3(int64_t k, int64_t n) { return 1 + (k > 0) + (k < n - 1); }

HostCsr<int64_t, double> stencil(const Params& p, int dims, bool full) {
  const int64_t n = p.integer(0, 0, 1, kMaxNnz);
  const int64_t plane = checked_mul(n, n, "N^2");
  const int64_t rows = dims == 2 ? plane : checked_mul(plane, n, "N^3");
  const int64_t per_row = dims == 2 ? 5 : full ? 27 : 7;
  checked_mul(rows, per_row, "the number of nonzeros");
  const double diag = double(per_row - 1);
  auto coords = [n, plane](int64_t r, int64_t& x, int64_t& y, int64_t& z) {
    x = r % n;
    y = (r / n) % n;
    z = r / plane;
  };
  auto len = [&](int64_t r) {
    int64_t x, y, z;
    coords(r, x, y, z);
    if (full) return span3(x, n) * span3(y, n) * span3(z, n);
    const int64_t l = 1 + (x > 0) + (x < n - 1) + (y > 0) + (y < n - 1);
    return dims == 2 ? l : l + (z > 0) + (z < n - 1);
  };
  auto fill = [&](int64_t r, int64_t* c, double* v, int64_t) {
    int64_t x, y, z;
    coords(r, x, y, z);
    int64_t k = 0;
    auto put = [&](int64_t col, double value) {
      c[k] = col;
      v[k++] = value;
    };
    if (full) {
      for (int64_t dz = -1; dz <= 1; ++dz)
        for (int64_t dy = -1; dy <= 1; ++dy)
          for (int64_t dx = -1; dx <= 1; ++dx) {
            if (z + dz < 0 || z + dz >= n || y + dy < 0 || y + dy >= n || x + dx < 0 || x + dx >= n) continue;
            const bool centre = dx == 0 && dy == 0 && dz == 0;
            put(r + dz * plane + dy * n + dx, centre ? diag : -1.0);
          }
      return;
    }
    if (dims == 3 && z > 0) put(r - plane, -1.0);
    if (y > 0) put(r - n, -1.0);
    if (x > 0) put(r - 1, -1.0);
    put(r, diag);
    if (x < n - 1) put(r + 1, -1.0);
    if (y < n - 1) put(r + n, -1.0);
    if (dims == 3 && z < n - 1) put(r + plane, -1.0);
  };
  return build(p, rows, rows, len, fill);
}

// Rows whose lengths come from length(rng) and whose columns are distinct and random.
template <class Length>
HostCsr<int64_t, double> random_rows(const Params& p, int64_t rows, int64_t cols, uint64_t seed,
                                     Length length) {
  auto len = [&](int64_t r) {
    Rng rng(seed, 0, uint64_t(r));
    return length(r, rng);
  };
  auto fill = [&](int64_t r, int64_t* c, double* v, int64_t k) {
    Rng rng(seed, 1, uint64_t(r));
    sample_distinct(rng, cols, k, c);
    for (int64_t i = 0; i < k; ++i) v[i] = rng.value();
  };
  return build(p, rows, cols, len, fill);
}

HostCsr<int64_t, double> gen_random(const Params& p, uint64_t seed) {
  const int64_t rows = p.integer(0, 0, 1, kMaxNnz);
  const int64_t cols = p.integer(3, rows, 1, kMaxNnz);
  const int64_t lo = p.integer(1, 1, 0, cols);
  const int64_t hi = std::min(p.integer(2, std::max<int64_t>(40, lo), lo, kMaxNnz), cols);
  checked_mul(rows, hi, "ROWS*MAX");
  return random_rows(p, rows, cols, seed, [lo, hi](int64_t, Rng& rng) { return rng.between(lo, hi); });
}

HostCsr<int64_t, double> gen_powerlaw(const Params& p, uint64_t seed) {
  const int64_t rows = p.integer(0, 0, 1, kMaxNnz);
  const double alpha = p.real(1, 2.0, 0.0, 100.0);
  const int64_t maxlen = p.integer(2, std::min<int64_t>(std::max<int64_t>(rows / 10, 1), 100000), 1, rows);
  // Inverse CDF of the continuous power law x^-alpha on [1, maxlen + 1), floored: P(len = k)
  // falls like k^-alpha, as in a Zipf distribution.
  const double top = double(maxlen) + 1.0;
  const double e = 1.0 - alpha;
  const double top_e = std::pow(top, e);
  return random_rows(p, rows, rows, seed, [=](int64_t, Rng& rng) {
    const double u = rng.unit();
    const double x = std::fabs(e) < 1e-12 ? std::pow(top, u) : std::pow(1.0 + u * (top_e - 1.0), 1.0 / e);
    return std::clamp<int64_t>(int64_t(x), 1, maxlen);
  });
}

HostCsr<int64_t, double> gen_denserows(const Params& p, uint64_t seed) {
  const int64_t rows = p.integer(0, 0, 1, kMaxNnz);
  const int64_t k = p.integer(1, std::min<int64_t>(10, rows), 0, rows);
  const int64_t base = p.integer(2, 8, 0, rows);
  checked_mul(k, rows, "K*ROWS");
  std::vector<int64_t> dense(size_t(k), 0);
  Rng pick(seed, 2, 0);
  sample_distinct(pick, rows, k, dense.data());
  // Lengths uniform in [BASE - BASE/2, BASE + BASE/2]: mean BASE, some spread.
  const int64_t lo = base - base / 2, hi = std::min(base + base / 2, rows);
  return random_rows(p, rows, rows, seed, [&](int64_t r, Rng& rng) {
    return std::binary_search(dense.begin(), dense.end(), r) ? rows : rng.between(lo, hi);
  });
}

HostCsr<int64_t, double> gen_short(const Params& p, uint64_t seed) {
  const int64_t rows = p.integer(0, 0, 1, kMaxNnz);
  const int64_t hi = p.integer(1, std::min<int64_t>(2, rows), 0, rows);
  checked_mul(rows, hi, "ROWS*MAX");
  return random_rows(p, rows, rows, seed, [hi](int64_t, Rng& rng) { return rng.between(0, hi); });
}

HostCsr<int64_t, double> gen_dense(const Params& p, uint64_t seed) {
  const int64_t n = p.integer(0, 0, 1, kMaxNnz);
  const int64_t m = p.integer(1, n, 1, kMaxNnz);
  checked_mul(n, m, "N*M");
  auto fill = [&](int64_t r, int64_t* c, double* v, int64_t k) {
    Rng rng(seed, 1, uint64_t(r));
    for (int64_t i = 0; i < k; ++i) {
      c[i] = i;
      v[i] = rng.value();
    }
  };
  return build(
      p, n, m, [m](int64_t) { return m; }, fill);
}

HostCsr<int64_t, double> gen_diag(const Params& p, uint64_t seed) {
  const int64_t n = p.integer(0, 0, 1, kMaxNnz);
  const int64_t bands = p.integer(1, std::min<int64_t>(5, 2 * n - 1), 1, 2 * n - 1);
  checked_mul(n, bands, "N*BANDS");
  // Offsets -(BANDS/2) .. BANDS-1-BANDS/2: centred on the main diagonal.
  const int64_t first = -(bands / 2), last = bands - 1 - bands / 2;
  auto range = [=](int64_t r, int64_t& lo, int64_t& hi) {
    lo = std::max<int64_t>(r + first, 0);
    hi = std::min<int64_t>(r + last, n - 1);
  };
  auto len = [&](int64_t r) {
    int64_t lo, hi;
    range(r, lo, hi);
    return std::max<int64_t>(hi - lo + 1, 0);
  };
  auto fill = [&](int64_t r, int64_t* c, double* v, int64_t k) {
    Rng rng(seed, 1, uint64_t(r));
    int64_t lo, hi;
    range(r, lo, hi);
    for (int64_t i = 0; i < k; ++i) {
      c[i] = lo + i;
      v[i] = rng.value();
    }
  };
  return build(p, n, n, len, fill);
}

HostCsr<int64_t, double> gen_blocks(const Params& p, uint64_t seed) {
  const int64_t rows = p.integer(0, 0, 1, kMaxNnz);
  const int64_t b = p.integer(1, std::min<int64_t>(4, rows), 1, rows);
  // Only whole blocks: every run has exactly B columns, starting at a multiple of B.
  const int64_t block_cols = rows / b;
  const int64_t per_row = p.integer(2, std::min<int64_t>(4, block_cols), 1, block_cols);
  checked_mul(checked_mul(rows, b, "ROWS*B"), per_row, "ROWS*B*BLOCKS_PER_ROW");
  auto fill = [&](int64_t r, int64_t* c, double* v, int64_t k) {
    Rng rng(seed, 1, uint64_t(r));
    // Sample the block starts into the row's tail, then expand forward: block i fills
    // c[i*b .. i*b+b), which ends before starts[i+1] = c[k - per_row + i + 1].
    int64_t* starts = c + (k - per_row);
    sample_distinct(rng, block_cols, per_row, starts);
    for (int64_t i = 0; i < per_row; ++i) {
      const int64_t s = starts[i] * b;
      for (int64_t j = 0; j < b; ++j) c[i * b + j] = s + j;
    }
    for (int64_t i = 0; i < k; ++i) v[i] = rng.value();
  };
  return build(
      p, rows, rows, [&](int64_t) { return per_row * b; }, fill);
}

// The 27-point stencil's node graph with B unknowns per node: row n*B + u couples to every
// unknown of every neighbouring node m (columns m*B .. m*B + B-1), each value random.
HostCsr<int64_t, double> gen_blockfem(const Params& p, uint64_t seed) {
  const int64_t n = p.integer(0, 0, 1, kMaxNnz);
  const int64_t b = p.integer(1, 3, 1, 64);
  const int64_t plane = checked_mul(n, n, "N^2");
  const int64_t nodes = checked_mul(plane, n, "N^3");
  const int64_t rows = checked_mul(nodes, b, "B*N^3");
  checked_mul(checked_mul(rows, 27, "27*B*N^3"), b, "the number of nonzeros");
  auto coords = [n, plane](int64_t node, int64_t& x, int64_t& y, int64_t& z) {
    x = node % n;
    y = (node / n) % n;
    z = node / plane;
  };
  auto len = [&](int64_t r) {
    int64_t x, y, z;
    coords(r / b, x, y, z);
    return span3(x, n) * span3(y, n) * span3(z, n) * b;
  };
  auto fill = [&](int64_t r, int64_t* c, double* v, int64_t k) {
    Rng rng(seed, 1, uint64_t(r));
    const int64_t node = r / b;
    int64_t x, y, z;
    coords(node, x, y, z);
    int64_t i = 0;
    // Neighbours in (dz, dy, dx) order are in ascending node order: columns come out sorted.
    for (int64_t dz = -1; dz <= 1; ++dz)
      for (int64_t dy = -1; dy <= 1; ++dy)
        for (int64_t dx = -1; dx <= 1; ++dx) {
          if (z + dz < 0 || z + dz >= n || y + dy < 0 || y + dy >= n || x + dx < 0 || x + dx >= n) continue;
          const int64_t m = node + dz * plane + dy * n + dx;
          for (int64_t u = 0; u < b; ++u) c[i++] = m * b + u;
        }
    for (int64_t j = 0; j < k; ++j) v[j] = rng.value();
  };
  return build(p, rows, rows, len, fill);
}

enum class Values { natural, random, few, ones };

// The part after the last '@', if any; the spec keeps the rest.
Values split_values(std::string& spec) {
  const size_t at = spec.rfind('@');
  if (at == std::string::npos) return Values::natural;
  const std::string suffix = spec.substr(at + 1);
  spec.resize(at);
  if (suffix == "random") return Values::random;
  if (suffix == "few") return Values::few;
  if (suffix == "ones") return Values::ones;
  const std::string kind = spec.substr(0, spec.find(':'));
  fail(SPMV_STATUS_INVALID_VALUE,
       "generator '" + kind + "': unknown values '@" + suffix + "'; known: @random, @few, @ones");
}

// Replaces every value, row r drawing from its own stream: the same pattern always gets the same
// values, whatever made it and however many threads fill it.
void apply_values(HostCsr<int64_t, double>& a, Values values, uint64_t seed) {
  if (values == Values::natural) return;
  // Eight small integers, none zero (a stored zero would blur what a kernel skipped).
  static constexpr double kFew[8] = {-4, -3, -2, -1, 1, 2, 3, 4};
  const int64_t* rp = a.row_ptr.data();
  double* v = a.val.data();
  parallel_for(a.rows, kRowGrain, [&](int64_t b, int64_t e) {
    for (int64_t r = b; r < e; ++r) {
      Rng rng(seed, kValueStream, uint64_t(r));
      for (int64_t k = rp[r]; k < rp[r + 1]; ++k)
        v[k] = values == Values::ones ? 1.0 : values == Values::random ? rng.value() : kFew[rng.next() >> 61];
    }
  });
}

[[noreturn]] void unknown_kind(const std::string& kind) {
  std::string known;
  for (const char* line : kHelp) {
    const std::string_view l(line);
    known += (known.empty() ? "" : ", ") + std::string(l.substr(0, l.find(':')));
  }
  fail(SPMV_STATUS_INVALID_VALUE, "unknown generator '" + kind + "'; known: " + known);
}

HostCsr<int64_t, double> dispatch(const std::string& kind, const std::vector<std::string>& parts,
                                  uint64_t seed) {
  using Names = std::vector<const char*>;
  auto params = [&](Names names) { return Params(kind, parts, std::move(names)); };
  if (kind == "poisson2d") return stencil(params({"N"}), 2, false);
  if (kind == "poisson3d") return stencil(params({"N"}), 3, false);
  if (kind == "stencil27") return stencil(params({"N"}), 3, true);
  if (kind == "random") return gen_random(params({"ROWS", "MIN", "MAX", "COLS"}), seed);
  if (kind == "powerlaw") return gen_powerlaw(params({"ROWS", "ALPHA", "MAXLEN"}), seed);
  if (kind == "denserows") return gen_denserows(params({"ROWS", "K", "BASE"}), seed);
  if (kind == "short") return gen_short(params({"ROWS", "MAX"}), seed);
  if (kind == "dense") return gen_dense(params({"N", "M"}), seed);
  if (kind == "diag") return gen_diag(params({"N", "BANDS"}), seed);
  if (kind == "blocks") return gen_blocks(params({"ROWS", "B", "BLOCKS_PER_ROW"}), seed);
  if (kind == "blockfem") return gen_blockfem(params({"N", "B"}), seed);
  if (kind == "rmat") return gen_rmat(params({"SCALE", "EDGEFACTOR", "A", "B", "C"}), seed);
  if (kind == "varband") return gen_varband(params({"N", "MINW", "MAXW"}), seed);
  if (kind == "lpwide") return gen_lpwide(params({"ROWS", "RATIO", "MIN", "MAX"}), seed);
  if (kind == "circuit") return gen_circuit(params({"ROWS", "BIG", "BIGLEN"}), seed);
  if (kind == "perm") return gen_perm(params({"N"}), seed);
  if (kind == "replicate") return gen_replicate(params({"PATH", "MINNNZ"}));
  unknown_kind(kind);
}

}  // namespace

HostCsr<int64_t, double> generate_matrix(const std::string& spec_with_values, uint64_t seed) {
  std::string spec = spec_with_values;
  const Values values = split_values(spec);
  std::vector<std::string> parts;
  size_t start = 0;
  for (;;) {
    const size_t colon = spec.find(':', start);
    parts.push_back(spec.substr(start, colon == std::string::npos ? colon : colon - start));
    if (colon == std::string::npos) break;
    start = colon + 1;
  }
  const std::string kind = parts[0];
  parts.erase(parts.begin());
  HostCsr<int64_t, double> a = dispatch(kind, parts, seed);
  apply_values(a, values, seed);
  return a;
}

std::string generator_help() {
  std::string s;
  for (const char* line : kHelp) s += std::string(line) + "\n";
  s += "value suffixes (SPEC@KIND; without one, each kind keeps its own values):\n";
  for (const char* line : kValueHelp) s += "  " + std::string(line) + "\n";
  return s;
}

}  // namespace spmvjit
