// Internal to engine/gen: the random numbers, parameter parsing and CSR assembly that every
// generator file shares. Not part of the engine's interface.
#pragma once

#include <sys/mman.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include "core/buffer.hpp"
#include "core/parallel.hpp"
#include "engine/csr.hpp"

namespace spmvjit::gen {

// Bigger requests are almost surely typos, and would take hundreds of GB.
constexpr int64_t kMaxNnz = int64_t(1) << 34;

// Random stream numbers (Rng's second argument), one per purpose, so that no two purposes ever
// draw the same numbers. 0-2 are the original generators'; the rest are the newer kinds'.
enum Stream : uint64_t {
  kLengthStream = 0,
  kFillStream = 1,
  kPickStream = 2,
  kRmatEdgeStream = 3,
  kRmatLabelStream = 4,
  kBandLeftStream = 5,
  kBandRightStream = 6,
  kPermStream = 7,
  kValueStream = 8,
};

inline uint64_t mix64(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// splitmix64. One generator per (seed, stream, row), so that rows can be filled in any order
// (or in parallel) and still give the same matrix.
class Rng {
 public:
  Rng(uint64_t seed, uint64_t stream, uint64_t row)
      : state_(mix64(mix64(seed + 0x9E3779B97F4A7C15ull) ^ (stream << 56) ^ row)) {}
  uint64_t next() {
    state_ += 0x9E3779B97F4A7C15ull;
    return mix64(state_);
  }
  // Uniform in [0, 1) with 53 random bits.
  double unit() { return double(next() >> 11) * 0x1.0p-53; }
  // Uniform in [-1, 1).
  double value() { return 2.0 * unit() - 1.0; }
  // Uniform in [0, n) by Lemire's multiply-shift; the tiny bias is irrelevant here.
  int64_t below(int64_t n) {
    return int64_t((unsigned __int128)next() * (unsigned __int128)uint64_t(n) >> 64);
  }
  // Uniform in [lo, hi].
  int64_t between(int64_t lo, int64_t hi) { return lo + below(hi - lo + 1); }

 private:
  uint64_t state_;
};

// k distinct sorted integers from [0, n), k <= n.
inline void sample_distinct(Rng& rng, int64_t n, int64_t k, int64_t* out) {
  if (k <= 0) return;
  if (k * 4 >= n) {
    // Dense enough: selection sampling visits each candidate once and yields sorted output.
    int64_t need = k;
    for (int64_t c = 0; c < n && need > 0; ++c)
      if (rng.below(n - c) < need) out[k - need--] = c;
    return;
  }
  int64_t have = 0;
  while (have < k) {
    for (int64_t i = have; i < k; ++i) out[i] = rng.below(n);
    std::sort(out, out + k);
    have = std::unique(out, out + k) - out;
  }
}

inline int64_t checked_mul(int64_t a, int64_t b, const std::string& what) {
  if (a != 0 && b > kMaxNnz / a) fail(SPMV_STATUS_INVALID_VALUE, what + " is too large (more than 2^34)");
  return a * b;
}

// Runs body(begin, end) over [0, n) in chunks of `grain` on up to process_threads() threads
// (core/cpu_count.hpp; core/parallel.hpp, each thread a contiguous run of chunks). Chunk
// boundaries depend on n and grain only, so a body that writes only its own indices gives the
// same result on any number of threads. The first exception thrown by a body is rethrown here
// after every thread has stopped.
template <class Body>
void parallel_for(int64_t n, int64_t grain, Body body) {
  const int64_t chunks = (n + grain - 1) / grain;
  const int threads = int(std::min<int64_t>({chunks, int64_t(process_threads()), 64}));
  spmvjit::parallel_for(chunks, threads, [&](int64_t c0, int64_t c1, int) {
    for (int64_t c = c0; c < c1; ++c) body(c * grain, std::min((c + 1) * grain, n));
  });
}

// v.assign(n, value), faulting its pages in on several threads and on 2 MiB pages where the
// kernel allows them. The generators' arrays are written once, so first-touch page faults (the
// kernel zeroing each page) were most of their cost: a 160 MB array took 0.5 s to zero on 4 KiB
// pages on a 2-vCPU VM, 0.03 s on huge pages. HostCsr is a plain std::vector (core/buffer.hpp's
// allocator cannot be used), so the fresh, untouched reservation is advised, then populated by
// MADV_POPULATE_WRITE a slice per thread (Linux 5.14; where it fails, assign faults as usual).
template <class T>
void assign_huge(std::vector<T>& v, size_t n, T value) {
  std::vector<T>().swap(v);
  v.reserve(n);
  const uintptr_t first = (uintptr_t(v.data()) + kHugePage - 1) / kHugePage * kHugePage;
  const uintptr_t last = uintptr_t(v.data() + n) / kHugePage * kHugePage;
  if (last > first) {
    ::madvise(reinterpret_cast<void*>(first), last - first, MADV_HUGEPAGE);
#ifdef MADV_POPULATE_WRITE
    constexpr int64_t kSlice = 16;  // huge pages per populate call
    const int64_t pages = int64_t((last - first) / kHugePage);
    parallel_for(pages, kSlice, [&](int64_t b, int64_t e) {
      ::madvise(reinterpret_cast<void*>(first + uintptr_t(b) * kHugePage), size_t(e - b) * kHugePage,
                MADV_POPULATE_WRITE);
    });
#endif
  }
  v.assign(n, value);
}

inline int64_t row_len(const HostCsr<int64_t, double>& a, int64_t r) {
  return a.row_ptr[size_t(r) + 1] - a.row_ptr[size_t(r)];
}

// Rows per parallel chunk in build(): large enough that a chunk outweighs taking it.
constexpr int64_t kRowGrain = 16384;

// The parameters of one spec; every message names the generator and the parameter.
class Params {
 public:
  Params(std::string kind, std::vector<std::string> parts, std::vector<const char*> names)
      : kind_(std::move(kind)), parts_(std::move(parts)), names_(std::move(names)) {
    if (parts_.size() > names_.size()) {
      std::string list;
      for (const char* n : names_) list += std::string(list.empty() ? "" : ":") + n;
      bad("takes at most " + std::to_string(names_.size()) + " parameters (" + list + "), got " +
          std::to_string(parts_.size()));
    }
    if (parts_.empty() || parts_[0].empty()) bad("needs " + std::string(names_[0]));
  }
  int64_t integer(size_t i, int64_t def, int64_t lo, int64_t hi) const {
    if (i >= parts_.size() || parts_[i].empty()) return def;
    const std::string& s = parts_[i];
    int64_t v = 0;
    auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc() || p != s.data() + s.size())
      bad(std::string(names_[i]) + "='" + s + "' is not an integer");
    check_range(i, double(v), double(lo), double(hi), std::to_string(v), std::to_string(lo),
                std::to_string(hi));
    return v;
  }
  double real(size_t i, double def, double lo, double hi) const {
    if (i >= parts_.size() || parts_[i].empty()) return def;
    const std::string& s = parts_[i];
    double v = 0;
    auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc() || p != s.data() + s.size() || !std::isfinite(v))
      bad(std::string(names_[i]) + "='" + s + "' is not a number");
    check_range(i, v, lo, hi, s, std::to_string(lo), std::to_string(hi));
    return v;
  }
  // Parameter i as given (a path, say); empty when absent.
  std::string text(size_t i) const { return i < parts_.size() ? parts_[i] : std::string(); }
  [[noreturn]] void bad(const std::string& what) const {
    fail(SPMV_STATUS_INVALID_VALUE, "generator '" + kind_ + "': " + what);
  }
  const std::string& kind() const { return kind_; }

