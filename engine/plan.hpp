// Plan: everything one matrix needs at execute time (converted arrays, kernels, executor).
#pragma once

#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/log.hpp"
#include "engine/planner.hpp"
#include "engine/scalar.hpp"
#include "engine/stats.hpp"
#include "engine/symmetric.hpp"
#include "engine/transpose.hpp"
#include "runtime/backend.hpp"
#include "runtime/cache/background.hpp"
#include "runtime/cache/kernel_cache.hpp"
#include "runtime/device_buffer.hpp"

namespace spmvjit {

class ValueMap;
class DevicePlanner;

// Seconds per plan stage. input_upload: a host CSR copied once to a GPU to be planned there (the
// one upload every GPU plan of host data pays; the rest is the planning proper).
// Seconds of each planning stage. backend_init: the process's first use of the device (context,
// compiler libraries), paid once per process. compile/load: every module the plan needed (device
// planning and build modules included); the stages around them exclude that time.
// A FormatData with only the value slots of `layout`, plain and allocated (device arrays with
// `device`, else host buffers; unless `allocate` is false: names, kinds and counts only): where a
// value map gathers an update (engine/plan_update.cpp, engine/plan_pattern.cpp).
FormatData plain_value_arrays(const FormatData& layout, Backend* device, bool allocate = true);

struct PlanTimings {
  double backend_init = 0, input_upload = 0, transpose = 0, symmetric = 0, validate = 0, stats = 0, plan = 0,
         convert = 0, codegen = 0, compile = 0, load = 0, upload = 0, total = 0;
};

class Plan {
 public:
  // `backend` null: the one options.backend and options.device name (tests pass a fake).
  // `params` (only with options.format naming a format): exactly these parameters, as wisdom
  // remembers them; throws UNSUPPORTED when they are not a candidate for this matrix or do not apply.
  Plan(const spmv_csr_t& a, const spmv_options_t& options, Backend* backend = nullptr,
       const FormatParams* params = nullptr);
  ~Plan();
  Plan(const Plan&) = delete;
  Plan& operator=(const Plan&) = delete;

  void execute(const void* alpha, const void* x, const void* beta, void* y, void* stream);
  // Y = alpha*A*X + beta*Y for the plan's k vectors in its layout (spmm_execute).
  void execute_many(const void* alpha, const void* x, int64_t ldx, const void* beta, void* y, int64_t ldy,
                    void* stream);
  void update_values(const void* values, spmv_memory_t memory);
  // What the plan is and how it was made: format, parameters, kernel, bytes, the planner's
  // ranking, statistics and stage timings. Tools read fields from it, never from the text.
  Json describe_json() const;
  // describe_json() as text (the C API's spmv_plan_describe); valid until the next call.
  const std::string& describe();

