// Symmetric expansion on the host: each read entry stays in its row, and the strict triangle's
// mirrors are counting-sorted by column as engine/transpose.cpp does, parallel over ranges of rows.
#include "engine/symmetric.hpp"

#include <algorithm>
#include <complex>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "core/parallel.hpp"

namespace spmvjit {
namespace {

// A's value of an entry read from the triangle: on the diagonal (a Hermitian one's imaginary part
// dropped) or off it (own), and its mirror, each conjugated when A is conj of the matrix given.
template <class V>
struct ValueRule {
  SymmetricValues how;
  V own(V v, bool diagonal) const {
    if constexpr (is_complex_v<V>) {
      if (diagonal && how.hermitian) return V(v.real());
      if (how.conjugate) return std::conj(v);
    }
    return v;
  }
  V mirror(V v) const {
    if constexpr (is_complex_v<V>)
      if (how.hermitian != how.conjugate) return std::conj(v);
    return v;
  }
};

template <class I, class V>
void expand(const CsrRef& a, int base, bool upper, ValueRule<V> rule, HostSymmetric& s) {
  const I* rp = a.rp<I>();
  const I* ci = a.ci<I>();
  const V* val = a.vals<V>();
  const int64_t n = a.rows, nnz = a.nnz;
  // Strictly inside the triangle read (the mirrored entries); c == r is the diagonal, the rest ignored.
  auto strict = [upper](int64_t r, int64_t c) { return upper ? c > r : c < r; };
  // Parts of about equal nonzeros; each counts the mirrors it sends to every row in its own array,
  // so parts times n counters: at most about as many as a has nonzeros. Parts only split the work:
  // each row's mirrors come part after part, so in source row order whatever their number.
  const int64_t by_memory = n ? std::max<int64_t>(1, nnz / n) : 1;
  const int parts = int(std::clamp<int64_t>(std::min<int64_t>(plan_threads(nnz + n), by_memory), 1, 64));
  std::vector<int64_t> first(size_t(parts) + 1, n);  // rows [first[p], first[p + 1])
  first[0] = 0;
  for (int p = 1; p < parts; ++p)
    first[size_t(p)] = std::lower_bound(rp, rp + n + 1, I(nnz * p / parts + base)) - rp;
  for (int p = 1; p <= parts; ++p) first[size_t(p)] = std::max(first[size_t(p)], first[size_t(p) - 1]);

  // Pass 1 (reads the column indices only): sp[r + 1] = row r's read entries, which stay in row r;
  // count[p * n + c] = part p's strict entries in column c, whose mirrors go to row c.
  s.row_ptr = AlignedBuffer(sizeof(I) * size_t(n + 1));
  I* sp = s.row_ptr.as<I>();
  sp[0] = 0;
  HostVector<I> count(size_t(parts) * size_t(n), I(0));
  parallel_for(parts, parts, [&](int64_t p0, int64_t p1, int) {
    for (int64_t p = p0; p < p1; ++p) {
      I* cnt = count.data() + p * n;
      for (int64_t r = first[size_t(p)]; r < first[size_t(p) + 1]; ++r) {
        const int64_t b = rp[r] - base, e = rp[r + 1] - base;  // cnt may alias rp: read once
        I kept = 0;
        for (int64_t k = b; k < e; ++k) {
          const int64_t c = ci[k] - base;
          if (c == r) {
            ++kept;
          } else if (strict(r, c)) {
            ++kept;
            ++cnt[c];
          }
        }
        sp[r + 1] = kept;
      }
    }
  });

  // A's row lengths, scanned in blocks of rows (block sums in int64: A's count may not fit I).
  const int blocks = plan_threads(n * parts);
  std::vector<int64_t> block_sum(size_t(blocks) + 1, 0);
  parallel_for(n, blocks, [&](int64_t c0, int64_t c1, int b) {
    int64_t m = 0;
    for (int64_t c = c0; c < c1; ++c) {
      m += sp[c + 1];
      for (int p = 0; p < parts; ++p) m += count[size_t(p) * size_t(n) + size_t(c)];
    }
    block_sum[size_t(b) + 1] = m;
  });
  for (int b = 0; b < blocks; ++b) block_sum[size_t(b) + 1] += block_sum[size_t(b)];
  const int64_t total = block_sum[size_t(blocks)];
  if (total > int64_t(std::numeric_limits<I>::max()))
    fail(SPMV_STATUS_UNSUPPORTED, "the full symmetric matrix has " + std::to_string(total) +
                                      " nonzeros (the triangle's entries and their mirrors), more than its " +
                                      (sizeof(I) == 4 ? "int32" : "int64") + " indices can address (" +
                                      std::to_string(std::numeric_limits<I>::max()) +
                                      "): give the matrix with int64 indices");
  s.col_idx = AlignedBuffer(sizeof(I) * size_t(total));
  s.values = AlignedBuffer(sizeof(V) * size_t(total));
  s.position = AlignedBuffer(sizeof(I) * 2 * size_t(nnz));
  I* sc = s.col_idx.as<I>();
  V* sv = s.values.as<V>();
  I* pos = s.position.as<I>();

  // Row starts, and each part's cursor into every row's mirrors: before the row's own entries
  // (upper: the mirrors have col < row) or after them (lower), the parts before it first.
  parallel_for(n, blocks, [&](int64_t c0, int64_t c1, int b) {
    int64_t run = block_sum[size_t(b)];
    for (int64_t c = c0; c < c1; ++c) {
      const int64_t kept = sp[c + 1];
      int64_t at = upper ? run : run + kept;
      for (int p = 0; p < parts; ++p) {
        I& m = count[size_t(p) * size_t(n) + size_t(c)];
        const int64_t here = at;
        at += m;
        m = I(here);
      }
      run = upper ? at + kept : at;
      sp[c + 1] = I(run);
    }
  });

  // Fill: row r's own entries (the diagonal ones between those of col < r and col > r, each group
  // in a's order) and its strict entries' mirrors at their rows' cursors.
  parallel_for(parts, parts, [&](int64_t p0, int64_t p1, int) {
    for (int64_t p = p0; p < p1; ++p) {
      I* cursor = count.data() + p * n;
      for (int64_t r = first[size_t(p)]; r < first[size_t(p) + 1]; ++r) {
        const int64_t b = rp[r] - base, e = rp[r + 1] - base;
        I diag = 0, off = 0;
        for (int64_t k = b; k < e; ++k) {
          const int64_t c = ci[k] - base;
          diag += c == r;
          off += strict(r, c);
        }
        I diag_at = upper ? I(sp[r + 1] - off - diag) : I(sp[r] + off);
        I off_at = upper ? I(sp[r + 1] - off) : sp[r];
        for (int64_t k = b; k < e; ++k) {
          const int64_t c = ci[k] - base;
          I own = -1, mirror = -1;
          if (c == r) {
            own = diag_at++;
          } else if (strict(r, c)) {
            own = off_at++;
            mirror = cursor[c]++;
            sc[mirror] = I(r);
            sv[mirror] = rule.mirror(val[k]);
          }
          if (own >= 0) {
            sc[own] = I(c);
            sv[own] = rule.own(val[k], c == r);
          }
          pos[2 * k] = own;
          pos[2 * k + 1] = mirror;
        }
      }
    }
  });
  s.ref = CsrRef{n, n, total, a.index, a.value, s.row_ptr.data(), s.col_idx.data(), s.values.data()};
}

template <class I, class V>
void expand_values(const V* from, V* to, const I* position, int64_t nnz, ValueRule<V> rule) {
  parallel_for(nnz, plan_threads(2 * nnz), [&](int64_t b, int64_t e, int) {
    for (int64_t k = b; k < e; ++k) {
      const I own = position[2 * k], mirror = position[2 * k + 1];
      // Only the diagonal has an entry but no mirror (ignored entries have neither).
      if (own >= 0) to[own] = rule.own(from[k], mirror < 0);
      if (mirror >= 0) to[mirror] = rule.mirror(from[k]);
    }
  });
}

}  // namespace

HostSymmetric expand_symmetric_on_host(const CsrRef& a, int base, bool upper, SymmetricValues how) {
  if (a.rows != a.cols)
    fail(SPMV_STATUS_INVALID_VALUE, "a symmetric matrix must be square, this one is " +
                                        std::to_string(a.rows) + " x " + std::to_string(a.cols));
  HostSymmetric s;
  dispatch_types_complex(a.index, a.value,
                         [&]<class I, class V>() { expand<I, V>(a, base, upper, ValueRule<V>{how}, s); });
  return s;
}

void expand_symmetric_values(const void* from, void* to, const void* position, int64_t nnz, IndexType index,
                             ValueType value, SymmetricValues how) {
  dispatch_types_complex(index, value, [&]<class I, class V>() {
    expand_values(static_cast<const V*>(from), static_cast<V*>(to), static_cast<const I*>(position), nnz,
                  ValueRule<V>{how});
  });
}

}  // namespace spmvjit
