// Plan construction (validate -> stats -> choose -> convert -> compile/load) and execution; the
// kernels' lookup, tiering and binding are in plan_kernels.cpp, describe() in plan_describe.cpp.
#include "engine/plan.hpp"

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>

#include "core/log.hpp"
#include "core/parallel.hpp"
#include "engine/device_plan.hpp"
#include "engine/validate.hpp"
#include "engine/value_map.hpp"  // complete for ~Plan

namespace spmvjit {
namespace {

using Clock = std::chrono::steady_clock;
double since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// Copies `count` indices converting base 1 to base 0.
template <class I>
void copy_rebased(void* dst, const void* src, int64_t count, int base) {
  const I* s = static_cast<const I*>(src);
  I* d = static_cast<I*>(dst);
  for (int64_t i = 0; i < count; ++i) d[i] = I(s[i] - base);
}

}  // namespace

BackendKind pick_backend(spmv_backend_t b, int device) {
  switch (b) {
    case SPMV_BACKEND_CPU: return BackendKind::cpu;
    case SPMV_BACKEND_CUDA: return BackendKind::cuda;
    case SPMV_BACKEND_HIP: return BackendKind::hip;
    case SPMV_BACKEND_AUTO: return auto_backend(device);
  }
  fail(SPMV_STATUS_INVALID_VALUE, "unknown backend " + std::to_string(int(b)));
}

Plan::Plan(const spmv_csr_t& a, const spmv_options_t& options, Backend* backend, const FormatParams* params) {
  const auto t_start = Clock::now();
  if (options.log_level < SPMV_LOG_TRACE || options.log_level > SPMV_LOG_DEFAULT)
    fail(SPMV_STATUS_INVALID_VALUE, "unknown log level " + std::to_string(int(options.log_level)));
  // The plan's own logging options, for its construction (the C API opens the same scope around
  // every later call on the plan); nothing process-wide changes.
  log_sink_ = LogSink{options.log_level, options.log_callback, options.log_user};
  LogScope log_scope(log_sink_);
  if (a.index_type != SPMV_INDEX_INT32 && a.index_type != SPMV_INDEX_INT64)
    fail(SPMV_STATUS_INVALID_VALUE, "unknown index type " + std::to_string(int(a.index_type)));
  if (int(a.value_type) < SPMV_VALUE_FLOAT || int(a.value_type) > SPMV_VALUE_COMPLEX_DOUBLE)
    fail(SPMV_STATUS_INVALID_VALUE, "unknown value type " + std::to_string(int(a.value_type)));
  index_ = a.index_type == SPMV_INDEX_INT32 ? IndexType::i32 : IndexType::i64;
  constexpr ValueType kValueTypes[] = {ValueType::f32, ValueType::f64, ValueType::c32, ValueType::c64};
  value_ = kValueTypes[int(a.value_type)];
  TraceSteps trace_init("plan");
  const auto t_backend = Clock::now();
  backend_ = backend ? backend : &get_backend(pick_backend(options.backend, options.device), options.device);
  cache_dir_ = resolve_cache_dir(options.cache_dir);
  backend_->use_cache_dir(cache_dir_);  // the CPU backend: the host, as remembered there
  timings_.backend_init = since(t_backend);
  trace_init.step("backend and cache folder");
  target_ = backend_->target();
  if (options.threads < 0) fail(SPMV_STATUS_INVALID_VALUE, "threads must be >= 0");
  threads_requested_ = options.threads;
  // CPU: a share of the process's one pool (runtime/cpu/thread_pool.hpp), never more than it has.
  if (options.threads > 0)
    target_.threads =
        backend_->kind() == BackendKind::cpu ? std::min(options.threads, target_.threads) : options.threads;
  if (int(options.operation) < 0 || int(options.operation) > SPMV_OPERATION_CONJUGATE_TRANSPOSE)
    fail(SPMV_STATUS_INVALID_VALUE, "unknown operation " + std::to_string(int(options.operation)));
  operation_ = options.operation;
  if (int(options.matrix_type) < 0 || int(options.matrix_type) > SPMV_MATRIX_HERMITIAN)
    fail(SPMV_STATUS_INVALID_VALUE, "unknown matrix type " + std::to_string(int(options.matrix_type)));
  if (int(options.fill_mode) < 0 || int(options.fill_mode) > SPMV_FILL_UPPER)
    fail(SPMV_STATUS_INVALID_VALUE, "unknown fill mode " + std::to_string(int(options.fill_mode)));
  matrix_type_ = options.matrix_type;
  symmetric_ = options.matrix_type != SPMV_MATRIX_GENERAL;
  hermitian_ = options.matrix_type == SPMV_MATRIX_HERMITIAN && is_complex(value_);  // real: symmetric
  fill_upper_ = options.fill_mode == SPMV_FILL_UPPER;
  if (symmetric_ && a.rows != a.cols)
    fail(SPMV_STATUS_INVALID_VALUE, "a symmetric matrix is square; this one has " + std::to_string(a.rows) +
                                        " rows and " + std::to_string(a.cols) + " columns");
  rows_ = transposed() ? a.cols : a.rows;
  cols_ = transposed() ? a.rows : a.cols;
  nnz_ = input_nnz_ = a.nnz;

  if (a.memory != SPMV_MEMORY_HOST && a.memory != SPMV_MEMORY_DEVICE)
    fail(SPMV_STATUS_INVALID_VALUE, "unknown memory kind " + std::to_string(int(a.memory)));
  if (a.memory == SPMV_MEMORY_DEVICE && backend_->is_host())
    fail(SPMV_STATUS_INVALID_VALUE, "matrix arrays are in device memory but the plan is for the CPU");
  if (a.rows < 0 || a.cols < 0 || a.nnz < 0)
    fail(SPMV_STATUS_INVALID_MATRIX, "negative size: rows " + std::to_string(a.rows) + ", cols " +
                                         std::to_string(a.cols) + ", nnz " + std::to_string(a.nnz));
  if (!a.row_ptr) fail(SPMV_STATUS_INVALID_VALUE, "row_ptr is null");
  if (a.index_base != 0 && a.index_base != 1)
    fail(SPMV_STATUS_INVALID_VALUE, "index_base must be 0 or 1, got " + std::to_string(a.index_base));
  deterministic_ = options.deterministic != 0;
  if (options.vectors < 0 || options.vectors > kMaxVectors)
    fail(SPMV_STATUS_INVALID_VALUE,
         "vectors must be 0 to " + std::to_string(kMaxVectors) + ", got " + std::to_string(options.vectors));
  vectors_ = std::max(options.vectors, 1);
  row_major_ = options.layout == SPMV_LAYOUT_ROW_MAJOR;
  const Format* forced = parse_format_option(options.format);
  SPMVJIT_ASSERT(!params || forced, "parameters given without a format");
  if (params) forced_params_ = *params;
  // A GPU plans where the data is fastest to read: CSR arrays already in device memory are
  // validated, analysed and converted there (no copy through the host), and host arrays are
  // uploaded once and planned the same way (a host pass over the matrix costs more than the
  // upload plus the whole device plan). Only a forced format the device cannot build takes the
  // host path (SPMVJIT_PLAN_ON_HOST=1 forces it, for comparison).
  // Complex values have no device builds yet: a GPU plan of them is made on the host and uploaded.
  const bool device_buildable = backend_->kind() != BackendKind::cpu && !is_complex(value_) &&
                                (!forced || forced->converts_on_device());
  static const bool host_planning = [] {
    const char* e = std::getenv("SPMVJIT_PLAN_ON_HOST");
    return e && std::string(e) == "1";
  }();
  CsrRef user{a.rows, a.cols, a.nnz, index_, value_, a.row_ptr, a.col_idx, a.values};
  spmv_memory_t memory = a.memory;
  int base = a.index_base;
  HostTranspose at;    // op(A) = A^T: the plan is made for A^T, built here unless on the device
  HostSymmetric full;  // a symmetric matrix: the plan is made for the full matrix, built here
  const bool on_device = device_buildable && (memory == SPMV_MEMORY_DEVICE || !host_planning);
  if (transposed() && !on_device) {
    user = transpose_on_host_input(user, memory == SPMV_MEMORY_DEVICE, base, at);
    memory = SPMV_MEMORY_HOST;
    base = 0;
  }
  if (symmetric_) {  // planned on the host: sym_diag, which reads one triangle, has no device build yet
    user = expand_symmetric_input(user, memory == SPMV_MEMORY_DEVICE, base, full);
    nnz_ = user.nnz;
    plan_on_host(user, false, 0, forced);
  } else if (memory == SPMV_MEMORY_DEVICE && device_buildable) {
    plan_on_device(user, base, forced);
  } else if (memory == SPMV_MEMORY_HOST && device_buildable && !host_planning) {
    plan_uploaded(user, base, forced);
  } else {
    plan_on_host(user, memory == SPMV_MEMORY_DEVICE, base, forced);
  }
  at = HostTranspose{};  // the plan has what it needs of A^T
  full = HostSymmetric{};

  TraceSteps trace("plan");
  spec_ = chosen_spec();
  load_kernels();
  trace.step("kernel ready");

  const auto t0 = Clock::now();
  upload_arrays();
  timings_.upload = since(t0);
  trace.step("arrays uploaded");
  executor_ = backend_->make_executor(worker_threads_);
  trace.step("executor");
  timings_.total = since(t_start);
}

void Plan::plan_on_host(const CsrRef& user, bool dev, int base, const Format* forced) {
  // The converters read a zero-based host CSR. Host base-0 input is read in place (no copy);
  // base-1 or device input is copied (and rebased) first.
  TraceSteps trace("plan on host");
  auto t0 = Clock::now();
  const size_t is = size_of(index_), vs = size_of(value_);
  const bool copy_input = dev || base != 0;
  auto fetch = [&](void* dst, const void* src, size_t bytes) {
    if (!bytes) return;
    if (!src) fail(SPMV_STATUS_INVALID_VALUE, "null CSR array with nonzero size");
    if (dev)
      backend_->download(dst, src, bytes);
    else
      parallel_copy(dst, src, bytes);
  };
  AlignedBuffer device_values;  // host copy of device values, only during conversion
  CsrRef csr = user;
  bool ascending = false;  // every row's columns strictly ascend (known for input read in place)
  if (copy_input) {
    validate_sizes(user, base);
    pattern_row_ptr_ = AlignedBuffer(is * size_t(user.rows + 1));
    pattern_col_idx_ = AlignedBuffer(is * size_t(user.nnz));
    fetch(pattern_row_ptr_.data(), user.row_ptr, pattern_row_ptr_.bytes());
    fetch(pattern_col_idx_.data(), user.col_idx, pattern_col_idx_.bytes());
    csr.row_ptr = pattern_row_ptr_.data();
    csr.col_idx = pattern_col_idx_.data();
    validate_csr(csr, base);
    if (base) {
      if (index_ == IndexType::i32) {
        copy_rebased<int32_t>(pattern_row_ptr_.data(), pattern_row_ptr_.data(), user.rows + 1, 1);
        copy_rebased<int32_t>(pattern_col_idx_.data(), pattern_col_idx_.data(), user.nnz, 1);
      } else {
        copy_rebased<int64_t>(pattern_row_ptr_.data(), pattern_row_ptr_.data(), user.rows + 1, 1);
        copy_rebased<int64_t>(pattern_col_idx_.data(), pattern_col_idx_.data(), user.nnz, 1);
      }
    }
    if (dev) {
      device_values = AlignedBuffer(vs * size_t(user.nnz));
      fetch(device_values.data(), user.val, device_values.bytes());
      csr.val = device_values.data();
    }
  } else {
    ascending = validate_csr(user, 0);
  }
  timings_.validate = since(t0);
  trace.step("validate");

  stats_ = compute_stats(csr);
  stats_.symmetric = symmetric_;
  stats_.hermitian = hermitian_;
  timings_.stats = stats_.seconds;
  trace.step("statistics");
  fit_threads(user);
  choice_ = choose_format(
      csr, stats_, target_, forced,
      {false, forced_params_ ? &*forced_params_ : nullptr, deterministic_, int(vectors_), row_major_});
  timings_.plan = choice_.seconds;
  trace.step("choice");
  start_kernel_lookup();
  trace.step("kernel lookup started");

  t0 = Clock::now();
  convert_with_fallback(forced, [&](const Format& f, const FormatParams& p) {
    if (std::optional<FormatData> coded = convert_coded(f, p, csr)) return std::move(*coded);
    return f.convert(csr, p, target_);
  });
  trace.step("convert");
  compress_values(false);
  trace.step("compress values");
  // update_values reconverts from the pattern after the caller may have freed its arrays: keep
  // a copy, unless the format's own arrays are the CSR pattern, or the layout holds it. It does
  // when rows strictly ascend and every value is nonzero: then the stored slots with a nonzero
  // value are exactly the input's entries, and the first update rebuilds the pattern from them.
  // poisson2d:1000's plan then holds 5 MB instead of 29 (its sell_diag codes, not the 24 MB
  // pattern); its time did not change measurably on the 2-vCPU VM (docs/PERFORMANCE.md).
  pattern_in_layout_ =
      !copy_input && ascending && backend_->is_host() && !choice_.format->keeps_csr_pattern(choice_.params) &&
      (data_.nonzero_slots >= 0 ? data_.nonzero_slots : nonzero_slots()) == nnz_;
  if (!copy_input && !pattern_in_layout_ && !choice_.format->keeps_csr_pattern(choice_.params)) {
    pattern_row_ptr_ = AlignedBuffer(is * size_t(user.rows + 1));
    pattern_col_idx_ = AlignedBuffer(is * size_t(user.nnz));
    parallel_copy(pattern_row_ptr_.data(), user.row_ptr, pattern_row_ptr_.bytes());
    parallel_copy(pattern_col_idx_.data(), user.col_idx, pattern_col_idx_.bytes());
  }
  timings_.convert = since(t0);
  trace.step("pattern");
}

void Plan::plan_device_csr(const CsrRef& user, int base, const Format* forced) {
  auto t0 = Clock::now();
  validate_sizes(user, base);
  TraceSteps trace("plan on device");
  DevicePlanner dp(*backend_, user, base, cache_dir_);
  trace.step("device planner");
  const double modules_s = dp.compile_seconds() + dp.load_seconds();
  stats_ = dp.analyze();  // validation runs inside the statistics kernels
  stats_.symmetric = symmetric_;
  stats_.hermitian = hermitian_;
  timings_.stats = since(t0) - modules_s;
  trace.step("statistics");
  dp.prefetch_pattern();  // copied on the device while the host chooses
  trace.step("pattern prefetch");
  // The estimates of device-convertible formats read only the statistics: give them no arrays.
  CsrRef shape = user;
  shape.row_ptr = shape.col_idx = shape.val = nullptr;
  choice_ = choose_format(
      shape, stats_, target_, forced,
      {true, forced_params_ ? &*forced_params_ : nullptr, deterministic_, int(vectors_), row_major_});
  timings_.plan = choice_.seconds;
  trace.step("choice");
  start_kernel_lookup();
  trace.step("kernel lookup started");
  t0 = Clock::now();
  convert_with_fallback(forced, [&](const Format& f, const FormatParams& p) {
    if (std::optional<FormatData> coded = convert_device_coded(f, p, dp)) return std::move(*coded);
    return f.convert_device(dp, p, target_);
  });
  trace.step("convert");
  compress_values(true);
  trace.step("compress values");
  // update_values rebuilds the values on the device from the pattern: the format's own CSR
  // arrays when it has them (borrowed, see device_pattern), else a device copy.
  if (choice_.format->keeps_csr_pattern(choice_.params)) {
    SPMVJIT_ASSERT(!data_.arrays[kCsrRowPtrSlot].is_values() && !data_.arrays[kCsrColIdxSlot].is_values(),
                   data_.format + " keeps the CSR pattern in value slots");
  } else {
    device_pattern_[0] = std::move(dp.row_ptr().device);
    device_pattern_[1] = std::move(dp.col_idx(nnz_).device);
    for (const DeviceBuffer& d : device_pattern_) device_bytes_ += int64_t(d.bytes());
  }
  trace.step("pattern");
  backend_->synchronize(nullptr);
  trace.step("synchronize");
  converted_on_device_ = true;
  // The build modules compiled or loaded during conversion count as compile and load.
  timings_.convert = since(t0) - (dp.compile_seconds() + dp.load_seconds() - modules_s);
  timings_.compile += dp.compile_seconds();
  timings_.load += dp.load_seconds();
}

void Plan::plan_uploaded(const CsrRef& user, int base, const Format* forced) {
  const auto t0 = Clock::now();
  validate_sizes(user, base);
  const size_t is = size_of(index_), vs = size_of(value_);
  const size_t bytes[3] = {is * size_t(user.rows + 1), is * size_t(user.nnz), vs * size_t(user.nnz)};
  const void* host[3] = {user.row_ptr, user.col_idx, user.val};
  DeviceBuffer input[3];  // freed once the plan's own arrays exist
  for (int i = 0; i < 3; ++i) {
    if (!bytes[i]) continue;
    if (!host[i]) fail(SPMV_STATUS_INVALID_VALUE, "null CSR array with nonzero size");
    input[i] = DeviceBuffer(*backend_, bytes[i]);
    backend_->upload(input[i].get(), host[i], bytes[i]);
  }
  timings_.input_upload = since(t0);
  CsrRef uploaded = user;
  uploaded.row_ptr = input[0].get(), uploaded.col_idx = input[1].get(), uploaded.val = input[2].get();
  plan_on_device(uploaded, base, forced);
}

void Plan::fit_threads(const CsrRef& a) {
  // Tiny matrices: waking threads costs more than the SpMV.
  if (target_.backend == BackendKind::cpu)
    target_.threads = int(std::max<int64_t>(1, std::min<int64_t>(target_.threads, (a.nnz + a.rows) / 16384)));
  // CPU formats cut the work into `threads` parts; cutting kPartsPerThread times finer lets the
  // pool balance dynamically when one core runs slower (shared or virtual machines).
  worker_threads_ = target_.threads;
  if (target_.backend == BackendKind::cpu && target_.threads > 1) target_.threads *= kPartsPerThread;
}

template <class Convert>
void Plan::convert_with_fallback(const Format* forced, Convert&& convert) {
  // Estimates may sample; if the chosen candidate refuses on conversion (UNSUPPORTED), fall
  // back to the next applicable one rather than failing the plan.
  for (size_t i = 0;; ++i) {
    try {
      data_ = convert(*choice_.format, choice_.params);
      // The converter has the last word on kernel constants it derives from the whole matrix
      // (sym_diag's DIAGS): the plan's kernel is the one of the arrays built. A lookup started
      // with the planner's guess finds another spec and is redone (load_kernels).
      choice_.params = data_.params;
      break;
    } catch (const Error& e) {
      if (e.status() != SPMV_STATUS_UNSUPPORTED) throw;
      size_t next = i + 1;
      while (next < choice_.considered.size() && (choice_.considered[next].format == choice_.format &&
                                                  choice_.considered[next].params == choice_.params))
        ++next;
      // A forced format may still fall back to its own other parameters (csr_adaptive's plain
      // columns when a row block spans more than 16 bits), never to another format.
      if (next >= choice_.considered.size() || !std::isfinite(choice_.considered[next].score) ||
          (forced && choice_.considered[next].format != forced))
        throw;
      log_info(std::string("plan: ") + e.what() + "; trying the next candidate");
      choice_.why = std::string(e.what()) + "; fell back to the next candidate. " + choice_.why;
      choice_.format = choice_.considered[next].format;
      choice_.params = choice_.considered[next].params;
      choice_.estimate = choice_.considered[next].estimate;
      i = next - 1;
    }
  }
}

// The device arrays free themselves (DeviceBuffer), also when the constructor throws (its work is
// all on the default stream). Kernels on the caller's streams may still read them: wait for
// those first, as cuMemFree would (freed blocks are reused at once, runtime/block_cache.hpp).
Plan::~Plan() {
  if (upgrade_) release_upgrade(*upgrade_);  // no compile left running for a plan that is gone
  if (!backend_ || backend_->is_host() || device_bytes_ == 0) return;
  try {
    backend_->synchronize_device();
  } catch (const std::exception& e) {
    log_warn(std::string("plan destroy: ") + e.what());
  }
}

const void* Plan::device_pattern(int i) const {
  // A CSR-layout format's row_ptr and col_idx are index slots, which update_values never
  // replaces: they stay valid for the plan's whole life.
  return choice_.format->keeps_csr_pattern(choice_.params) ? data_.arrays[size_t(i)].device.get()
                                                           : device_pattern_[i].get();
}

void Plan::upload_arrays() {
  args_ = SpmvArgs{};
  SPMVJIT_ASSERT(data_.arrays.size() <= size_t(kMaxArrays), "too many format arrays");
  if (backend_->is_host()) {
    for (size_t i = 0; i < data_.arrays.size(); ++i) args_.a[i] = data_.arrays[i].buf.data();
    if (data_.scratch_bytes) {
      host_scratch_ = AlignedBuffer(size_t(data_.scratch_bytes));
      args_.scratch = host_scratch_.data();
    }
  } else {
    device_arrays_.reserve(data_.arrays.size());
    for (size_t i = 0; i < data_.arrays.size(); ++i) {
      const HostArray& h = data_.arrays[i];
      if (h.device) {  // built on the device: nothing to upload
        device_arrays_.emplace_back();
        args_.a[i] = h.device.get();
        device_bytes_ += h.count * int64_t(h.elem);
        continue;
      }
      // CPU thread-pool ranges: GPU kernels never read them.
      const bool upload = h.buf.bytes() && !h.host_only();
      device_arrays_.emplace_back(*backend_, upload ? h.buf.bytes() : 0);
      void* d = device_arrays_.back().get();
      if (d) backend_->upload(d, h.buf.data(), h.buf.bytes());
      if (d) device_bytes_ += int64_t(h.buf.bytes());
      args_.a[i] = d;
    }
    device_scratch_ = DeviceBuffer(*backend_, size_t(data_.scratch_bytes));
    args_.scratch = device_scratch_.get();
    device_bytes_ += data_.scratch_bytes;
  }
  set_values_table();
  for (int i = 0; i < kMaxArrays; ++i) args_.n[i] = data_.ints[i];
  args_.rows = rows_;
  args_.cols = cols_;
  args_.vectors = vectors_;
  args_.layout = row_major_;
  args_.ldx = row_major_ ? vectors_ : cols_;
  args_.ldy = row_major_ ? vectors_ : rows_;
}

void Plan::execute(const void* alpha, const void* x, const void* beta, void* y, void* stream) {
  if (vectors_ > 1)
    fail(SPMV_STATUS_INVALID_VALUE, "the plan is for " + std::to_string(vectors_) +
                                        " vectors: call spmm_execute (spmv_execute multiplies one)");
  run(alpha, x, args_.ldx, beta, y, args_.ldy, stream);
}

void Plan::execute_many(const void* alpha, const void* x, int64_t ldx, const void* beta, void* y, int64_t ldy,
                        void* stream) {
  // Column-major: a column of X is cols long, of Y rows long; row-major: a row is k long.
  const int64_t min_x = row_major_ ? vectors_ : cols_, min_y = row_major_ ? vectors_ : rows_;
  if (ldx < std::max<int64_t>(min_x, 1) || ldy < std::max<int64_t>(min_y, 1))
    fail(SPMV_STATUS_INVALID_VALUE, "spmm_execute: ldx " + std::to_string(ldx) + " and ldy " +
                                        std::to_string(ldy) + " must be at least " +
                                        std::to_string(std::max<int64_t>(min_x, 1)) + " and " +
                                        std::to_string(std::max<int64_t>(min_y, 1)) + " (" +
                                        (row_major_ ? "row-major X and Y, " : "column-major X and Y, ") +
                                        std::to_string(vectors_) + " vectors)");
  // One vector row-major is a strided vector; the single-vector formats read x and y contiguous.
  if (row_major_ && !choice_.format->multi_vector() && (ldx != 1 || ldy != 1))
    fail(SPMV_STATUS_INVALID_VALUE,
         "spmm_execute: a plan for one row-major vector reads X and Y contiguous "
         "(ldx = ldy = 1); got ldx " +
             std::to_string(ldx) + ", ldy " + std::to_string(ldy));
  run(alpha, x, ldx, beta, y, ldy, stream);
}

void Plan::run(const void* alpha, const void* x, int64_t ldx, const void* beta, void* y, int64_t ldy,
               void* stream) {
  if (!alpha || !beta) fail(SPMV_STATUS_INVALID_VALUE, "alpha and beta must not be null");
  if ((!x && cols_ > 0) || (!y && rows_ > 0)) fail(SPMV_STATUS_INVALID_VALUE, "x or y is null");
  // GPU kernels load a complex value as one 8- or 16-byte vector (cuSPARSE's alignment too).
  if (is_complex(value_) && !backend_->is_host() &&
      ((reinterpret_cast<uintptr_t>(x) | reinterpret_cast<uintptr_t>(y)) % size_of(value_)) != 0)
    fail(SPMV_STATUS_INVALID_VALUE, std::string("x and y of ") + to_string(value_) +
                                        " values must be aligned to " + std::to_string(size_of(value_)) +
                                        " bytes on a GPU");
  const Scalar al = read_scalar(alpha, value_), be = read_scalar(beta, value_);
  const int e = (be.zero() ? kEpilogueBetaZero : 0) | (al.one() ? kEpilogueAlphaOne : 0);
  SpmvArgs args = args_;
  args.x = x;
  args.y = y;
  args.alpha = al.re;
  args.alpha_im = al.im;
  args.beta = be.re;
  args.beta_im = be.im;
  args.ldx = ldx;
  args.ldy = ldy;
  // The specialized entries once their background compile is done (published with release order
  // and never changed after: a load per call, no lock, no allocation).
  const std::vector<void*>* table = entries_;
  if (upgrade_ && upgrade_->ready.load(std::memory_order_acquire) && !upgrade_->failed)
    table = upgrade_->entries;
  // Calls on one plan from several threads: a plan's scratch (carries) is its own, so calls on a
  // plan with scratch take turns (and on a GPU, their streams too). The CPU pool is the process's
  // and takes one call at a time by itself (a call that finds it busy runs alone).
  std::unique_lock<std::mutex> turn(execute_mutex_, std::defer_lock);
  const bool exclusive = data_.scratch_bytes > 0;
  if (exclusive) {
    turn.lock();
    executor_->begin_exclusive(stream);
  }
  if (al.zero()) {
    scale_y(be, y, args, stream);  // BLAS: alpha == 0 reads neither A nor x
  } else {
    for (size_t i = 0; i < data_.steps.size(); ++i) executor_->run(table[e][i], data_.steps[i], args, stream);
  }
  if (exclusive) executor_->end_exclusive(stream);
}

void Plan::scale_y(const Scalar& beta, void* y, const SpmvArgs& args, void* stream) {
  if (backend_->kind() != BackendKind::cpu) {  // every GPU module exports spmvjit_scale_y (the GPU prelude)
    executor_->run(scale_entry_, scale_step_, args, stream);
    return;
  }
  dispatch_types_complex(index_, value_, [&]<class I, class V>() {
    V* v = static_cast<V*>(y);
    const V b = scalar_as<V>(beta);
    for (int64_t j = 0; j < vectors_; ++j)
      for (int64_t i = 0; i < rows_; ++i) {
        V& e = v[row_major_ ? i * args.ldy + j : j * args.ldy + i];
        e = beta.zero() ? V(0) : b * e;
      }
  });
}

}  // namespace spmvjit