  const FormatData& data() const { return data_; }
  // How the value arrays are stored (engine/value_codec.hpp).
  ValueCodec value_codec() const { return codec_of(data_.params); }
  const ValueTable& value_table() const { return value_table_; }  // meaningful unless plain
  const PlanChoice& choice() const { return choice_; }
  // Where the kernel in use came from: the specialized module's outcome once it took over from
  // the run-time epilogue variant (notes of both kept).
  CacheOutcome cache() const;
  // Blocks until the specialized kernels compiling in the background (if any) are in use: for
  // benchmarks and tests that time or check them.
  void wait_for_kernels() const;
  // "specialized", or "run-time epilogue" while the specialized module compiles in the background.
  std::string kernel_tier() const;
  // True when the plan began on the run-time epilogue variant (the specialized one was not cached).
  bool tiered() const { return upgrade_ != nullptr; }
  // How spmv_plan_update_values renews the values: "not yet updated", "gather through a value
  // map" (after a first update that reconverted and found the map), "gather through a value map
  // read off the layout" (the first update read it off a layout holding the pattern), "gather
  // through a value map and the format's kernel" (a device map whose gathers compute the
  // positions of regular rows, Format::device_gather), or "reconversion".
  std::string values_update() const;
  // Where update_values finds the pattern: "format arrays" (the format's own CSR arrays), "copy"
  // (kept at plan time), "layout" (rebuilt from the format's arrays by the first update: kept no
  // copy) or "device copy".
  std::string pattern_source() const;
  // Measure-mode planning records what it timed (or the wisdom it used) in describe's planner section.
  void set_measurements(Json measured, std::string why) {
    measured_ = std::move(measured);
    choice_.why = std::move(why);
  }
  // The plan's logging options (core/log.hpp). Its constructor logs through them; the C API opens
  // a LogScope with them around every call on the plan.
  const LogSink& log_sink() const { return log_sink_; }
  const MatrixStats& stats() const { return stats_; }
  const PlanTimings& timings() const { return timings_; }
  BackendKind backend_kind() const { return backend_->kind(); }
  ValueType value_type() const { return value_; }
  IndexType index_type() const { return index_; }
  // op(A)'s sizes: y has rows() entries, x cols() (A's own are swapped when transposed()).
  int64_t rows() const { return rows_; }
  int64_t cols() const { return cols_; }
  spmv_operation_t operation() const { return operation_; }  // as asked (A^T = A when symmetric)
  // op(A) = A^T built at plan time (never for a symmetric matrix: A^T = A).
  bool transposed() const { return operation_ != SPMV_OPERATION_NON_TRANSPOSE && !symmetric_; }
  // op(A) = A^H of complex values: A^T's layout with conjugated values (A^T itself for real ones).
  bool conjugated() const {
    return transposed() && operation_ == SPMV_OPERATION_CONJUGATE_TRANSPOSE && is_complex(value_);
  }
  bool symmetric() const { return symmetric_; }  // spmv_options_t::matrix_type: SYMMETRIC or HERMITIAN
  bool hermitian() const { return hermitian_; }  // HERMITIAN with complex values (A = A^H)
  spmv_matrix_type_t matrix_type() const { return matrix_type_; }  // as asked
  // op(A) = conj(A) for a complex symmetric (A^H) or Hermitian (A^T) matrix: the values conjugated.
  bool conjugated_symmetric() const {
    if (!symmetric_ || !is_complex(value_)) return false;
    return operation_ == (hermitian_ ? SPMV_OPERATION_TRANSPOSE : SPMV_OPERATION_CONJUGATE_TRANSPOSE);
  }
  bool fill_upper() const { return fill_upper_; }   // spmv_options_t::fill_mode
  int64_t nnz() const { return nnz_; }              // of the matrix planned (a symmetric one's full count)
  int64_t input_nnz() const { return input_nnz_; }  // of the CSR given to spmv_plan
  int threads() const { return worker_threads_; }   // CPU threads its executes use
  int64_t vectors() const { return vectors_; }      // k of spmm_execute (1: one vector)
  bool row_major() const { return row_major_; }     // layout of X and Y in spmm_execute
  // Bytes one SpMV moves in this format (matrix arrays + x + y read and written).
  int64_t bytes_per_spmv(bool beta_zero) const;
  // The same for plain CSR with this matrix's types: the common yardstick for GB/s.
  int64_t csr_equivalent_bytes(bool beta_zero) const;
  // True when the CSR was in device memory and the device built the format's arrays.
  bool converted_on_device() const { return converted_on_device_; }
  // data() with every array's contents in host memory (device-built arrays downloaded): for
  // tests and tools that inspect what a plan built.
  FormatData host_data() const;