 private:
  void check_range(size_t i, double v, double lo, double hi, const std::string& vs, const std::string& los,
                   const std::string& his) const {
    if (v < lo) bad(std::string(names_[i]) + "=" + vs + " must be at least " + los);
    if (v > hi) bad(std::string(names_[i]) + "=" + vs + " must be at most " + his);
  }

  std::string kind_;
  std::vector<std::string> parts_;
  std::vector<const char*> names_;
};

// Builds row_ptr from len(r), refuses too many nonzeros, then lets fill(r, cols, vals, n)
// write each row in place: no reallocation, and rows are independent. len and fill run on
// several threads at once, each row exactly once: they may only read shared state.
template <class Len, class Fill>
HostCsr<int64_t, double> build(const Params& p, int64_t rows, int64_t cols, Len len, Fill fill) {
  HostCsr<int64_t, double> a;
  a.rows = rows;
  a.cols = cols;
  assign_huge(a.row_ptr, size_t(rows) + 1, int64_t(0));
  int64_t* rp = a.row_ptr.data();
  // Lengths a block at a time, each block summed before the next: a request far beyond 2^34
  // nonzeros is refused after its first block or so, not after computing every length.
  constexpr int64_t kBlock = int64_t(1) << 20;
  for (int64_t first = 0; first < rows; first += kBlock) {
    const int64_t last = std::min(first + kBlock, rows);
    parallel_for(last - first, kRowGrain, [&](int64_t b, int64_t e) {
      for (int64_t r = first + b; r < first + e; ++r) rp[r + 1] = len(r);
    });
    for (int64_t r = first; r < last; ++r) {
      rp[r + 1] += rp[r];
      if (rp[r + 1] > kMaxNnz) p.bad("the matrix would have more than 2^34 nonzeros");
    }
  }
  const int64_t nnz = a.row_ptr.back();
  assign_huge(a.col_idx, size_t(nnz), int64_t(0));
  assign_huge(a.val, size_t(nnz), 0.0);
  int64_t* c = a.col_idx.data();
  double* v = a.val.data();
  parallel_for(rows, kRowGrain, [&](int64_t b, int64_t e) {
    for (int64_t r = b; r < e; ++r) fill(r, c + rp[r], v + rp[r], rp[r + 1] - rp[r]);
  });
  return a;
}

// The newer kinds, each in the file of its family (generators_graph.cpp, generators_shapes.cpp).
HostCsr<int64_t, double> gen_rmat(const Params& p, uint64_t seed);
HostCsr<int64_t, double> gen_perm(const Params& p, uint64_t seed);
HostCsr<int64_t, double> gen_replicate(const Params& p);
HostCsr<int64_t, double> gen_varband(const Params& p, uint64_t seed);
HostCsr<int64_t, double> gen_lpwide(const Params& p, uint64_t seed);
HostCsr<int64_t, double> gen_circuit(const Params& p, uint64_t seed);

}  // namespace spmvjit::gen
