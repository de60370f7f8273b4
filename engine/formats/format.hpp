// The Format interface: one implementation per storage format, each in its own file, registered
// from there (SPMVJIT_REGISTER_FORMAT). A format owns its name, parameter space, estimate and
// efficiency factors, host and device converters, kernel contract and templates.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "core/buffer.hpp"
#include "core/json.hpp"
#include "core/kernel_args.hpp"
#include "core/target.hpp"
#include "engine/csr.hpp"
#include "engine/stats.hpp"
#include "runtime/device_buffer.hpp"

namespace spmvjit {

// Index compression: a format whose params carry COL_BITS = 16 stores its column-index slot
// (named col_idx, kind index) as 16-bit offsets from per-segment base columns (csr_adaptive).
inline constexpr const char* kColBitsParam = "COL_BITS";
inline bool col_bits16(const FormatParams& p) {
  const auto it = p.find(kColBitsParam);
  return it != p.end() && it->second == 16;
}

// Deterministic mode (spmv_options_t::deterministic): a format whose GPU kernels would sum
// partial results with atomics takes DETERMINISTIC = 1 and sums them in a fixed order instead (a
// launch choice, not a kernel constant: kernel_constants drops it, the module exports both).
inline constexpr const char* kDeterministicParam = "DETERMINISTIC";
inline bool deterministic_sums(const FormatParams& p) {
  const auto it = p.find(kDeterministicParam);
  return it != p.end() && it->second != 0;
}

// Multiple vectors (spmm_execute): a format that multiplies several vectors at once
// (Format::multi_vector) takes VECTORS (baked_vectors(k): k up to 8, then 16 or 32 with the exact k
// from SpmvArgs::vectors, 0 past 32: any k, in blocks)
// and LAYOUT (0 column-major, 1 row-major X and Y), both kernel constants the planner sets.
inline constexpr const char* kVectorsParam = "VECTORS";
inline constexpr const char* kLayoutParam = "LAYOUT";

// Parameters as a JSON object, in FormatParams' (sorted) order.
Json params_json(const FormatParams& p);

// A converted array in its contract slot. Arrays built on a device (Format::convert_device)
// leave `buf` empty and own their device memory through `device` (count * elem bytes).
struct HostArray {
  std::string name;  // the contract's name (describe, tests)
  AlignedBuffer buf;
  int64_t count = 0;
  size_t elem = 0;
  ArrayKind kind = ArrayKind::index;
  DeviceBuffer device;

  bool is_values() const { return kind == ArrayKind::value; }  // rebuilt by update_values
  bool host_only() const { return kind == ArrayKind::parts; }  // never uploaded, not streamed
};

// The result of converting a CSR matrix into one format: arrays by contract slot (args.a[slot]),
// sizes by slot (args.n[slot]), launch steps.
struct FormatData {
  std::string format;
  FormatParams params;
  IndexType index = IndexType::i32;
  ValueType value = ValueType::f64;
  std::vector<HostArray> arrays;  // by slot: args.a[0..]
  int64_t ints[kMaxArrays] = {};  // sizes the kernel reads: args.n[0..]
  // Value slots kernels read, padding included; a format's only value array may extend past them
  // with entries no product uses (csr_adaptive pads its tail for vector loads).
  int64_t stored_entries = 0;
  int64_t matrix_bytes = 0;       // bytes of matrix arrays streamed by one SpMV
  int64_t scratch_bytes = 0;      // per-plan work buffer for carries
  // When the converter counted them (-1: it did not): the value slots holding a nonzero value,
  // for rows that strictly ascend (each entry in a slot of its own). Saves the plan a pass over
  // the values (Plan::nonzero_slots).
  int64_t nonzero_slots = -1;
  std::vector<LaunchStep> steps;  // in order
  Json facts = Json::object();    // format-specific facts for describe (index bytes saved ...)

