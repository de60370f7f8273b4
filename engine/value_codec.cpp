// Value compression: the sample's table, the codec per candidate, host and device encoders.
#include "engine/value_codec.hpp"

#include <algorithm>
#include <atomic>
#include <cstring>

#include "core/parallel.hpp"
#include "engine/device_plan.hpp"
#include "runtime/cache/kernel_cache.hpp"
#include "templates/contract/device_plan.h"

namespace spmvjit {
namespace {

constexpr int kTableMax = SPMVJIT_VALUES_TABLE_MAX;

// Bit pattern of value k of a V array, zero-extended.
inline uint64_t bits_at(const void* values, size_t vs, int64_t k) {
  if (vs == 4) {
    uint32_t u;
    std::memcpy(&u, static_cast<const char*>(values) + 4 * k, 4);
    return u;
  }
  uint64_t u;
  std::memcpy(&u, static_cast<const char*>(values) + 8 * k, 8);
  return u;
}

// Stored values a codec must represent in value array `h` of `d`: all of them, except that a
// format's only value array may end in padding past its stored entries that no kernel reads (the
// CSR layouts pad for vector loads), which a uniform table need not hold.
int64_t checked_count(const FormatData& d, const HostArray& h, ValueCodec c) {
  int64_t value_arrays = 0;
  for (const HostArray& a : d.arrays) value_arrays += a.is_values();
  if (c == ValueCodec::uniform && value_arrays == 1 && d.stored_entries > 0 && d.stored_entries < h.count)
    return d.stored_entries;
  return h.count;
}

}  // namespace

const char* to_string(ValueCodec c) {
  switch (c) {
    case ValueCodec::plain: return "plain";
    case ValueCodec::uniform: return "uniform";
    case ValueCodec::code8: return "code8";
  }
  return "?";
}

ValueCodec codec_of(const FormatParams& p) {
  const auto it = p.find(kValueCodecParam);
  if (it == p.end()) return ValueCodec::plain;
  if (it->second < 0 || it->second >= SPMVJIT_VALUES_CODES)
    fail(SPMV_STATUS_INVALID_VALUE, "unknown value codec " + std::to_string(it->second));
  return ValueCodec(it->second);
}

FormatParams with_codec(FormatParams p, ValueCodec c) {
  if (c == ValueCodec::plain)
    p.erase(kValueCodecParam);
  else
    p[kValueCodecParam] = int64_t(c);
  return p;
}

AlignedBuffer ValueTable::table_values() const {
  const size_t vs = size_of(type);
  AlignedBuffer out(vs * std::max<size_t>(bits.size(), 1));
  for (size_t i = 0; i < bits.size(); ++i) {
    if (vs == 4) {
      const uint32_t u = uint32_t(bits[i]);
      std::memcpy(out.as<char>() + 4 * i, &u, 4);
    } else {
      std::memcpy(out.as<char>() + 8 * i, &bits[i], 8);
    }
  }
  return out;
}

namespace {

// Distinct bit patterns of n values, sorted; nullopt past `cap`.
// Chunks on plan threads, each with a set of its own (runs of one value skip the lookup), then
// merged: an update's table of 5M values took 19% of its time in one serial pass.
std::optional<std::vector<uint64_t>> distinct_bits(const void* values, size_t vs, int64_t n, size_t cap) {
  const int chunks = plan_threads(n);
  std::vector<ValueCodeSet> sets(static_cast<size_t>(chunks));
  std::atomic<bool> over{false};
  parallel_for(n, chunks, [&](int64_t b, int64_t e, int c) {
    ValueCodeSet& set = sets[size_t(c)];
    uint64_t last = 0;
    bool any = false;
    for (int64_t k = b; k < e; ++k) {
      const uint64_t bits = bits_at(values, vs, k);
      if (any && bits == last) continue;
      if (!set.insert(bits, cap) || over.load(std::memory_order_relaxed)) {
        over = true;
        return;
      }
      last = bits, any = true;
    }
  });
  if (over) return std::nullopt;
  ValueCodeSet& all = sets[0];
  for (size_t c = 1; c < sets.size(); ++c)
    for (uint64_t b : sets[c].keys())
      if (!all.insert(b, cap)) return std::nullopt;
  std::vector<uint64_t> bits = all.keys();
  std::sort(bits.begin(), bits.end());
  return bits;
}

}  // namespace

std::optional<ValueTable> table_of_values(const void* values, int64_t n, ValueType type, ValueCodec codec) {
  if (codec == ValueCodec::plain || n == 0) return std::nullopt;
  const auto bits = distinct_bits(values, size_of(type), n, codec == ValueCodec::uniform ? 1 : kTableMax);
  if (!bits) return std::nullopt;
  ValueTable t;
  t.type = type;
  t.bits = *bits;
  if (codec == ValueCodec::code8 && !std::binary_search(t.bits.begin(), t.bits.end(), uint64_t(0))) {
    if (int(t.bits.size()) == kTableMax) return std::nullopt;
    t.bits.insert(t.bits.begin(), uint64_t(0));
  }
  return t;
}

std::optional<ValueTable> sample_values(const RowSample& s) {
  // Random values stop the count after kTableMax - 1 distinct ones (a slot stays for padding).
  const auto bits =
      distinct_bits(s.values.data(), size_of(s.value), int64_t(s.col_idx.size()), kTableMax - 1);
  if (!bits) return std::nullopt;
  ValueTable t;
  t.type = s.value;
  t.bits = *bits;
  return t;
}

ValueCodec codec_for(const ValueTable& sample, int64_t stored, int64_t nnz, ValueTable* table) {
  *table = sample;
  if (sample.bits.empty() || nnz == 0) return ValueCodec::plain;
  if (sample.bits.size() == 1 && stored == nnz) return ValueCodec::uniform;
  if (!std::binary_search(table->bits.begin(), table->bits.end(), uint64_t(0)))
    table->bits.insert(table->bits.begin(), uint64_t(0));  // +0.0 has the smallest pattern
  return int(table->bits.size()) <= kTableMax ? ValueCodec::code8 : ValueCodec::plain;
}

int64_t codec_entry_bytes(ValueCodec c, ValueType v) {
  switch (c) {
    case ValueCodec::plain: return int64_t(size_of(v));
    case ValueCodec::uniform: return 0;
    case ValueCodec::code8: return 1;
  }
  return int64_t(size_of(v));
}

bool encode_codes(const void* values, size_t vs, int64_t n, const ValueCodeSet& lookup, uint8_t* out) {
  SPMVJIT_ASSERT(vs == 4 || vs == 8, "codes for values of " + std::to_string(vs) + " bytes");
  // Runs of one value (a stencil's diagonals, padding's zeros) skip the lookup: encoding
  // poisson2d:1000's sell_diag values took 8-12 ms of its plan on the 2-vCPU VM. The loop is one
  // per value size and tests a code only when it looks one up (22 instructions a value with the
  // size and the code tested per value, callgrind). `out` as a local: a byte store may alias
  // anything a closure holds.
  auto encode = [&lookup]<class U>(const U* v, uint8_t* o, int64_t b, int64_t e) {
    if (b >= e) return true;
    U last = v[b];
    int code = lookup.find(uint64_t(last));
    if (code < 0) return false;
    for (int64_t k = b; k < e; ++k) {
      if (const U bits = v[k]; bits != last) [[unlikely]] {
        last = bits;
        if ((code = lookup.find(uint64_t(bits))) < 0) return false;
      }
      o[k] = uint8_t(code);
    }
    return true;
  };
  std::atomic<bool> ok{true};
  parallel_for(n, plan_threads(n), [&](int64_t b, int64_t e, int) {
    const bool good = vs == 4 ? encode(static_cast<const uint32_t*>(values), out, b, e)
                              : encode(static_cast<const uint64_t*>(values), out, b, e);
    if (!good) ok = false;
  });
  return ok;
}

bool encode_values_host(FormatData& d, ValueCodec c, const ValueTable& t) {
  if (c == ValueCodec::plain) return true;
  const size_t vs = size_of(d.value);
  const ValueCodeSet lookup(t);  // codes in table order
  std::vector<AlignedBuffer> codes(d.arrays.size());
  for (size_t i = 0; i < d.arrays.size(); ++i) {
    const HostArray& h = d.arrays[i];
    if (!h.is_values() || !h.count) continue;
    SPMVJIT_ASSERT(h.elem == vs && h.buf.bytes(), "encoding values that are not plain host values");
    const int64_t n = checked_count(d, h, c);
    if (c == ValueCodec::code8) {
      codes[i] = AlignedBuffer(size_t(h.count));
      if (!encode_codes(h.buf.data(), vs, n, lookup, codes[i].as<uint8_t>())) return false;
      continue;
    }
    std::atomic<bool> ok{true};
    parallel_for(n, plan_threads(n), [&](int64_t b, int64_t e, int) {
      bool good = true;
      for (int64_t k = b; k < e && good; ++k) good = bits_at(h.buf.data(), vs, k) == t.bits[0];
      if (!good) ok = false;
    });
    if (!ok) return false;
  }
  for (size_t i = 0; i < d.arrays.size(); ++i) {
    HostArray& h = d.arrays[i];
    if (!h.is_values() || !h.count) continue;
    h.buf = std::move(codes[i]);  // empty for uniform: no array at all
    h.elem = c == ValueCodec::code8 ? 1 : 0;
  }
  d.matrix_bytes = sum_matrix_bytes(d);
  return true;
}

bool encode_values_device(Backend& b, const std::string& cache_dir, const TargetInfo& target, FormatData& d,
                          ValueCodec c, const ValueTable& t) {
  if (c == ValueCodec::plain) return true;
  const auto module =
      get_kernel(b, device_module_spec(target, "value_map", d.index, d.value), cache_dir, nullptr);
  void* entry = module->entry("spmvjit_vm_encode");
  const auto exec = b.make_executor(1);
  const AlignedBuffer host_table = t.table_values();
  DeviceBuffer table(b, host_table.bytes());
  b.upload(table.get(), host_table.data(), host_table.bytes());
  DeviceBuffer errors(b, sizeof(uint64_t));
  const uint64_t zero = 0;
  b.upload(errors.get(), &zero, sizeof zero);
  std::vector<DeviceBuffer> codes(d.arrays.size());
  for (size_t i = 0; i < d.arrays.size(); ++i) {
    const HostArray& h = d.arrays[i];
    if (!h.is_values() || !h.count) continue;
    SPMVJIT_ASSERT(h.elem == size_of(d.value) && h.device,
                   "encoding values that are not plain device values");
    if (c == ValueCodec::code8) codes[i] = DeviceBuffer(b, size_t(h.count));
    SpmvArgs a{};
    a.a[DP_VC_VALUES] = h.device.get();
    a.a[DP_VC_CODES] = codes[i].get();
    a.a[DP_VC_TABLE] = table.get();
    a.a[DP_VC_ERRORS] = errors.get();
    a.n[DP_VC_N_COUNT] = checked_count(d, h, c);
    a.n[DP_VC_N_TABLE] = int64_t(t.bits.size());
    if (a.n[DP_VC_N_COUNT])
      exec->run(entry, grid_stride_step(target, "value_encode", a.n[DP_VC_N_COUNT], DP_BLOCK), a, nullptr);
  }
  uint64_t bad = 0;
  b.download(&bad, errors.get(), sizeof bad);  // waits for the encoders
  if (bad) return false;
  for (size_t i = 0; i < d.arrays.size(); ++i) {
    HostArray& h = d.arrays[i];
    if (!h.is_values() || !h.count) continue;
    h.device = std::move(codes[i]);  // the plain values are freed here
    h.elem = c == ValueCodec::code8 ? 1 : 0;
  }
  d.matrix_bytes = sum_matrix_bytes(d);
  return true;
}

}  // namespace spmvjit