 private:
  void plan_on_host(const CsrRef& user, bool device_memory, int base, const Format* forced);
  // Device input: for op(A) = A^T, validates A and builds A^T on the device first.
  void plan_on_device(const CsrRef& user, int base, const Format* forced);
  void plan_device_csr(const CsrRef& csr, int base, const Format* forced);
  void plan_uploaded(const CsrRef& user, int base, const Format* forced);
  // op(A) = A^T: validates A (host or device memory) and builds A^T on the host; the plan is then
  // made for A^T as for any matrix. Keeps the scatter positions for update_values.
  CsrRef transpose_on_host_input(const CsrRef& user, bool device_memory, int base, HostTranspose& out);
  // `user` readable on the host: itself, or (device memory) copies downloaded into `copies`.
  CsrRef host_view(const CsrRef& user, bool device_memory, AlignedBuffer (&copies)[3]) const;
  // A symmetric matrix (engine/plan_symmetric.cpp): validates the triangle given (host or device
  // memory) and builds the full matrix on the host, which the plan is then made for. Keeps the
  // expansion positions for update_values.
  CsrRef expand_symmetric_input(const CsrRef& user, bool device_memory, int base, HostSymmetric& out);
  Json symmetric_json() const;  // describe's "symmetric" section (null for a general matrix)
  // update_values of a symmetric plan: the triangle's values (host or device) expanded to the full
  // matrix's order, in host memory.
  AlignedBuffer expand_symmetric_update(const void* values, spmv_memory_t memory);
  template <class Convert>
  void convert_with_fallback(const Format* forced, Convert&& convert);
  void fit_threads(const CsrRef& a);
  Json transpose_json() const;  // describe's "transpose" section (null for op(A) = A)
  // Both executes: k vectors with leading dimensions ldx, ldy (checked by the callers).
  void run(const void* alpha, const void* x, int64_t ldx, const void* beta, void* y, int64_t ldy,
           void* stream);
  // y = beta * y (0 when beta == 0): execute with alpha == 0.
  void scale_y(const Scalar& beta, void* y, const SpmvArgs& args, void* stream);
  void update_values_on_device(const void* values, spmv_memory_t memory);
  // Value compression (engine/plan_update.cpp): encodes the converted value arrays with the
  // chosen candidate's codec, or drops the codec when a value is missing from the sample's table.
  void compress_values(bool on_device);
  // The layout of a candidate whose values compress to CODE8, converted from the input's codes
  // (Format::convert_codes) with value_table_ set; nullopt where the format cannot, the table's
  // code 0 is not the only zero, or the sample missed a value (then convert and compress_values).
  std::optional<FormatData> convert_coded(const Format& f, const FormatParams& p, const CsrRef& csr);
  // The same on a device, for formats that build codes there (Format::builds_device_codes): the
  // build writes codes with the sample's table and counts the values it lacks (then nullopt).
  std::optional<FormatData> convert_device_coded(const Format& f, const FormatParams& p, DevicePlanner& dp);
  // The sample's CODE8 table for candidate params p, when p compresses to CODE8 and the table's
  // code 0 is the only zero.
  std::optional<ValueTable> code8_table(const FormatParams& p) const;
  void finish_coded(FormatData& d, ValueTable table);  // d's values are codes of `table`
  bool values_coded_ = false;  // data_'s values came out of convert_coded or convert_device_coded
  // An update's plain value arrays, encoded with the plan's codec (a new table when the old one
  // lacks a value; plain values and kernels when no table fits), put in place of the old ones.
  void install_values(FormatData fresh, const void* values, spmv_memory_t memory, bool encoded = false);
  void set_values_table();
  // Stored slots holding a nonzero value, over every value array of data_ (host arrays).
  int64_t nonzero_slots() const;
  // The first host update of a plan that kept no pattern copy (pattern_in_layout_): rebuilds the
  // zero-based CSR pattern from data_ into pattern_row_ptr_ / pattern_col_idx_.
  void derive_pattern();
  // The first host update of such a plan, where the format walks its slots: the value map read off
  // the layout (ValueMap::from_layout) instead of a pattern rebuilt and two conversions.
  void value_map_from_layout();
  // Marks of the layout's slots with a nonzero value, numbered from `base` (value_slot_bases).
  AlignedBuffer held_marks(const std::vector<int64_t>& base, const AlignedBuffer& table) const;
  // The first update's attempt at a value map (engine/plan_update.cpp): true when `build` gives one
  // that reproduces `fresh`, this update's conversion of `values`, which then serves later updates.
  bool try_value_map(const std::function<std::unique_ptr<ValueMap>()>& build, const void* values,
                     const FormatData& fresh);
  const void* device_pattern(int i) const;
  void upload_arrays();
  // The kernel module for a spec: the specialized one from the cache, else (when tiering) the
  // run-time epilogue variant; compiled when absent. `upgrade`: the specialized module is still to
  // be compiled in the background.
  struct KernelLookup {
    std::shared_ptr<LoadedModule> module;
    CacheOutcome outcome;
    bool runtime_epilogue = false, upgrade = false;
  };
  KernelLookup lookup_kernel(const KernelSpec& spec) const;
  KernelSpec chosen_spec() const { return spec_with(choice_.params); }  // the kernel of choice_
  KernelSpec spec_with(const FormatParams& params) const;  // the chosen format's kernel for params
  void start_kernel_lookup();
  void load_kernels();
  void use_kernel(KernelLookup k);  // binds its entries (and queues the specialized compile)
  void bind_entries(const std::string& suffix_or_empty);