  // Starts a conversion: one empty array per slot of the format's contract table.
  void declare(const std::string& format_name, const FormatParams& p, std::span<const ArraySlot> slots,
               IndexType i, ValueType v);
  // Allocates slot's host array of `count` elements of T (T must match the slot's kind).
  template <class T>
  T* make(int slot, int64_t count) {
    HostArray& h = at(slot, sizeof(T));
    h.count = count;
    h.buf = AlignedBuffer(size_t(count) * sizeof(T));
    return h.buf.as<T>();
  }
  // Puts an array built elsewhere (a device converter) into a slot; name and kind stay the contract's.
  void put(int slot, HostArray a);
  // The slot's array, checking that elements of `elem_bytes` fit its kind.
  HostArray& at(int slot, size_t elem_bytes);
};

// Byte/work estimate computed without converting.
struct Estimate {
  bool applicable = true;
  // Applies, but the automatic planner does not pick it (reason says why); a caller may force it.
  bool offered = true;
  std::string reason;          // why not applicable or not offered, or a one-line summary
  int64_t stored_entries = 0;  // including padding
  int64_t matrix_bytes = 0;    // matrix arrays read per SpMV
  double imbalance = 1.0;      // max work of a worker over mean (>= 1)
  // Modeled cost in byte-equivalents: matrix bytes plus per-row/per-entry overheads the format
  // pays (loop control, atomics, carries). The planner ranks by cost_bytes * imbalance *
  // Format::efficiency.
  double cost_bytes = 0;
};

struct Triplet {
  int64_t row, col;
  double value;
  double imag = 0;  // complex values' imaginary part
  bool operator<(const Triplet& o) const { return row != o.row ? row < o.row : col < o.col; }
  bool operator==(const Triplet& o) const {
    return row == o.row && col == o.col && value == o.value && imag == o.imag;
  }
};
// A stored value as a Triplet (both parts of a complex one).
template <class V>
Triplet make_triplet(int64_t row, int64_t col, V v) {
  if constexpr (is_complex_v<V>)
    return Triplet{row, col, double(v.real()), double(v.imag())};
  else
    return Triplet{row, col, double(v)};
}

// Where each value array's slots start when a layout's value slots are numbered over all its
// value arrays: one entry per array of d (-1 where the array holds no values), the total last.
std::vector<int64_t> value_slot_bases(const FormatData& d);
// Which of a layout's slots hold an entry, by slot number (value_slot_bases): marks of every
// slot, or a test asked slot by slot (sliced layouts look at a few slots a row).
class HeldSlots {
 public:
  explicit HeldSlots(const uint8_t* marks) : marks_(marks) {}
  HeldSlots(bool (*test)(const void*, int64_t), const void* context) : test_(test), context_(context) {}
  bool operator()(int64_t slot) const { return marks_ ? marks_[slot] != 0 : test_(context_, slot); }
  const uint8_t* marks() const { return marks_; }  // null for a test

