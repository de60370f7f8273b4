// ValueMap's computed maps (value_map.hpp): sliced and blocked layouts, whose gathers compute each
// slot's position from each row's first entry as the slots go by (no position a slot).
#include <algorithm>
#include <atomic>
#include <cstdint>

#include "core/parallel.hpp"
#include "engine/formats/partition.hpp"
#include "engine/value_map.hpp"

namespace spmvjit {
namespace {

// Calls f.template operator()<C>() for the code type of `value_bytes`.
template <class F>
auto with_value_type(size_t value_bytes, F&& f) {
  return value_bytes == 4 ? f.template operator()<uint32_t>() : f.template operator()<uint64_t>();
}

}  // namespace

// A computed map of value array `array` of `d`, its rows' starts zeroed (rows + 1).
std::unique_ptr<ValueMap> ValueMap::one_array(const FormatData& d, size_t array, const CsrRef& shape) {
  std::unique_ptr<ValueMap> m(new ValueMap);
  m->value_bytes_ = size_of(shape.value);
  m->nnz_ = shape.nnz;
  m->rows_ = shape.rows;
  Slot slot;
  slot.array = array;
  slot.count = d.arrays[array].count;
  m->slots_.push_back(std::move(slot));
  m->row_start_.assign(size_t(shape.rows) + 1, 0);
  return m;
}

// Sliced layouts (Format::sliced_values): units of up to kSliceRows positions of one slice, a
// contiguous run of them per thread, balanced by slots. make() gives each thread its
// unit(s, i0, i1) for slice s's positions [i0, i1).
template <class Make>
void ValueMap::each_slice_unit(Make&& make) const {
  const SlicedValues& sv = *sliced_;
  const int64_t c = sv.c, slices = int64_t(sv.slice_ptr.size()) - 1;
  const int64_t per = (c + kSliceRows - 1) / kSliceRows, units = slices * per;
  const int64_t* sp = sv.slice_ptr.data();
  auto cum = [&](int64_t u) {  // slots before unit u (a slice's units share its slots evenly), + u
    if (u >= units) return sp[slices] + units;
    const int64_t s = u / per;
    return sp[s] + (sp[s + 1] - sp[s]) * (u % per) / per + u;
  };
  const int threads = plan_threads(sp[slices] + rows_);
  const std::vector<int64_t> split = split_prefix(units, threads, cum);
  parallel_for(threads, threads, [&](int64_t t, int64_t, int) {
    auto unit = make();
    for (int64_t u = split[size_t(t)]; u < split[size_t(t) + 1]; ++u) {
      const int64_t i0 = u % per * kSliceRows;
      unit(u / per, i0, std::min(c, i0 + kSliceRows));
    }
  });
}

// Calls slot(k, position) for every slot of a sliced layout's value array, slot(k, -1) for its
// padding, a run of slices per thread (make() gives each thread its own): slot by slot in
// storage order, each unit's positions' first entries and counts read in position order. (Row by
// row was 2x slower on a slice of dense rows, whose every cache line it wrote c times; tiles of
// 256 slots a row no faster on powerlaw:500000 and 3x slower to set up.) Rows sorted by length
// sit anywhere in `values` (elem bytes each): their lines are prefetched kPrefetchRows positions
// ahead (without, the gather waited on each row's first line: circuit:400000's update took 5-8
// SpMVs on two cores, 1-4 with).
template <class Make>
void ValueMap::each_sliced_slot(Make&& make, const void* values, size_t elem) const {
  const SlicedValues& sv = *sliced_;
  const int64_t c = sv.c, rows = rows_;
  const int64_t* const pf = pos_first_.data();
  const int64_t* const pl = pos_len_.data();
  const char* const base = static_cast<const char*>(values);
  const bool prefetch = !sv.perm.empty();  // in row order the hardware's prefetch does it
  each_slice_unit([&] {
    return [&, c, rows, pf, pl, slot = make(), first = std::vector<int64_t>(kSliceRows),
            len = std::vector<int64_t>(kSliceRows)](int64_t s, int64_t i0, int64_t i1) mutable {
      const int64_t p0 = s * c;
      if (prefetch)
        for (int64_t p = p0 + i0 + kPrefetchRows, e = std::min(p0 + i1 + kPrefetchRows, rows); p < e; ++p)
          if (pl[p]) {  // the row's lines, up to kPrefetchLines (the hardware follows longer ones)
            const uintptr_t a = reinterpret_cast<uintptr_t>(base + size_t(pf[p]) * elem);
            const uintptr_t z = std::min(a + kPrefetchLines * 64, a + size_t(pl[p]) * elem);
            for (uintptr_t l = a & ~uintptr_t(63); l < z; l += 64)
              __builtin_prefetch(reinterpret_cast<const void*>(l));
          }
      for (int64_t i = i0; i < i1; ++i) {
        const int64_t p = p0 + i;
        first[size_t(i - i0)] = p < rows ? pf[p] : 0;
        len[size_t(i - i0)] = p < rows ? pl[p] : 0;
      }
      const int64_t b = sv.slice_ptr[size_t(s)], w = (sv.slice_ptr[size_t(s) + 1] - b) / c;
      for (int64_t j = 0; j < w; ++j)
        for (int64_t i = i0; i < i1; ++i)
          slot(b + j * c + i, j < len[size_t(i - i0)] ? first[size_t(i - i0)] + j : int64_t(-1));
    };
  });
}

std::unique_ptr<ValueMap> ValueMap::from_slices(SlicedValues sv, const FormatData& d, const CsrRef& shape,
                                                const HeldSlots& held) {
  const int64_t c = sv.c, slices = int64_t(sv.slice_ptr.size()) - 1, rows = shape.rows;
  if (c <= 0 || slices < 0 || sv.slice_ptr.back() != d.arrays[sv.array].count ||
      (!sv.perm.empty() && int64_t(sv.perm.size()) != rows))
    return nullptr;
  std::unique_ptr<ValueMap> m = one_array(d, sv.array, shape);
  m->sliced_ = std::move(sv);
  // Each row's count: its held slots are its first ones, found by a binary search where `held`
  // is a test (log2 of the slice's width slots a row), counted (and checked to come first) from
  // marks.
  const int64_t base = value_slot_bases(d)[m->sliced_->array];
  const uint8_t* marks = held.marks();
  std::atomic<bool> ok{true};
  const ValueMap& map = *m;
  map.each_slice_unit([&] {
    return [&, len = std::vector<int64_t>(kSliceRows)](int64_t s, int64_t i0, int64_t i1) mutable {
      const int64_t b = map.sliced_->slice_ptr[size_t(s)],
                    w = (map.sliced_->slice_ptr[size_t(s) + 1] - b) / c;
      bool bad = false;
      if (marks) {
        std::fill(len.begin(), len.end(), int64_t(0));
        for (int64_t j = 0; j < w; ++j)
          for (int64_t i = i0; i < i1; ++i) {
            const int64_t v = marks[base + b + j * c + i] != 0;
            bad |= v && len[size_t(i - i0)] != j;  // an entry after padding: not this pattern
            len[size_t(i - i0)] += v;
          }
      } else {
        for (int64_t i = i0; i < i1; ++i) {
          int64_t lo = 0, hi = s * c + i < rows ? w : 0;  // slots [0, lo) held, [hi, w) padding
          while (lo < hi) {
            const int64_t mid = lo + (hi - lo) / 2;
            if (held(base + b + mid * c + i))
              lo = mid + 1;
            else
              hi = mid;
          }
          len[size_t(i - i0)] = lo;
        }
      }
      for (int64_t i = i0; i < i1; ++i) {
        const int64_t r = map.row_at(s * c + i);
        if (r < 0)
          bad |= len[size_t(i - i0)] != 0;  // positions past the rows hold only padding
        else if (r >= rows)
          bad = true;  // not a permutation of the rows
        else
          m->row_start_[size_t(r) + 1] = len[size_t(i - i0)];
      }
      if (bad) ok = false;
    };
  });
  if (!ok) return nullptr;
  parallel_prefix_sum(m->row_start_.data() + 1, rows);
  if (m->row_start_[size_t(rows)] != shape.nnz) return nullptr;
  // Each position's row's first entry and count, in position order: the gathers read them in
  // storage order, not the rows' starts at random.
  m->pos_first_.resize(size_t(rows));
  m->pos_len_.resize(size_t(rows));
  parallel_for(rows, plan_threads(rows), [&](int64_t b, int64_t e, int) {
    for (int64_t p = b; p < e; ++p) {
      const int64_t r = map.row_at(p);
      m->pos_first_[size_t(p)] = m->row_start_[size_t(r)];
      m->pos_len_[size_t(p)] = m->row_start_[size_t(r) + 1] - m->row_start_[size_t(r)];
    }
  });
  m->row_start_ = HostVector<int64_t>();
  return m;
}

std::unique_ptr<ValueMap> ValueMap::from_blocks(BlockedValues bv, const FormatData& d, const CsrRef& shape,
                                                const HeldSlots& held) {
  const int64_t r = bv.r, c = bv.c, rc = r * c, block_rows = int64_t(bv.block_ptr.size()) - 1,
                rows = shape.rows;
  const uint8_t* marks = held.marks();
  if (r <= 0 || c <= 0 || rc > 64 || block_rows < 0 || !marks || block_rows * r < rows ||
      bv.block_ptr[0] != 0 || bv.block_ptr.back() * rc != d.arrays[bv.array].count)
    return nullptr;
  for (int64_t b = 0; b < block_rows; ++b)
    if (bv.block_ptr[size_t(b) + 1] < bv.block_ptr[size_t(b)]) return nullptr;
  std::unique_ptr<ValueMap> m = one_array(d, bv.array, shape);
  m->masks_.resize(size_t(bv.block_ptr.back()));
  const int64_t* bp = bv.block_ptr.data();
  const uint8_t* h = marks + value_slot_bases(d)[bv.array];
  // Each block's mask and each row's count, a run of block rows per thread balanced by blocks.
  const int threads = plan_threads(bp[block_rows] * rc + rows);
  const std::vector<int64_t> split =
      split_prefix(block_rows, threads, [&](int64_t u) { return bp[u] * rc + u * r; });
  std::atomic<bool> ok{true};
  parallel_for(threads, threads, [&](int64_t t, int64_t, int) {
    std::vector<int64_t> len(static_cast<size_t>(r));
    bool bad = false;
    for (int64_t b = split[size_t(t)]; b < split[size_t(t) + 1]; ++b) {
      std::fill(len.begin(), len.end(), int64_t(0));
      for (int64_t k = bp[b]; k < bp[b + 1]; ++k) {
        uint64_t mask = 0;
        for (int64_t i = 0; i < r; ++i)
          for (int64_t j = 0; j < c; ++j) {
            const bool on = h[k * rc + i * c + j] != 0;
            mask |= uint64_t(on) << (i * c + j);
            len[size_t(i)] += on;
          }
        m->masks_[size_t(k)] = mask;
      }
      for (int64_t i = 0; i < r; ++i) {
        if (b * r + i < rows)
          m->row_start_[size_t(b * r + i) + 1] = len[size_t(i)];
        else
          bad |= len[size_t(i)] != 0;  // rows past the matrix hold nothing
      }
    }
    if (bad) ok = false;
  });
  if (!ok) return nullptr;
  parallel_prefix_sum(m->row_start_.data() + 1, rows);
  if (m->row_start_[size_t(rows)] != shape.nnz) return nullptr;
  m->blocked_ = std::move(bv);
  return m;
}

// Blocked layouts: a run of block rows per thread, balanced by blocks; each block's slots in
// storage order, a full block's rows runs of C consecutive entries.
template <class Make>
void ValueMap::each_blocked_slot(Make&& make) const {
  const BlockedValues& bv = *blocked_;
  const int64_t r = bv.r, c = bv.c, rc = r * c, block_rows = int64_t(bv.block_ptr.size()) - 1;
  const int64_t* bp = bv.block_ptr.data();
  const uint64_t full = rc == 64 ? ~uint64_t(0) : (uint64_t(1) << rc) - 1;
  const int threads = plan_threads(bp[block_rows] * rc + rows_);
  const std::vector<int64_t> split =
      split_prefix(block_rows, threads, [&](int64_t u) { return bp[u] * rc + u * r; });
  parallel_for(threads, threads, [&, r, c, rc, bp, full](int64_t t, int64_t, int) {
    auto slot = make();
    std::vector<int64_t> next_rows(static_cast<size_t>(r));
    int64_t* const next = next_rows.data();
    const int64_t rows = rows_;
    const int64_t* const starts = row_start_.data();
    const uint64_t* const masks = masks_.data();
    for (int64_t b = split[size_t(t)]; b < split[size_t(t) + 1]; ++b) {
      for (int64_t i = 0; i < r; ++i) next[i] = b * r + i < rows ? starts[b * r + i] : 0;
      for (int64_t k = bp[b]; k < bp[b + 1]; ++k) {
        const uint64_t mask = masks[k];
        const int64_t q = k * rc;
        if (mask == full) {
          for (int64_t i = 0; i < r; ++i) {
            const int64_t first = next[i];
            if constexpr (requires { slot.run(q, first, c); })
              slot.run(q + i * c, first, c);
            else
              for (int64_t j = 0; j < c; ++j) slot(q + i * c + j, first + j);
            next[i] = first + c;
          }
        } else {
          for (int64_t i = 0; i < r; ++i)
            for (int64_t j = 0; j < c; ++j)
              slot(q + i * c + j, mask >> (i * c + j) & 1 ? next[i]++ : int64_t(-1));
        }
      }
    }
  });
}

template <class Make>
void ValueMap::each_computed_slot(Make&& make, const void* values) const {
  if (sliced_)
    each_sliced_slot(std::forward<Make>(make), values, value_bytes_);
  else
    each_blocked_slot(std::forward<Make>(make));
}

void ValueMap::gather_computed(const void* values, void* out) const {
  with_value_type(value_bytes_, [&]<class C>() {
    struct Copy {  // a slot, and a run of consecutive slots holding consecutive entries
      const C* v;
      C* o;
      void operator()(int64_t k, int64_t pos) const { o[k] = pos < 0 ? C(0) : v[pos]; }
      void run(int64_t k, int64_t pos, int64_t n) const {
        C* const out = o + k;  // locals: the copy vectorizes (a call to memcpy cost more at 3 x 3)
        const C* const in = v + pos;
        for (int64_t j = 0; j < n; ++j) out[j] = in[j];
      }
    };
    const Copy copy{static_cast<const C*>(values), static_cast<C*>(out)};
    each_computed_slot([copy] { return copy; }, values);
  });
}

// The codes of a computed map's gather: the same lookups, positions computed as the slots go by.
bool ValueMap::gather_codes_computed(const void* values, const ValueCodeSet& lookup, FormatData& data) const {
  const Slot& s = slots_[0];
  AlignedBuffer codes(size_t(std::max<int64_t>(s.count, 1)));
  std::atomic<bool> ok{true};
  with_value_type(value_bytes_, [&]<class C>() {
    const C* const v = static_cast<const C*>(values);
    uint8_t* const out = codes.as<uint8_t>();
    each_computed_slot(
        [&] {
          return [v, out, &lookup, &ok, last = C(0), code = lookup.find(0), looked = false](
                     int64_t k, int64_t pos) mutable {
            const C bits = pos < 0 ? C(0) : v[pos];
            if (bits != last || !looked) [[unlikely]] {
              last = bits, looked = true;
              if ((code = lookup.find(uint64_t(bits))) < 0) ok = false, code = 0;
            }
            out[k] = uint8_t(code);
          };
        },
        v);
  });
  if (!ok) return false;
  HostArray& h = data.arrays[s.array];
  h.buf = std::move(codes);
  h.elem = 1;
  return true;
}

}  // namespace spmvjit
