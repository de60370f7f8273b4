// A plan's kept pattern and the value maps read off its layout: which stored slots hold entries
// (nonzero marks), the first update's map from the layout (Format::sliced_values or
// number_slots), the pattern rebuilt from a layout for later reconversions, and what `describe`
// says of both. The updates themselves are in engine/plan_update.cpp.
#include <algorithm>
#include <atomic>
#include <cstring>

#include "core/log.hpp"
#include "core/parallel.hpp"
#include "engine/plan.hpp"
#include "engine/value_map.hpp"

namespace spmvjit {

namespace {

// The nonzero marks of one value array: for each stored slot, whether it holds a nonzero value
// (either zero's sign, and both parts of a complex value, count as zero). `table` holds the codes'
// values for CODE8 arrays; an array without a buffer (UNIFORM) holds the table's one value.
template <class V>
bool slot_nonzero(const HostArray& h, const V* table, int64_t k) {
  if (!h.buf.data()) return table[0] != V(0);
  if (h.elem == 1) return table[h.buf.as<uint8_t>()[k]] != V(0);
  return h.buf.as<V>()[k] != V(0);
}

// Whether each slot of value array `h` holds a nonzero value, f(k, flag) for k in [b, e): one
// branch-free loop per kind (codes through a 256-entry flag table): 5M CODE8 slots took 2.4-3.4 ms
// through slot_nonzero's per-slot branches.
template <class V>
class NonzeroFlags {
 public:
  NonzeroFlags(const HostArray& h, const V* table, size_t table_size) : h_(h) {
    SPMVJIT_ASSERT(h.buf.data() || table, "a value array without values or a table");
    if (!h.buf.data()) uniform_ = slot_nonzero<V>(h, table, 0);
    if (h.buf.data() && h.elem == 1)
      for (size_t c = 0; c < table_size; ++c) code_nonzero_[c] = table[c] != V(0);
  }
  uint8_t at(int64_t k) const {
    if (!h_.buf.data()) return uniform_;
    if (h_.elem == 1) return code_nonzero_[h_.buf.as<uint8_t>()[k]];
    return uint8_t(h_.buf.as<V>()[k] != V(0));
  }
  template <class F>
  void each(int64_t b, int64_t e, F&& f) const {
    if (!h_.buf.data()) {
      for (int64_t k = b; k < e; ++k) f(k, uniform_);
    } else if (h_.elem == 1) {
      const uint8_t* codes = h_.buf.as<uint8_t>();
      for (int64_t k = b; k < e; ++k) f(k, code_nonzero_[codes[k]]);
    } else {
      const V* v = h_.buf.as<V>();
      for (int64_t k = b; k < e; ++k) f(k, uint8_t(v[k] != V(0)));
    }
  }