 private:
  const uint8_t* marks_ = nullptr;
  bool (*test_)(const void*, int64_t) = nullptr;
  const void* context_ = nullptr;
};
// A value array stored in slices (sell, ell): slice s holds positions s * c .. s * c + c - 1 of
// the row order (row perm[p], or p without a perm; positions past the matrix's rows hold only
// padding), its slot slice_ptr[s] + j * c + i is entry j of position s * c + i's row in CSR order,
// and padding follows a row's entries. A value map of such an array is each row's first entry
// and count: positions computed while it gathers, none stored.
struct SlicedValues {
  size_t array = 0;                // in FormatData::arrays
  int64_t c = 0;                   // positions a slice
  std::vector<int64_t> slice_ptr;  // slices + 1 slot offsets
  std::vector<int64_t> perm;       // position -> row; empty: the identity
};
// A layout of R x C blocks in one value array (Format::blocked_values): block row b's blocks are
// blocks [block_ptr[b], block_ptr[b + 1]), each R * C slots row-major, and its rows b * R + i hold
// their entries in block order, column order within a block (rows strictly ascending).
struct BlockedValues {
  size_t array = 0;                // in FormatData::arrays
  int64_t r = 0, c = 0;            // rows and columns a block
  std::vector<int64_t> block_ptr;  // block rows + 1 block offsets
};
// Calls f.template operator()<P>() with P the position type of number_slots' `pos_bytes`.
template <class F>
decltype(auto) with_position_type(size_t pos_bytes, F&& f) {
  return pos_bytes == 4 ? f.template operator()<int32_t>() : f.template operator()<int64_t>();
}

// A format's own update gather for device value maps (templates/contract/value_gather.h gives
// its arguments): a kernel of one of its device build modules that computes the slots of rows
// whose placement follows from the layout and the pattern, and reads the map for the others.
struct DeviceGather {
  std::string module, entry;
  std::vector<size_t> layout;   // the layout arrays it reads, at a[VG_LAYOUT0 + k]
  std::vector<int64_t> params;  // its sizes, at n[VG_N_PARAM0 + k]
  int64_t items = 0;            // threads (grid-stride)
  int block = 0;                // threads a block
};

class DeviceConverter;

class Format {
 public:
  virtual ~Format() = default;
  virtual std::string name() const = 0;
  virtual bool supports(BackendKind b) const = 0;
  // Value types its converters and kernels handle: real ones unless it says more (complex values
  // need a converter instantiated for them, dispatch_types_complex, and templates that read alpha
  // and beta through spmvjit_alpha/spmvjit_beta). The planner gives the others no candidate.
  virtual bool supports_value(ValueType v) const { return !is_complex(v); }
  // True for formats whose kernels multiply k vectors at once (VECTORS, LAYOUT params): the
  // planner's only candidates for k > 1, and none for k = 1 unless forced.
  virtual bool multi_vector() const { return false; }
  // The array slots of its kernel contract (templates/contract/<name>.h), by slot.
  virtual std::span<const ArraySlot> contract_arrays() const { return {}; }
  // Parameter sets worth considering for this matrix and target.
  virtual std::vector<FormatParams> candidates(const CsrRef& a, const MatrixStats& s,
                                               const TargetInfo& t) const = 0;
  // Independent parts of the work candidates() and estimate() will do, which the planner may
  // run first on its other threads: each keeps its result where they find it (RowSample::memo)
  // and is safe to run at any time on any thread. None by default.
  virtual std::vector<std::function<void()>> estimate_parts(const CsrRef& a, const MatrixStats& s,
                                                            const TargetInfo& t) const {
    (void)a, (void)s, (void)t;
    return {};
  }
  virtual Estimate estimate(const CsrRef& a, const MatrixStats& s, const FormatParams& p,
                            const TargetInfo& t) const = 0;
  // Time per modeled byte-equivalent relative to csr (1.0) beyond what the estimate sees (code
  // quality, vector use), measured per backend on the generated suite (docs/PERFORMANCE.md).
  virtual double efficiency(const MatrixStats& s, const TargetInfo& t) const {
    (void)s, (void)t;
    return 1.0;
  }
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
  // True when convert_device writes CODE8 codes into its value arrays (one byte per slot, code 0
  // the zero) where the converter passes a table (DeviceConverter::codes): a plan whose values
  // compress then writes an eighth of the value bytes and encodes nothing afterwards.
  virtual bool builds_device_codes() const { return false; }
  // The build modules (templates/gpu/<name>.cu) convert_device launches: `warmup` compiles them.
  virtual std::vector<std::string> device_build_modules() const { return {}; }
  // True when slots 0 and 1 hold the input's zero-based row_ptr and col_idx unchanged (with these
  // params), so a plan can rebuild values from them (update_values) without keeping a copy of
  // the pattern.
  virtual bool keeps_csr_pattern(const FormatParams& p) const {
    (void)p;
    return false;
  }
  // Every stored slot with a nonzero value as (row, col, value), in any order: the converter
  // round-trip check (input minus explicit zeros must come back exactly).
  virtual void to_triplets(const FormatData& d, const CsrRef& shape, std::vector<Triplet>& out) const = 0;
  // Converts values given as one-byte codes: `a.val` holds nnz CODE8 codes of a table whose code 0
  // is +0.0, and a.value stays the values' type (which sizes every choice, as in convert). The
  // layout is convert's with its value arrays the codes encode_values_host would make of them:
  // a plan whose values compress writes an eighth of the bytes and encodes nnz values, not every
  // stored slot. Formats without it (converts_codes() false) refuse.
  virtual bool converts_codes() const { return false; }
  virtual FormatData convert_codes(const CsrRef& a, const FormatParams& p, const TargetInfo& t) const {
    (void)a, (void)p, (void)t;
    fail(SPMV_STATUS_UNSUPPORTED, name() + ": no conversion of coded values");
  }
  // How update_values reads a value map off a layout that holds the pattern, without converting
  // (formats with none learn theirs by a conversion): the whole layout one sliced value array
  // (sliced_values: sell, ell), one array of blocks (blocked_values: bsr; the map keeps each
  // block's held slots as a bit mask), or the format numbering every slot (numbers_slots: bsr,
  // sell_diag).
  virtual bool sliced_values(const FormatData& d, SlicedValues& out) const {
    (void)d, (void)out;
    return false;
  }
  virtual bool blocked_values(const FormatData& d, BlockedValues& out) const {
    (void)d, (void)out;
    return false;
  }
  // numbers_slots: writes, for each slot of every value array i, the CSR position of the entry
  // it holds or -1 (padding) into positions[i] (int32_t when pos_bytes is 4, else int64_t; null
  // for arrays without values). The pattern's rows strictly ascend and `held` marks the entries'
  // slots. False when they cannot be the pattern's entries (their count is not shape.nnz, or a
  // mark is where no entry can be).
  virtual bool numbers_slots() const { return false; }
  virtual bool number_slots(const FormatData& d, const CsrRef& shape, const HeldSlots& held,
                            void* const* positions, size_t pos_bytes) const {
    (void)d, (void)shape, (void)held, (void)positions, (void)pos_bytes;
    return false;
  }
  // Device value maps (engine/value_map.cpp): the format's update gather for layout d, if it has
  // one; the map checks its positions against its own once before it uses it.
  virtual bool device_gather(const FormatData& d, DeviceGather& out) const {
    (void)d, (void)out;
    return false;
  }
  // The subset of params baked into the kernel as compile-time constants.
  virtual FormatParams kernel_constants(const FormatParams& p) const { return p; }
  // Deterministic mode: "" when the kernels for p, after this call set what they need in p,
  // sum every row in the same order on every run on t; otherwise why they cannot (the planner
  // then excludes p and shows the reason). Default: each row has one fixed summation order.
  virtual std::string make_deterministic(FormatParams& p, const TargetInfo& t) const {
    (void)p, (void)t;
    return "";
  }
  // Every constant set a plan on this target may bake (for `warmup`): finite by design.
  virtual std::vector<FormatParams> kernel_variants(const TargetInfo& t, ValueType v) const {
    (void)t, (void)v;
    return {FormatParams{}};
  }
  // True for formats that store one triangle of a matrix declared symmetric (MatrixStats::symmetric)
  // and read it for both: describe's "symmetric" section says which storage a plan has.
  virtual bool stores_one_triangle() const { return false; }
  // Template file under templates/<cpu|gpu>/ (without extension).
  virtual std::string template_name() const { return name(); }
};

// Called from a format's own file at static initialization; the name must be new.
bool register_format(const Format& f);
#define SPMVJIT_REGISTER_FORMAT(Type)                                             \
  namespace {                                                                     \
  const Type k##Type##Instance;                                                   \
  const bool k##Type##Registered = ::spmvjit::register_format(k##Type##Instance); \
  }

// All registered formats, sorted by name (a fixed order for ties and listings).
const std::vector<const Format*>& all_formats();
// nullptr if unknown.
const Format* find_format(const std::string& name);

// Helpers shared by converters.
// Fills a parts slot with CPU part boundaries (part p covers work units [bounds[p], bounds[p+1]))
// and adds the launch step that runs every part on the thread pool.
void set_cpu_parts(FormatData& d, int slot, const std::vector<int64_t>& bounds);
// Splits [0, rows) into `parts` ranges of about equal weight (nnz + rows), each boundary a
// multiple of `granule` rows. Returns parts + 1 boundaries.
std::vector<int64_t> balance_rows(const CsrRef& a, int parts, int64_t granule);
int64_t sum_matrix_bytes(const FormatData& d);
// CSR-layout formats (csr, csr_vector, csr_adaptive, merge) keep the input's zero-based CSR
// arrays in slots 0-2: copies made in parallel on the host, col_idx and values padded with zeros
// to `padded` entries (col_idx left to the caller without copy_col_idx: csr_adaptive's 16-bit
// columns); or the same built on a device.
inline constexpr int kCsrRowPtrSlot = 0, kCsrColIdxSlot = 1, kCsrValuesSlot = 2;
void copy_csr_arrays(FormatData& d, const CsrRef& a, int64_t padded, bool copy_col_idx = true);
void put_device_csr_arrays(FormatData& d, DeviceConverter& dc, int64_t padded);
// to_triplets for formats whose arrays 0..2 are CSR's row_ptr, col_idx and values.
void csr_layout_to_triplets(const FormatData& d, const CsrRef& shape, std::vector<Triplet>& out);

}  // namespace spmvjit