  LogSink log_sink_;
  Backend* backend_ = nullptr;
  TargetInfo target_;       // target_.threads = parts the CPU formats cut the work into
  int worker_threads_ = 1;  // threads that run them
  int64_t vectors_ = 1;     // spmv_options_t::vectors (k)
  bool row_major_ = false;  // spmv_options_t::layout
  spmv_operation_t operation_ = SPMV_OPERATION_NON_TRANSPOSE;
  // op(A) = A^T: where A's k-th entry sits in A^T's CSR (update_values scatters A's values there).
  AlignedBuffer transpose_position_;
  DeviceBuffer device_transpose_position_;  // the same, for A^T built on the device
  bool transposed_on_device_ = false;
  spmv_matrix_type_t matrix_type_ = SPMV_MATRIX_GENERAL;
  bool symmetric_ = false, hermitian_ = false, fill_upper_ = false;
  int64_t input_nnz_ = 0;
  AlignedBuffer symmetric_position_;  // expand_symmetric_on_host's positions (2 per input entry)
  int threads_requested_ = 0;         // options.threads (0: all of the shared pool)
  static constexpr int kPartsPerThread = 4;
  IndexType index_;
  ValueType value_;
  int64_t rows_ = 0, cols_ = 0, nnz_ = 0;
  MatrixStats stats_;
  PlanChoice choice_;
  FormatData data_;
  KernelSpec spec_;
  CacheOutcome cache_;
  std::shared_ptr<LoadedModule> module_;
  std::unique_ptr<Executor> executor_;
  std::vector<void*> entries_[kEpilogueVariants];  // per epilogue, one per launch step
  // Set while the specialized module compiles in the background (entries_ then all point to the
  // run-time epilogue variant); execute switches to its entries once it is ready.
  std::shared_ptr<KernelUpgrade> upgrade_;
  bool runtime_epilogue_ = false;        // entries_ are the run-time epilogue variant's
  ValueTable value_table_;               // what CODE8 codes index / the UNIFORM value
  AlignedBuffer host_values_table_;      // value_table_ as V (CPU plans read it in place)
  DeviceBuffer device_values_table_;     // the same on a GPU
  std::unique_ptr<ValueMap> value_map_;  // found by the first update_values (engine/value_map.hpp)
  bool value_map_tried_ = false;
  bool value_map_from_layout_ = false;  // value_map_from_layout() found it
  // Declared after executor_ and module_: freed before them, as the old explicit ~Plan did.
  std::vector<DeviceBuffer> device_arrays_;  // GPU copies of data_.arrays (empty for host-only ones)
  DeviceBuffer device_scratch_;
  int64_t device_bytes_ = 0;  // device memory the plan holds
  AlignedBuffer host_scratch_;
  AlignedBuffer pattern_row_ptr_, pattern_col_idx_;  // zero-based pattern, for update_values
  // No copy of the pattern was made: data_'s nonzero slots are the input's entries and its rows
  // strictly ascend, so the first update rebuilds the pattern from the layout (derive_pattern).
  bool pattern_in_layout_ = false;
  // The same in device memory, for plans converted there; empty when the format's own slots 0 and 1
  // are the pattern (keeps_csr_pattern), which device_pattern() then borrows.
  DeviceBuffer device_pattern_[2];
  bool converted_on_device_ = false;
  bool deterministic_ = false;   // options.deterministic: fixed summation orders only
  std::mutex execute_mutex_;     // execute's turn when calls share the scratch
  void* scale_entry_ = nullptr;  // GPU: y = beta * y, for alpha == 0
  LaunchStep scale_step_;
  std::optional<FormatParams> forced_params_;  // set by the constructor's `params`
  std::string cache_dir_;
  SpmvArgs args_{};
  PlanTimings timings_;
  std::string describe_;
  Json measured_;
  // The chosen kernel's lookup, started as soon as the choice is made, on a thread of its own (a
  // compile then runs while the matrix converts; a small matrix's is done inline). Last: destroyed first, its
  // destructor waits for the thread before anything it reads goes away.
  std::string lookup_spec_;  // its spec, serialized
  std::future<KernelLookup> lookup_;
};

// The backend options.backend names (AUTO: a GPU when there is one), as Plan picks it.
BackendKind pick_backend(spmv_backend_t b, int device);

// The Plan behind a C handle (tools and tests inspect plans through it).
Plan& plan_impl(spmv_plan_t plan);

}  // namespace spmvjit
