// ValueMap: position codes through a format's converter (host or device), maps read off a layout
// and the gathers; the sliced and blocked maps in value_map_computed.cpp.
#include "engine/value_map.hpp"

#include <algorithm>
#include <atomic>
#include <cstring>

#include "core/parallel.hpp"
#include "engine/device_plan.hpp"
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
      get_kernel(b, device_module_spec(t, "value_map", pattern.index, pattern.value), cache_dir, nullptr);
  m->gather_ = m->module_->entry("spmvjit_vm_gather");
  m->gather_codes_ = m->module_->entry("spmvjit_vm_gather_codes");
  m->exec_ = b.make_executor(1);
  // The codes stand in for the pattern's values.
  DeviceBuffer codes(b, m->value_bytes_ * size_t(std::max<int64_t>(pattern.nnz, 1)));
  SpmvArgs a{};
  a.a[DP_VM_OUT] = codes.get();
  a.n[DP_VM_N_NNZ] = pattern.nnz;
  if (pattern.nnz) m->launch(m->module_->entry("spmvjit_vm_codes"), pattern.nnz, a);
  pattern.val = codes.get();
  DevicePlanner dp(b, pattern, 0, cache_dir);
  dp.analyze();
  const FormatData coded = f.convert_device(dp, p, t);
  DeviceBuffer errors(b, sizeof(uint64_t));
  const uint64_t zero = 0;
  b.upload(errors.get(), &zero, sizeof zero);
  void* to_map = m->module_->entry("spmvjit_vm_map");
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
    launch(gather_, (s.count + DP_VM_SLOTS - 1) / DP_VM_SLOTS, a);
  }
}

bool ValueMap::gather_codes(const void* values, const ValueTable& t, FormatData& data,
                            const FormatData* layout) const {
  if (device_) return gather_codes_device(values, t, data, layout);
  const ValueCodeSet lookup(t);
  if (computed()) return gather_codes_computed(values, lookup, data);
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
    launch(gather_codes_, (s.count + DP_VM_SLOTS - 1) / DP_VM_SLOTS, a);
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
    launch(gather_, (s.count + DP_VM_SLOTS - 1) / DP_VM_SLOTS, a);
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