 private:
  const HostArray& h_;
  uint8_t uniform_ = 0;
  uint8_t code_nonzero_[256] = {};
};

}  // namespace

int64_t Plan::nonzero_slots() const {
  const AlignedBuffer table =
      value_codec() == ValueCodec::plain ? AlignedBuffer() : value_table_.table_values();
  return dispatch_types_complex(index_, value_, [&]<class I, class V>() {
    const V* t = table.as<V>();
    int64_t total = 0;
    for (const HostArray& h : data_.arrays) {
      if (!h.is_values() || !h.count) continue;
      const NonzeroFlags<V> flags(h, t, value_table_.bits.size());
      std::atomic<int64_t> sum{0};
      parallel_for(h.count, plan_threads(h.count), [&](int64_t b, int64_t e, int) {
        int64_t n = 0;
        flags.each(b, e, [&](int64_t, uint8_t nonzero) { n += nonzero; });
        sum += n;
      });
      total += sum;
    }
    return total;
  });
}

namespace {

// The slots with a nonzero value, slot by slot (HeldSlots' test), over every value array.
template <class V>
struct NonzeroTest {
  std::vector<int64_t> begin;  // each flagged array's first slot number, then the total
  std::vector<std::unique_ptr<NonzeroFlags<V>>> flags;
  static bool test(const void* context, int64_t slot) {
    const auto* t = static_cast<const NonzeroTest*>(context);
    size_t a = 0;
    while (slot >= t->begin[a + 1]) ++a;
    return t->flags[a]->at(slot - t->begin[a]);
  }
};

}  // namespace

void Plan::value_map_from_layout() {
  // Which slots hold an entry: those with a nonzero value (pattern_in_layout_).
  const Format& f = *choice_.format;
  const std::vector<int64_t> base = value_slot_bases(data_);
  SlicedValues sliced;
  const bool by_rows = f.sliced_values(data_, sliced);
  if (!by_rows && !f.numbers_slots()) return;
  TraceSteps trace("update_values (first, from the layout)");
  const AlignedBuffer table =
      value_codec() == ValueCodec::plain ? AlignedBuffer() : value_table_.table_values();
  const CsrRef shape{rows_, cols_, nnz_, index_, value_, nullptr, nullptr, nullptr};
  if (by_rows) {  // no marks: a sliced layout asks about a few slots a row
    dispatch_types(index_, value_, [&]<class I, class V>() {
      NonzeroTest<V> t;
      for (size_t i = 0; i < data_.arrays.size(); ++i) {
        const HostArray& h = data_.arrays[i];
        if (!h.is_values() || !h.count) continue;
        t.begin.push_back(base[i]);
        t.flags.push_back(std::make_unique<NonzeroFlags<V>>(h, table.as<V>(), value_table_.bits.size()));
      }
      t.begin.push_back(base.back());
      value_map_ = ValueMap::from_layout(f, data_, shape, HeldSlots(&NonzeroTest<V>::test, &t));
    });
    trace.step("value map");
  } else {
    const AlignedBuffer held = held_marks(base, table);
    value_map_ = ValueMap::from_layout(f, data_, shape, HeldSlots(held.as<uint8_t>()));
    trace.step("held slots, value map");
  }
  if (value_map_) {
    value_map_tried_ = value_map_from_layout_ = true;
    log_debug("update_values: the value map read off the plan's layout");
  }
}

AlignedBuffer Plan::held_marks(const std::vector<int64_t>& base, const AlignedBuffer& table) const {
  AlignedBuffer held(size_t(std::max<int64_t>(base.back(), 1)));
  dispatch_types(index_, value_, [&]<class I, class V>() {
    const V* t = table.as<V>();
    for (size_t i = 0; i < data_.arrays.size(); ++i) {
      const HostArray& h = data_.arrays[i];
      if (!h.is_values() || !h.count) continue;
      uint8_t* out = held.as<uint8_t>() + base[i];
      const NonzeroFlags<V> flags(h, t, value_table_.bits.size());
      parallel_for(h.count, plan_threads(h.count), [&](int64_t b, int64_t e, int) {
        flags.each(b, e, [out](int64_t k, uint8_t nonzero) { out[k] = nonzero; });
      });
    }
  });
  return held;
}

void Plan::derive_pattern() {
  // A copy of the layout whose value slots hold one (a nonzero value) or zero: to_triplets then
  // gives the input's entries, whatever codec the values have.
  const AlignedBuffer table =
      value_codec() == ValueCodec::plain ? AlignedBuffer() : value_table_.table_values();
  TraceSteps trace("update_values: pattern from the layout");
  std::vector<Triplet> entries;
  dispatch_types_complex(index_, value_, [&]<class I, class V>() {
    FormatData marks = plain_value_arrays(data_, nullptr);
    std::copy(std::begin(data_.ints), std::end(data_.ints), std::begin(marks.ints));
    marks.stored_entries = data_.stored_entries;
    for (size_t i = 0; i < data_.arrays.size(); ++i) {
      const HostArray& h = data_.arrays[i];
      HostArray& m = marks.arrays[i];
      if (!h.is_values()) {  // index arrays as they are
        m.count = h.count;
        m.elem = h.elem;
        m.buf = AlignedBuffer(h.buf.bytes());
        if (h.buf.bytes()) std::memcpy(m.buf.data(), h.buf.data(), h.buf.bytes());
        continue;
      }
      V* out = m.buf.as<V>();
      parallel_for(h.count, plan_threads(h.count), [&](int64_t b, int64_t e, int) {
        for (int64_t k = b; k < e; ++k) out[k] = slot_nonzero<V>(h, table.as<V>(), k) ? V(1) : V(0);
      });
    }
    trace.step("marks");
    entries.reserve(size_t(nnz_));
    const CsrRef shape{rows_, cols_, nnz_, index_, value_, nullptr, nullptr, nullptr};
    choice_.format->to_triplets(marks, shape, entries);
  });
  trace.step("triplets");
  SPMVJIT_ASSERT(int64_t(entries.size()) == nnz_, "the layout's nonzero slots are not the pattern");
  // Rows by a counting sort (stable), then each row's columns in order (to_triplets' order is the
  // layout's: most formats give a row's columns ascending already).
  std::vector<int64_t> start(size_t(rows_) + 1, 0);
  for (const Triplet& t : entries) ++start[size_t(t.row) + 1];
  for (int64_t r = 0; r < rows_; ++r) start[size_t(r) + 1] += start[size_t(r)];
  std::vector<int64_t> cols(static_cast<size_t>(nnz_));
  {
    std::vector<int64_t> next(start.begin(), start.end() - 1);
    for (const Triplet& t : entries) cols[size_t(next[size_t(t.row)]++)] = t.col;
  }
  entries = std::vector<Triplet>();
  trace.step("rows");
  AlignedBuffer rp(size_of(index_) * size_t(rows_ + 1)), ci(size_of(index_) * size_t(nnz_));
  dispatch_types_complex(index_, value_, [&]<class I, class V>() {
    I* prow = rp.as<I>();
    I* pcol = ci.as<I>();
    parallel_for(rows_ + 1, plan_threads(nnz_ + rows_), [&](int64_t r0, int64_t r1, int) {
      for (int64_t r = r0; r < r1; ++r) {
        prow[r] = I(start[size_t(r)]);
        if (r == rows_) break;
        int64_t* b = cols.data() + start[size_t(r)];
        int64_t* e = cols.data() + start[size_t(r) + 1];
        if (!std::is_sorted(b, e)) std::sort(b, e);
        for (int64_t* c = b; c < e; ++c) {
          SPMVJIT_ASSERT(c == b || c[-1] < *c, "a rebuilt row repeats a column");
          pcol[c - cols.data()] = I(*c);
        }
      }
    });
  });
  trace.step("columns");
  pattern_row_ptr_ = std::move(rp);
  pattern_col_idx_ = std::move(ci);
  log_debug("update_values: the pattern rebuilt from the plan's layout");
}

std::string Plan::pattern_source() const {
  if (choice_.format && choice_.format->keeps_csr_pattern(choice_.params)) return "format arrays";
  if (converted_on_device_) return "device copy";
  return pattern_in_layout_ ? "layout" : "copy";
}

std::string Plan::values_update() const {
  if (!value_map_tried_) return "not yet updated";
  if (!value_map_) return "reconversion";
  if (value_map_from_layout_) return "gather through a value map read off the layout";
  return value_map_->format_gathers() ? "gather through a value map and the format's kernel"
                                      : "gather through a value map";
}

}  // namespace spmvjit
