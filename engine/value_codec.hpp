// Value compression (templates/contract/values.h): which codec a candidate can use, judged from
// the row sample while planning, and the encoding of a converted format's value arrays (host or
// device) that confirms it. The encoding checks every stored value: a value the sample missed
// makes it fail, and the plan keeps plain values (never a wrong product).
#pragma once

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <optional>
#include <string>
#include <vector>

#include "core/buffer.hpp"
#include "engine/formats/format.hpp"
#include "engine/sample.hpp"
#include "runtime/backend.hpp"
#include "templates/contract/values.h"

namespace spmvjit {

enum class ValueCodec : int {
  plain = SPMVJIT_VALUES_PLAIN,
  uniform = SPMVJIT_VALUES_UNIFORM,
  code8 = SPMVJIT_VALUES_CODE8
};
const char* to_string(ValueCodec c);

// The format parameter that carries a codec (baked as SPMVJIT_VALUE_CODEC); absent means plain.
inline constexpr const char* kValueCodecParam = "VALUE_CODEC";
ValueCodec codec_of(const FormatParams& p);
FormatParams with_codec(FormatParams p, ValueCodec c);  // plain removes the parameter

// Distinct values as bit patterns (as wide as V), sorted: code i stands for bits[i], and
// table_values() lays them out as V for SpmvArgs::values_table.
struct ValueTable {
  ValueType type = ValueType::f64;
  std::vector<uint64_t> bits;
  AlignedBuffer table_values() const;
};

// The sample's distinct values; nullopt when there are more than a CODE8 table holds (one slot
// kept free for the zeros of padding).
std::optional<ValueTable> sample_values(const RowSample& s);

// The codec for a candidate storing `stored` entries (padding included) of a matrix of `nnz`
// entries whose sample holds `sample`: uniform for one value and no padding, else code8 (its
// table always holds +0.0, what padding stores), else plain. `table` receives the table to encode
// with.
ValueCodec codec_for(const ValueTable& sample, int64_t stored, int64_t nnz, ValueTable* table);

// The table `codec` needs for these `n` values (a V array in host memory): their one value
// (uniform), or their distinct values and +0.0 (code8); nullopt when they do not fit.
std::optional<ValueTable> table_of_values(const void* values, int64_t n, ValueType type, ValueCodec codec);

// Bytes the codec reads per stored entry.
int64_t codec_entry_bytes(ValueCodec c, ValueType v);

// Open addressing over bit patterns, at most SPMVJIT_VALUES_TABLE_MAX keys in 1024 slots (a probe
// or two): each key's code is its insertion order.
class ValueCodeSet {
 public:
  ValueCodeSet() { std::fill(std::begin(code_), std::end(code_), -1); }
  // A table's codes: bits[i] gets code i.
  explicit ValueCodeSet(const ValueTable& t) : ValueCodeSet() {
    for (uint64_t b : t.bits) insert(b, t.bits.size());
  }
  // The key's code, or -1.
  int find(uint64_t b) const { return code_[slot(b)]; }
  // Adds the key if new; false when it is new and the set already holds `cap` keys.
  bool insert(uint64_t b, size_t cap) {
    const size_t h = slot(b);
    if (code_[h] >= 0) return true;
    if (keys_.size() >= cap) return false;
    key_[h] = b;
    code_[h] = int(keys_.size());
    keys_.push_back(b);
    return true;
  }
  const std::vector<uint64_t>& keys() const { return keys_; }

 private:
  static constexpr size_t kSlots = 1024;
  static_assert(kSlots >= 2 * SPMVJIT_VALUES_TABLE_MAX, "a half-empty table keeps probes short");
  size_t slot(uint64_t b) const {  // the key's slot, or the empty one where it would go
    size_t h = size_t((b * 0x9E3779B97F4A7C15ull) >> 54);
    while (code_[h] >= 0 && key_[h] != b) h = (h + 1) & (kSlots - 1);
    return h;
  }
  uint64_t key_[kSlots];
  int code_[kSlots];
  std::vector<uint64_t> keys_;
};

// Encodes the value arrays of `d` (plain, host memory) in place and updates its matrix_bytes.
// False, with `d` unchanged, when a stored value is not in the table.
bool encode_values_host(FormatData& d, ValueCodec c, const ValueTable& t);
// The CODE8 codes of n values of vs (4 or 8) bytes into out, in parallel; false when the table
// lacks one of them (out then partly written).
bool encode_codes(const void* values, size_t vs, int64_t n, const ValueCodeSet& lookup, uint8_t* out);
// The same for value arrays in device memory (HostArray::device), with the device_plan module's
// encoder; the old arrays are freed once every array encoded.
bool encode_values_device(Backend& b, const std::string& cache_dir, const TargetInfo& target, FormatData& d,
                          ValueCodec c, const ValueTable& t);

}  // namespace spmvjit
