// ValueMap: position codes through a format's converter (host or device), and the gather.
#include "engine/value_map.hpp"

#include <algorithm>
#include <atomic>
#include <cstring>

#include "core/parallel.hpp"
#include "engine/device_plan.hpp"
#include "engine/formats/partition.hpp"
#include "runtime/cache/kernel_cache.hpp"
#include "templates/contract/device_plan.h"
#include "templates/contract/value_gather.h"
#include "templates/contract/values.h"

namespace spmvjit {
namespace {

// Host codes and positions: C the V-wide unsigned code, P the position type.
template <class C>
void write_codes(C* out, int64_t nnz) {
  parallel_for(nnz, plan_threads(nnz), [&](int64_t b, int64_t e, int) {
    for (int64_t k = b; k < e; ++k) out[k] = C(k + 1);
  });
}

template <class C, class P>
bool positions(const C* code, P* map, int64_t count, int64_t nnz) {
  bool ok = true;
  for (int64_t j = 0; j < count; ++j) {
    const C c = code[j];
    if (c > C(nnz)) ok = false;
    map[j] = c == 0 || c > C(nnz) ? P(-1) : P(c - 1);
  }
  return ok;
}

template <class C, class P>
void gather_host(const C* values, const P* map, C* out, int64_t count) {
  parallel_for(count, plan_threads(count), [&](int64_t b, int64_t e, int) {
    for (int64_t j = b; j < e; ++j) out[j] = map[j] < 0 ? C(0) : values[map[j]];
  });
}

// Calls f.template operator()<C>() for the code type of `value_bytes`.
template <class F>
auto with_value_type(size_t value_bytes, F&& f) {
  return value_bytes == 4 ? f.template operator()<uint32_t>() : f.template operator()<uint64_t>();
}

// Calls f.template operator()<C, P>() for the code type of `value_bytes` and position type of
// `pos_bytes`.
template <class F>
auto with_types(size_t value_bytes, size_t pos_bytes, F&& f) {
  if (value_bytes == 4)
    return pos_bytes == 4 ? f.template operator()<uint32_t, int32_t>()
                          : f.template operator()<uint32_t, int64_t>();
  return pos_bytes == 4 ? f.template operator()<uint64_t, int32_t>()
                        : f.template operator()<uint64_t, int64_t>();
}

}  // namespace

std::unique_ptr<ValueMap> ValueMap::build_host(const Format& f, const FormatParams& p, const TargetInfo& t,
                                               CsrRef pattern) {
  std::unique_ptr<ValueMap> m(new ValueMap);
  m->value_bytes_ = size_of(pattern.value);
  m->pos_bytes_ = pattern.nnz < (int64_t(1) << 31) ? 4 : 8;
  m->nnz_ = pattern.nnz;
  AlignedBuffer codes(m->value_bytes_ * size_t(pattern.nnz));
  if (m->value_bytes_ == 4)
    write_codes(codes.as<uint32_t>(), pattern.nnz);
  else
    write_codes(codes.as<uint64_t>(), pattern.nnz);
  pattern.val = codes.data();
  const FormatData coded = f.convert(pattern, p, t);
  for (size_t i = 0; i < coded.arrays.size(); ++i) {
    const HostArray& a = coded.arrays[i];
    if (!a.is_values()) continue;
    Slot s;
    s.array = i;
    s.count = a.count;
    s.host = AlignedBuffer(m->pos_bytes_ * size_t(a.count));
    const bool ok = with_types(m->value_bytes_, m->pos_bytes_, [&]<class C, class P>() {
      return positions(a.buf.as<C>(), s.host.as<P>(), a.count, pattern.nnz);
    });
    if (!ok) return nullptr;
    m->slots_.push_back(std::move(s));
  }
  return m;
}

std::unique_ptr<ValueMap> ValueMap::from_layout(const Format& f, const FormatData& d, const CsrRef& shape,
                                                const HeldSlots& held_slots) {
  SlicedValues sliced;
  if (f.sliced_values(d, sliced)) return from_slices(std::move(sliced), d, shape, held_slots);
  BlockedValues blocked;
  if (held_slots.marks() && f.blocked_values(d, blocked))
    if (auto m = from_blocks(std::move(blocked), d, shape, held_slots)) return m;
  if (!f.numbers_slots()) return nullptr;
  std::unique_ptr<ValueMap> m(new ValueMap);
  m->value_bytes_ = size_of(shape.value);
  m->pos_bytes_ = shape.nnz < (int64_t(1) << 31) ? 4 : 8;
  m->nnz_ = shape.nnz;
  std::vector<void*> positions(d.arrays.size(), nullptr);
  for (size_t i = 0; i < d.arrays.size(); ++i) {
    if (!d.arrays[i].is_values()) continue;
    Slot s;
    s.array = i;
    s.count = d.arrays[i].count;
    s.host = AlignedBuffer(m->pos_bytes_ * size_t(s.count));  // every slot written by the format
    positions[i] = s.host.data();
    m->slots_.push_back(std::move(s));
  }
  SPMVJIT_ASSERT(held_slots.marks(), "a numbering of slots without marks of the held ones");
  return f.number_slots(d, shape, held_slots, positions.data(), m->pos_bytes_) ? std::move(m) : nullptr;
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
  std::unique_ptr<ValueMap> m(new ValueMap);
  m->value_bytes_ = size_of(shape.value);
  m->nnz_ = shape.nnz;
  m->rows_ = rows;
  Slot slot;
  slot.array = sv.array;
  slot.count = d.arrays[sv.array].count;
  m->slots_.push_back(std::move(slot));
  m->row_start_.assign(size_t(rows) + 1, 0);
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
  std::unique_ptr<ValueMap> m(new ValueMap);
  m->value_bytes_ = size_of(shape.value);
  m->nnz_ = shape.nnz;
  m->rows_ = rows;
  Slot slot;
  slot.array = bv.array;
  slot.count = d.arrays[bv.array].count;
  m->slots_.push_back(std::move(slot));
  m->row_start_.assign(size_t(rows) + 1, 0);
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

std::unique_ptr<ValueMap> ValueMap::build_device(Backend& b, const std::string& cache_dir, CsrRef pattern,
                                                 const Format& f, const FormatParams& p,
                                                 const TargetInfo& t) {
  std::unique_ptr<ValueMap> m(new ValueMap);
  m->device_ = true;
  m->value_bytes_ = size_of(pattern.value);
  m->pos_bytes_ = size_of(pattern.index);
  m->nnz_ = pattern.nnz;
  m->backend_ = &b;
  m->target_ = t;
  m->module_ =
      get_kernel(b, device_module_spec(t, "device_plan", pattern.index, pattern.value), cache_dir, nullptr);
  m->gather_ = m->module_->entry("spmvjit_dp_value_gather");
  m->gather_codes_ = m->module_->entry("spmvjit_dp_value_gather_codes");
  m->exec_ = b.make_executor(1);
  // The codes stand in for the pattern's values.
  DeviceBuffer codes(b, m->value_bytes_ * size_t(std::max<int64_t>(pattern.nnz, 1)));
  SpmvArgs a{};
  a.a[DP_VM_OUT] = codes.get();
  a.n[DP_VM_N_NNZ] = pattern.nnz;
  if (pattern.nnz) m->launch(m->module_->entry("spmvjit_dp_value_codes"), pattern.nnz, a);
  pattern.val = codes.get();
  DevicePlanner dp(b, pattern, 0, cache_dir);
  dp.analyze();
  const FormatData coded = f.convert_device(dp, p, t);
  DeviceBuffer errors(b, sizeof(uint64_t));
  const uint64_t zero = 0;
  b.upload(errors.get(), &zero, sizeof zero);
  void* to_map = m->module_->entry("spmvjit_dp_value_map");
  for (size_t i = 0; i < coded.arrays.size(); ++i) {
    const HostArray& arr = coded.arrays[i];
    if (!arr.is_values()) continue;
    Slot s;
    s.array = i;
    s.count = arr.count;
    s.device = DeviceBuffer(b, m->pos_bytes_ * size_t(std::max<int64_t>(arr.count, 1)));
    SpmvArgs v{};
    v.a[DP_VM_VALUES] = arr.device.get();
    v.a[DP_VM_MAP] = s.device.get();
    v.a[DP_VM_ERRORS] = errors.get();
    v.n[DP_VM_N_COUNT] = arr.count;
    v.n[DP_VM_N_NNZ] = pattern.nnz;
    if (arr.count) m->launch(to_map, arr.count, v);
    m->slots_.push_back(std::move(s));
  }
  uint64_t bad = 0;
  b.download(&bad, errors.get(), sizeof bad);  // waits for the kernels
  if (bad) return nullptr;
  // The format's own gather, trusted where every position it computes is the map's.
  DeviceGather g;
  if (m->slots_.size() <= VG_MAX_VALUE_ARRAYS && f.device_gather(coded, g)) {
    SPMVJIT_ASSERT(g.layout.size() <= VG_MAX_LAYOUT && g.params.size() + VG_N_PARAM0 <= SPMVJIT_MAX_ARRAYS,
                   f.name() + ": update gather arguments past the contract's slots");
    m->format_spec_ = g;
    m->pattern_row_ptr_ = pattern.row_ptr;
    m->pattern_rows_ = pattern.rows;
    try {  // a kernel that does not load leaves the map's own gather
      m->format_module_ =
          get_kernel(b, device_module_spec(t, g.module, pattern.index, pattern.value), cache_dir, nullptr);
      m->format_gather_ = m->format_module_->entry(g.entry);
      m->launch_format_gather(coded, codes.get(), nullptr, VG_CHECK, 0, errors.get());
      b.download(&bad, errors.get(), sizeof bad);
    } catch (const Error& e) {
      log_debug(f.name() + ": no update gather of its own (" + e.what() + "); updates take the map's gather");
      m->format_gather_ = nullptr;
    }
    if (bad) {
      log_debug(f.name() + ": its update gather computed " + std::to_string(bad) +
                " positions the value map does not hold; updates take the map's gather");
      m->format_gather_ = nullptr;
    }
  }
  return m;
}

void ValueMap::launch_format_gather(const FormatData& layout, const void* values, void* const* outs, int mode,
                                    int64_t table_patterns, void* errors) const {
  SPMVJIT_ASSERT(format_gather_, "no update gather of the format's own");
  const DeviceGather& g = format_spec_;
  SpmvArgs a{};
  a.rows = pattern_rows_;
  a.x = values;
  a.values_table = table_.get();
  a.scratch = errors;
  a.a[VG_ROW_PTR] = pattern_row_ptr_;
  for (size_t i = 0; i < slots_.size(); ++i) {
    a.a[VG_MAP0 + i] = slots_[i].device.get();
    a.a[VG_OUT0 + i] = outs ? outs[i] : nullptr;
  }
  for (size_t k = 0; k < g.layout.size(); ++k) a.a[VG_LAYOUT0 + k] = layout.arrays[g.layout[k]].device.get();
  a.n[VG_N_MODE] = mode;
  a.n[VG_N_TABLE] = table_patterns;
  for (size_t k = 0; k < g.params.size(); ++k) a.n[VG_N_PARAM0 + k] = g.params[k];
  if (g.items) exec_->run(format_gather_, grid_stride_step(target_, g.entry, g.items, g.block), a, nullptr);
}

void ValueMap::launch(void* entry, int64_t items, const SpmvArgs& a) const {
  exec_->run(entry, grid_stride_step(target_, "value_map", items, DP_BLOCK), a, nullptr);
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

void ValueMap::gather(const void* values, FormatData& data, const FormatData* layout) const {
  if (computed()) return gather_computed(values, data.arrays[slots_[0].array].buf.data());
  if (device_ && format_gather_ && layout) {
    void* outs[VG_MAX_VALUE_ARRAYS] = {};
    for (size_t i = 0; i < slots_.size(); ++i) outs[i] = data.arrays[slots_[i].array].device.get();
    return launch_format_gather(*layout, values, outs, VG_GATHER, 0, nullptr);  // counts no errors
  }
  for (const Slot& s : slots_) {
    HostArray& out = data.arrays[s.array];
    if (!s.count) continue;
    if (!device_) {
      with_types(value_bytes_, pos_bytes_, [&]<class C, class P>() {
        gather_host(static_cast<const C*>(values), s.host.as<P>(), out.buf.as<C>(), s.count);
      });
      continue;
    }
    SpmvArgs a{};
    a.a[DP_VM_VALUES] = const_cast<void*>(values);
    a.a[DP_VM_MAP] = s.device.get();
    a.a[DP_VM_OUT] = out.device.get();
    a.n[DP_VM_N_COUNT] = s.count;
    launch(gather_, s.count, a);
  }
}

bool ValueMap::gather_codes(const void* values, const ValueTable& t, FormatData& data,
                            const FormatData* layout) const {
  if (device_) return gather_codes_device(values, t, data, layout);
  const ValueCodeSet lookup(t);
  if (computed()) {  // the same lookups, positions computed as the slots go by
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
  std::vector<AlignedBuffer> codes(slots_.size());
  for (size_t i = 0; i < slots_.size(); ++i) {
    const Slot& s = slots_[i];
    if (!s.count) continue;
    codes[i] = AlignedBuffer(size_t(s.count));
    std::atomic<bool> ok{true};
    with_types(value_bytes_, pos_bytes_, [&]<class C, class P>() {
      parallel_for(s.count, plan_threads(s.count), [&](int64_t b, int64_t e, int) {
        // Runs of one value (a stencil's diagonals, padding) skip the lookup, as the encoder does;
        // a code is tested only when it is looked up. The pointers are this thread's own locals:
        // a byte store may alias anything the closure holds, which would be read again after each.
        const P* const map = s.host.as<P>();
        const C* const v = static_cast<const C*>(values);
        uint8_t* const out = codes[i].as<uint8_t>();
        C last = 0;
        int code = lookup.find(0);
        bool looked = false;  // `code` is zero's, which the table may lack: test it once used
        for (int64_t k = b; k < e; ++k) {
          const C bits = map[k] < 0 ? C(0) : v[map[k]];
          if (bits != last || !looked) [[unlikely]] {
            last = bits, looked = true;
            if ((code = lookup.find(uint64_t(bits))) < 0) {
              ok = false;
              return;
            }
          }
          out[k] = uint8_t(code);
        }
      });
    });
    if (!ok) return false;
  }
  for (size_t i = 0; i < slots_.size(); ++i) {
    HostArray& h = data.arrays[slots_[i].array];
    h.buf = std::move(codes[i]);
    h.elem = 1;
  }
  return true;
}

bool ValueMap::gather_codes_device(const void* values, const ValueTable& t, FormatData& data,
                                   const FormatData* layout) const {
  TraceSteps trace("update_values (device codes)");
  // The table goes up when it differs from the one there (an update's two synchronous uploads
  // were a third of poisson2d:2000's); the error count only grows, each call reading its growth.
  if (!table_) table_ = DeviceBuffer(*backend_, value_bytes_ * SPMVJIT_VALUES_TABLE_MAX);
  if (!errors_) {
    errors_ = DeviceBuffer(*backend_, sizeof(uint64_t));
    errors_seen_ = 0;
    backend_->upload(errors_.get(), &errors_seen_, sizeof errors_seen_);
  }
  if (t.bits != table_bits_) {
    const AlignedBuffer host_table = t.table_values();  // the sorted patterns: code k is entry k
    SPMVJIT_ASSERT(host_table.bytes() <= table_.bytes(), "value table larger than a CODE8 table");
    table_bits_.clear();  // a failed upload leaves no table named as uploaded
    backend_->upload(table_.get(), host_table.data(), host_table.bytes());
    table_bits_ = t.bits;
  }
  trace.step("table upload");
  std::vector<DeviceBuffer> codes(slots_.size());
  for (size_t i = 0; i < slots_.size(); ++i)
    if (slots_[i].count) codes[i] = DeviceBuffer(*backend_, size_t(slots_[i].count));
  const bool own = format_gather_ && layout;
  if (own) {
    void* outs[VG_MAX_VALUE_ARRAYS] = {};
    for (size_t i = 0; i < slots_.size(); ++i) outs[i] = codes[i].get();
    launch_format_gather(*layout, values, outs, VG_CODES, int64_t(t.bits.size()), errors_.get());
  }
  for (size_t i = 0; i < slots_.size() && !own; ++i) {
    const Slot& s = slots_[i];
    if (!s.count) continue;
    SpmvArgs a{};
    a.a[DP_VM_VALUES] = const_cast<void*>(values);
    a.a[DP_VM_MAP] = s.device.get();
    a.a[DP_VM_OUT] = codes[i].get();
    a.a[DP_VM_ERRORS] = errors_.get();
    a.a[DP_VM_TABLE] = table_.get();
    a.n[DP_VM_N_COUNT] = s.count;
    a.n[DP_VM_N_TABLE] = int64_t(t.bits.size());
    launch(gather_codes_, s.count, a);
  }
  trace.step("allocate and launch");
  uint64_t count = 0;
  backend_->download(&count, errors_.get(), sizeof count);  // waits for the kernels
  trace.step("gather kernels (wait)");
  const bool bad = count != errors_seen_;
  errors_seen_ = count;
  if (bad) return false;
  for (size_t i = 0; i < slots_.size(); ++i) {
    HostArray& h = data.arrays[slots_[i].array];
    h.device = std::move(codes[i]);
    h.elem = 1;
  }
  return true;
}

bool ValueMap::reproduces(const void* values, const FormatData& expected) const {
  if (computed()) {
    const HostArray& want = expected.arrays[slots_[0].array];
    if (want.count != slots_[0].count) return false;
    AlignedBuffer got(value_bytes_ * size_t(std::max<int64_t>(want.count, 1)));
    gather_computed(values, got.data());
    return !want.count || std::memcmp(got.data(), want.buf.data(), value_bytes_ * size_t(want.count)) == 0;
  }
  if (!device_) {
    for (const Slot& s : slots_) {
      const HostArray& want = expected.arrays[s.array];
      if (want.count != s.count) return false;
      AlignedBuffer got(value_bytes_ * size_t(s.count));
      with_types(value_bytes_, pos_bytes_, [&]<class C, class P>() {
        gather_host(static_cast<const C*>(values), s.host.as<P>(), got.as<C>(), s.count);
      });
      if (s.count && std::memcmp(got.data(), want.buf.data(), got.bytes()) != 0) return false;
    }
    return true;
  }
  DeviceBuffer errors(*backend_, sizeof(uint64_t));
  const uint64_t zero = 0;
  backend_->upload(errors.get(), &zero, sizeof zero);
  for (const Slot& s : slots_) {
    const HostArray& want = expected.arrays[s.array];
    if (want.count != s.count) return false;
    if (!s.count) continue;
    SpmvArgs a{};
    a.a[DP_VM_VALUES] = const_cast<void*>(values);
    a.a[DP_VM_MAP] = s.device.get();
    a.a[DP_VM_OUT] = want.device.get();
    a.a[DP_VM_ERRORS] = errors.get();
    a.n[DP_VM_N_COUNT] = s.count;
    a.n[DP_VM_N_CHECK] = 1;
    launch(gather_, s.count, a);
  }
  uint64_t bad = 0;
  backend_->download(&bad, errors.get(), sizeof bad);  // waits for the checks
  return bad == 0;
}

int64_t ValueMap::bytes() const {
  if (sliced_)
    return int64_t(sizeof(int64_t) *
                   (pos_first_.size() + pos_len_.size() + sliced_->perm.size() + sliced_->slice_ptr.size()));
  if (blocked_)
    return int64_t(sizeof(int64_t) * (row_start_.size() + masks_.size() + blocked_->block_ptr.size()));
  int64_t n = 0;
  for (const Slot& s : slots_) n += int64_t(pos_bytes_) * s.count;
  return n;
}

}  // namespace spmvjit
