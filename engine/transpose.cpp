// Host transpose: a stable counting sort by column, parallel over ranges of rows.
#include "engine/transpose.hpp"

#include <algorithm>
#include <complex>
#include <vector>

#include "core/parallel.hpp"

namespace spmvjit {
namespace {

// A's value as A^T (conjugate false) or A^H keeps it.
template <class V>
V op_value(V v, bool conjugate) {
  if constexpr (is_complex_v<V>)
    if (conjugate) return std::conj(v);
  return v;
}

template <class I, class V>
void transpose(const CsrRef& a, int base, bool conjugate, HostTranspose& t) {
  const I* rp = a.rp<I>();
  const I* ci = a.ci<I>();
  const V* val = a.vals<V>();
  I* tp = static_cast<I*>(t.row_ptr.data());
  I* tc = static_cast<I*>(t.col_idx.data());
  V* tv = static_cast<V*>(t.values.data());
  I* pos = static_cast<I*>(t.position.data());
  const int64_t cols = a.cols, nnz = a.nnz;
  // Parts of about equal nonzeros; each counts its columns in its own array, so parts times cols
  // counters: at most about as many as A has nonzeros (the memory A's column indices take).
  const int64_t by_memory = cols ? std::max<int64_t>(1, nnz / cols) : 1;
  const int parts = int(std::clamp<int64_t>(std::min<int64_t>(plan_threads(nnz + cols), by_memory), 1, 64));
  std::vector<int64_t> first(size_t(parts) + 1, a.rows);  // rows [first[p], first[p + 1])
  first[0] = 0;
  for (int p = 1; p < parts; ++p) {
    const int64_t target = nnz * p / parts + base;
    first[size_t(p)] = std::lower_bound(rp, rp + a.rows + 1, I(target)) - rp;
  }
  for (int p = 1; p <= parts; ++p) first[size_t(p)] = std::max(first[size_t(p)], first[size_t(p) - 1]);
  std::vector<I> count(size_t(parts) * size_t(cols), I(0));
  parallel_for(parts, parts, [&](int64_t p0, int64_t p1, int) {
    for (int64_t p = p0; p < p1; ++p) {
      I* c = count.data() + p * cols;
      for (int64_t k = rp[first[size_t(p)]] - base; k < rp[first[size_t(p) + 1]] - base; ++k)
        ++c[ci[k] - base];
    }
  });
  // Column starts (a scan in blocks of columns: block sums, their scan, the blocks again), then
  // each part's cursor into every column: the parts before it come first.
  const int blocks = plan_threads(cols * parts);
  std::vector<int64_t> block_sum(size_t(blocks) + 1, 0);
  auto column_total = [&](int64_t c) {
    int64_t n = 0;
    for (int p = 0; p < parts; ++p) n += count[size_t(p) * size_t(cols) + size_t(c)];
    return n;
  };
  parallel_for(cols, blocks, [&](int64_t c0, int64_t c1, int b) {
    int64_t n = 0;
    for (int64_t c = c0; c < c1; ++c) n += column_total(c);
    block_sum[size_t(b) + 1] = n;
  });
  for (int b = 0; b < blocks; ++b) block_sum[size_t(b) + 1] += block_sum[size_t(b)];
  tp[0] = 0;
  parallel_for(cols, blocks, [&](int64_t c0, int64_t c1, int b) {
    int64_t run = block_sum[size_t(b)];
    for (int64_t c = c0; c < c1; ++c) {
      for (int p = 0; p < parts; ++p) {
        I& n = count[size_t(p) * size_t(cols) + size_t(c)];
        const I here = I(run);
        run += n;
        n = here;
      }
      tp[c + 1] = I(run);
    }
  });
  parallel_for(parts, parts, [&](int64_t p0, int64_t p1, int) {
    for (int64_t p = p0; p < p1; ++p) {
      I* cursor = count.data() + p * cols;
      for (int64_t r = first[size_t(p)]; r < first[size_t(p) + 1]; ++r)
        for (int64_t k = rp[r] - base; k < rp[r + 1] - base; ++k) {
          const I dst = cursor[ci[k] - base]++;
          tc[dst] = I(r);
          tv[dst] = op_value(val[k], conjugate);
          pos[k] = dst;
        }
    }
  });
}

template <class I, class V>
void scatter(const V* from, V* to, const I* position, int64_t nnz, bool conjugate) {
  parallel_for(nnz, plan_threads(nnz), [&](int64_t b, int64_t e, int) {
    for (int64_t k = b; k < e; ++k) to[position[k]] = op_value(from[k], conjugate);
  });
}

}  // namespace

HostTranspose transpose_on_host(const CsrRef& a, int base, bool conjugate) {
  const size_t is = size_of(a.index), vs = size_of(a.value);
  HostTranspose t;
  t.row_ptr = AlignedBuffer(is * size_t(a.cols + 1));
  t.col_idx = AlignedBuffer(is * size_t(a.nnz));
  t.values = AlignedBuffer(vs * size_t(a.nnz));
  t.position = AlignedBuffer(is * size_t(a.nnz));
  dispatch_types_complex(a.index, a.value,
                         [&]<class I, class V>() { transpose<I, V>(a, base, conjugate, t); });
  t.ref =
      CsrRef{a.cols, a.rows, a.nnz, a.index, a.value, t.row_ptr.data(), t.col_idx.data(), t.values.data()};
  return t;
}

void scatter_values(const void* from, void* to, const void* position, int64_t nnz, IndexType index,
                    ValueType value, bool conjugate) {
  dispatch_types_complex(index, value, [&]<class I, class V>() {
    scatter(static_cast<const V*>(from), static_cast<V*>(to), static_cast<const I*>(position), nnz,
            conjugate);
  });
}

}  // namespace spmvjit
