// The Format interface: one implementation per storage format (converter + byte estimate).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/buffer.hpp"
#include "core/kernel_args.hpp"
#include "core/target.hpp"
#include "engine/csr.hpp"
#include "engine/stats.hpp"

namespace spmvjit {

std::string params_json(const FormatParams& p);

// A converted array. `values` marks arrays rebuilt by update_values. Arrays built on a device
// (Format::convert_device) leave `buf` empty and own their device memory through `device`.
struct HostArray {
  std::string name;
  AlignedBuffer buf;
  int64_t count = 0;
  size_t elem = 0;
  bool values = false;
  std::shared_ptr<void> device;
};

// The result of converting a CSR matrix into one format.
struct FormatData {
  std::string format;
  FormatParams params;
  std::vector<HostArray> arrays;  // kernel argument order: args.a[0..]
  int64_t ints[kMaxArrays] = {};  // sizes the kernel reads: args.n[0..]
  int64_t stored_entries = 0;     // value slots including padding
  int64_t matrix_bytes = 0;       // bytes of matrix arrays streamed by one SpMV
  int64_t scratch_bytes = 0;      // per-plan work buffer for carries
  std::vector<LaunchStep> steps;  // in order
  std::string facts_json = "{}";  // format-specific facts for describe (index bytes saved ...)
};

// Byte/work estimate computed without converting.
struct Estimate {
  bool applicable = true;
  std::string reason;          // why not applicable, or a one-line summary
  int64_t stored_entries = 0;  // including padding
  int64_t matrix_bytes = 0;    // matrix arrays read per SpMV
  double imbalance = 1.0;      // max work of a worker over mean (>= 1)
  // Modeled cost in byte-equivalents: matrix bytes plus per-row/per-entry overheads the format
  // pays (loop control, atomics, carries). The planner ranks by cost_bytes * imbalance.
  double cost_bytes = 0;
};

struct Triplet {
  int64_t row, col;
  double value;
  bool operator<(const Triplet& o) const { return row != o.row ? row < o.row : col < o.col; }
  bool operator==(const Triplet& o) const { return row == o.row && col == o.col && value == o.value; }
};

class DeviceConverter;

class Format {
 public:
  virtual ~Format() = default;
  virtual std::string name() const = 0;
  virtual bool supports(BackendKind b) const = 0;
  // Parameter sets worth considering for this matrix and target.
  virtual std::vector<FormatParams> candidates(const CsrRef& a, const MatrixStats& s,
                                               const TargetInfo& t) const = 0;
  virtual Estimate estimate(const CsrRef& a, const MatrixStats& s, const FormatParams& p,
                            const TargetInfo& t) const = 0;
  // Throws Error(UNSUPPORTED) when the format does not apply (e.g. padding would blow memory).
  virtual FormatData convert(const CsrRef& a, const FormatParams& p, const TargetInfo& t) const = 0;
  // Conversion on a device, for CSR arrays already in its memory. Formats that say true to
  // converts_on_device implement convert_device for the params device_convertible accepts, and
  // their candidates and estimates read only the statistics, never row_ptr.
  virtual bool converts_on_device() const { return false; }
  virtual bool device_convertible(const FormatParams& p) const {
    (void)p;
    return converts_on_device();
  }
  virtual FormatData convert_device(DeviceConverter& dc, const FormatParams& p, const TargetInfo& t) const;
  // Every stored slot with a nonzero value as (row, col, value), in any order: the converter
  // round-trip check (input minus explicit zeros must come back exactly).
  virtual void to_triplets(const FormatData& d, const CsrRef& shape,
                           std::vector<Triplet>& out) const = 0;
  // The subset of params baked into the kernel as compile-time constants.
  virtual FormatParams kernel_constants(const FormatParams& p) const { return p; }
  // Every constant set a plan on this target may bake (for `warmup`): finite by design.
  virtual std::vector<FormatParams> kernel_variants(const TargetInfo& t, ValueType v) const {
    (void)t, (void)v;
    return {FormatParams{}};
  }
  // Template file under templates/<cpu|gpu>/ (without extension).
  virtual std::string template_name() const { return name(); }
};

// All formats known to the engine, in a fixed order.
const std::vector<const Format*>& all_formats();
// nullptr if unknown.
const Format* find_format(const std::string& name);

// Helpers shared by converters.
template <class T>
HostArray make_array(const std::string& name, int64_t count, bool values = false) {
  HostArray h;
  h.name = name;
  h.count = count;
  h.elem = sizeof(T);
  h.values = values;
  h.buf = AlignedBuffer(size_t(count) * sizeof(T));
  return h;
}
// Appends the CPU "parts" array (part p covers work units [bounds[p], bounds[p+1])) and the
// launch step that runs every part on the thread pool.
inline void add_cpu_parts(FormatData& d, const std::vector<int64_t>& bounds) {
  HostArray parts = make_array<int64_t>("parts", int64_t(bounds.size()));
  for (size_t i = 0; i < bounds.size(); ++i) parts.buf.as<int64_t>()[i] = bounds[i];
  d.arrays.push_back(std::move(parts));
  d.steps.push_back({"spmvjit_part", int64_t(bounds.size()) - 1, 1, 0});
}
// Splits [0, rows) into `parts` ranges of about equal weight (nnz + rows), each boundary a
// multiple of `granule` rows. Returns parts + 1 boundaries.
std::vector<int64_t> balance_rows(const CsrRef& a, int parts, int64_t granule);
int64_t sum_matrix_bytes(const FormatData& d);
// to_triplets for formats whose arrays 0..2 are CSR's row_ptr, col_idx and values.
void csr_layout_to_triplets(const FormatData& d, const CsrRef& shape, std::vector<Triplet>& out);

}  // namespace spmvjit
