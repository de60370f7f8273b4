// The C API: argument checks, exception-to-status translation, per-thread last error.
#include <algorithm>
#include <cstddef>
#include <cstring>
#include <iterator>
#include <new>
#include <string>

#include "core/log.hpp"
#include "engine/device_plan.hpp"
#include "engine/measure_planning.hpp"
#include "engine/plan.hpp"
#include "engine/planner.hpp"
#include "engine/warmup.hpp"
#include "runtime/cache/kernel_cache.hpp"
#include "spmvjit/spmvjit.h"

struct spmv_plan_s {
  std::unique_ptr<spmvjit::Plan> impl;
  spmvjit::LogSink log;  // the plan's logging options: every call on it logs through them
};

namespace spmvjit {
Plan& plan_impl(spmv_plan_t plan) {
  SPMVJIT_ASSERT(plan != nullptr, "null plan");
  return *plan->impl;
}
}  // namespace spmvjit

namespace {

thread_local std::string g_last_error;

template <class F>
spmv_status_t guarded(F&& f) {
  try {
    f();
    g_last_error.clear();
    return SPMV_STATUS_SUCCESS;
  } catch (const spmvjit::Error& e) {
    g_last_error = e.what();
    return e.status();
  } catch (const std::bad_alloc&) {
    g_last_error = "host memory exhausted";
    return SPMV_STATUS_OUT_OF_MEMORY;
  } catch (const std::exception& e) {
    g_last_error = std::string("internal error: ") + e.what();
    return SPMV_STATUS_INTERNAL_ERROR;
  }
}

void require(bool ok, const char* what) {
  if (!ok) spmvjit::fail(SPMV_STATUS_INVALID_VALUE, what);
}

// A C caller may store any int in an enum field, but loading an out-of-range value as the C++
// enum type is undefined behaviour (UBSan: -fsanitize=enum): read the bytes as an int and check
// the range before anything reads the field as an enum.
template <class E>
void require_enum(const E& field, int last, const char* what) {
  static_assert(sizeof(E) == sizeof(int));
  int v;
  std::memcpy(&v, &field, sizeof v);
  if (v < 0 || v > last)
    spmvjit::fail(SPMV_STATUS_INVALID_VALUE, std::string("unknown ") + what + " " + std::to_string(v));
}

// Where each field of spmv_options_t ends, in order: a caller's struct_size covers the fields
// that end within it (one cut in half is not read). A field added to the struct goes here too
// (the static_assert catches one added at the end and forgotten).
#define SPMVJIT_END(f) (offsetof(spmv_options_t, f) + sizeof(spmv_options_t::f))
constexpr size_t kOptionsFieldEnds[] = {
    SPMVJIT_END(struct_size), SPMVJIT_END(backend),   SPMVJIT_END(device),        SPMVJIT_END(threads),
    SPMVJIT_END(cache_dir),   SPMVJIT_END(format),    SPMVJIT_END(log_level),     SPMVJIT_END(log_callback),
    SPMVJIT_END(log_user),    SPMVJIT_END(planning),  SPMVJIT_END(deterministic), SPMVJIT_END(vectors),
    SPMVJIT_END(layout),      SPMVJIT_END(operation), SPMVJIT_END(matrix_type),   SPMVJIT_END(fill_mode)};
#undef SPMVJIT_END
static_assert(sizeof(spmv_options_t) - kOptionsFieldEnds[std::size(kOptionsFieldEnds) - 1] <
                  alignof(spmv_options_t),
              "a field of spmv_options_t is missing from kOptionsFieldEnds");
// Uninitialized memory seldom holds a value this small: a struct_size above it is refused.
constexpr size_t kOptionsSizeLimit = size_t(1) << 16;

// The bytes of the whole fields within `size`, of a struct whose fields end at `ends`.
template <size_t N>
size_t whole_fields(const size_t (&ends)[N], size_t size) {
  size_t n = 0;
  for (size_t end : ends)
    if (end <= size) n = end;
  return n;
}
size_t whole_fields(size_t size) { return whole_fields(kOptionsFieldEnds, size); }

// The same for spmv_plan_info_t.
#define SPMVJIT_END(f) (offsetof(spmv_plan_info_t, f) + sizeof(spmv_plan_info_t::f))
constexpr size_t kInfoFieldEnds[] = {
    SPMVJIT_END(struct_size), SPMVJIT_END(rows),       SPMVJIT_END(cols),      SPMVJIT_END(nnz),
    SPMVJIT_END(index_type),  SPMVJIT_END(value_type), SPMVJIT_END(backend),   SPMVJIT_END(threads),
    SPMVJIT_END(vectors),     SPMVJIT_END(layout),     SPMVJIT_END(operation), SPMVJIT_END(matrix_type),
    SPMVJIT_END(fill_mode)};
#undef SPMVJIT_END
static_assert(sizeof(spmv_plan_info_t) - kInfoFieldEnds[std::size(kInfoFieldEnds) - 1] <
                  alignof(spmv_plan_info_t),
              "a field of spmv_plan_info_t is missing from kInfoFieldEnds");

const char* value_type_name(spmv_value_type_t t) {
  switch (t) {
    case SPMV_VALUE_FLOAT: return "float";
    case SPMV_VALUE_DOUBLE: return "double";
    case SPMV_VALUE_COMPLEX_FLOAT: return "complex float";
    case SPMV_VALUE_COMPLEX_DOUBLE: return "complex double";
  }
  return "unknown";
}
spmv_value_type_t value_type_of(const spmvjit::Plan& p) {
  switch (p.value_type()) {
    case spmvjit::ValueType::f32: return SPMV_VALUE_FLOAT;
    case spmvjit::ValueType::f64: return SPMV_VALUE_DOUBLE;
    case spmvjit::ValueType::c32: return SPMV_VALUE_COMPLEX_FLOAT;
    case spmvjit::ValueType::c64: return SPMV_VALUE_COMPLEX_DOUBLE;
  }
  return SPMV_VALUE_DOUBLE;
}

// The caller's options over the defaults: only the fields within its struct_size, so a caller
// compiled against an older, smaller struct gets the defaults of the fields it does not know.
spmv_options_t read_options(const spmv_options_t* given) {
  spmv_options_t o;
  spmv_options_init_sized(&o, sizeof o);
  if (!given) return o;
  size_t size;
  std::memcpy(&size, given, sizeof size);
  if (size < kOptionsFieldEnds[1] || size > kOptionsSizeLimit)
    spmvjit::fail(SPMV_STATUS_INVALID_VALUE, "options not initialized with spmv_options_init (struct_size " +
                                                 std::to_string(size) + ")");
  std::memcpy(&o, given, whole_fields(std::min(size, sizeof o)));
  o.struct_size = sizeof o;
  return o;
}

}  // namespace

extern "C" {

void spmv_options_init_sized(spmv_options_t* o, size_t struct_size) {
  if (!o || struct_size < sizeof(size_t)) return;
  spmv_options_t d;
  std::memset(&d, 0, sizeof d);
  d.struct_size = struct_size;
  d.backend = SPMV_BACKEND_AUTO;
  d.log_level = SPMV_LOG_DEFAULT;
  d.vectors = 1;
  // Only the caller's bytes: a smaller (older) struct gets its own fields, a larger (newer) one
  // zeros past the fields this library knows.
  const size_t known = whole_fields(std::min(struct_size, sizeof d));
  std::memcpy(o, &d, known);
  if (struct_size > known) std::memset(reinterpret_cast<char*>(o) + known, 0, struct_size - known);
}

spmv_status_t spmv_set_logging(spmv_log_level_t level, spmv_log_callback_t callback, void* user) {
  return guarded([&] {
    require_enum(level, SPMV_LOG_DEFAULT, "log level");
    spmvjit::configure_logging(level, callback, user);
  });
}

spmv_status_t spmv_plan(spmv_plan_t* plan, const spmv_csr_t* A, const spmv_options_t* options) {
  if (plan) *plan = nullptr;
  return guarded([&] {
    require(plan != nullptr, "plan is null");
    require(A != nullptr, "matrix descriptor is null");
    const spmv_options_t o = read_options(options);
    auto p = std::make_unique<spmv_plan_s>();
    require_enum(A->index_type, SPMV_INDEX_INT64, "index type");
    require_enum(A->value_type, SPMV_VALUE_COMPLEX_DOUBLE, "value type");
    require_enum(A->memory, SPMV_MEMORY_DEVICE, "memory kind");
    require_enum(o.backend, SPMV_BACKEND_HIP, "backend");
    require_enum(o.log_level, SPMV_LOG_DEFAULT, "log level");
    require_enum(o.planning, SPMV_PLANNING_MEASURE, "planning mode");
    require_enum(o.layout, SPMV_LAYOUT_ROW_MAJOR, "layout");
    require_enum(o.operation, SPMV_OPERATION_CONJUGATE_TRANSPOSE, "operation");
    require_enum(o.matrix_type, SPMV_MATRIX_HERMITIAN, "matrix type");
    require_enum(o.fill_mode, SPMV_FILL_UPPER, "fill mode");
    p->log = spmvjit::LogSink{o.log_level, o.log_callback, o.log_user};
    spmvjit::LogScope scope(p->log);
    const bool forced = spmvjit::parse_format_option(o.format) != nullptr;
    // Measure mode times SpMV candidates; plans for several vectors are estimated (one format
    // computes them today: csr_mm).
    const bool measure = o.planning == SPMV_PLANNING_MEASURE && !forced && o.vectors <= 1;
    p->impl = measure ? spmvjit::plan_by_measurement(*A, o) : std::make_unique<spmvjit::Plan>(*A, o);
    *plan = p.release();
  });
}

spmv_status_t spmv_execute(spmv_plan_t plan, const void* alpha, const void* x, const void* beta, void* y,
                           void* stream) {
  return guarded([&] {
    require(plan != nullptr, "plan is null");
    spmvjit::LogScope scope(plan->log);
    plan->impl->execute(alpha, x, beta, y, stream);
  });
}

spmv_status_t spmv_execute_typed(spmv_plan_t plan, spmv_value_type_t value_type, const void* alpha,
                                 const void* x, const void* beta, void* y, void* stream) {
  return guarded([&] {
    require(plan != nullptr, "plan is null");
    require_enum(value_type, SPMV_VALUE_COMPLEX_DOUBLE, "value type");
    const spmv_value_type_t planned = value_type_of(*plan->impl);
    if (value_type != planned)
      spmvjit::fail(SPMV_STATUS_INVALID_VALUE, std::string("spmv_execute_typed: ") +
                                                   value_type_name(value_type) + " arguments for a plan of " +
                                                   value_type_name(planned) + " values");
    spmvjit::LogScope scope(plan->log);
    plan->impl->execute(alpha, x, beta, y, stream);
  });
}

spmv_status_t spmm_execute(spmv_plan_t plan, const void* alpha, const void* X, int64_t ldx, const void* beta,
                           void* Y, int64_t ldy, void* stream) {
  return guarded([&] {
    require(plan != nullptr, "plan is null");
    spmvjit::LogScope scope(plan->log);
    plan->impl->execute_many(alpha, X, ldx, beta, Y, ldy, stream);
  });
}

spmv_status_t spmv_plan_info(spmv_plan_t plan, spmv_plan_info_t* info) {
  return guarded([&] {
    require(plan != nullptr && info != nullptr, "plan or info is null");
    size_t size;
    std::memcpy(&size, info, sizeof size);
    if (size < kInfoFieldEnds[1])
      spmvjit::fail(SPMV_STATUS_INVALID_VALUE, "spmv_plan_info: info->struct_size is " +
                                                   std::to_string(size) +
                                                   ": set it to sizeof(spmv_plan_info_t)");
    const spmvjit::Plan& p = *plan->impl;
    spmv_plan_info_t i;
    std::memset(&i, 0, sizeof i);
    i.struct_size = size;
    i.rows = p.transposed() ? p.cols() : p.rows();  // A's, not op(A)'s
    i.cols = p.transposed() ? p.rows() : p.cols();
    i.nnz = p.input_nnz();
    i.index_type = p.index_type() == spmvjit::IndexType::i32 ? SPMV_INDEX_INT32 : SPMV_INDEX_INT64;
    i.value_type = value_type_of(p);
    i.backend = p.backend_kind() == spmvjit::BackendKind::cpu    ? SPMV_BACKEND_CPU
                : p.backend_kind() == spmvjit::BackendKind::cuda ? SPMV_BACKEND_CUDA
                                                                 : SPMV_BACKEND_HIP;
    i.threads = p.backend_kind() == spmvjit::BackendKind::cpu ? p.threads() : 1;
    i.vectors = int(p.vectors());
    i.layout = p.row_major() ? SPMV_LAYOUT_ROW_MAJOR : SPMV_LAYOUT_COL_MAJOR;
    i.operation = p.operation();
    i.matrix_type = p.matrix_type();
    i.fill_mode = p.fill_upper() ? SPMV_FILL_UPPER : SPMV_FILL_LOWER;
    std::memcpy(info, &i, whole_fields(kInfoFieldEnds, std::min(size, sizeof i)));
  });
}

spmv_status_t spmv_plan_update_values(spmv_plan_t plan, const void* values, spmv_memory_t memory) {
  return guarded([&] {
    require(plan != nullptr, "plan is null");
    require_enum(memory, SPMV_MEMORY_DEVICE, "memory kind");
    spmvjit::LogScope scope(plan->log);
    plan->impl->update_values(values, memory);
  });
}

spmv_status_t spmv_plan_describe(spmv_plan_t plan, const char** json) {
  return guarded([&] {
    require(plan != nullptr && json != nullptr, "plan or json is null");
    spmvjit::LogScope scope(plan->log);
    *json = plan->impl->describe().c_str();
  });
}

spmv_status_t spmv_plan_destroy(spmv_plan_t plan) {
  return guarded([&] {
    if (!plan) return;
    spmvjit::LogScope scope(plan->log);  // a copy: outlives the plan
    delete plan;
  });
}

const char* spmv_last_error(void) { return g_last_error.c_str(); }

const char* spmv_version(void) { return SPMVJIT_VERSION_STRING; }

const char* spmv_status_string(spmv_status_t s) {
  switch (s) {
    case SPMV_STATUS_SUCCESS: return "success";
    case SPMV_STATUS_INVALID_VALUE: return "invalid value";
    case SPMV_STATUS_INVALID_MATRIX: return "invalid matrix";
    case SPMV_STATUS_SIZE_OVERFLOW: return "size overflow";
    case SPMV_STATUS_UNSUPPORTED: return "unsupported";
    case SPMV_STATUS_NO_DEVICE: return "no device";
    case SPMV_STATUS_OUT_OF_MEMORY: return "out of memory";
    case SPMV_STATUS_COMPILE_FAILED: return "compile failed";
    case SPMV_STATUS_IO_ERROR: return "I/O error";
    case SPMV_STATUS_PARSE_ERROR: return "parse error";
    case SPMV_STATUS_EXECUTION_FAILED: return "execution failed";
    case SPMV_STATUS_INTERNAL_ERROR: return "internal error";
  }
  return "unknown status";
}

spmv_status_t spmv_warmup(spmv_backend_t backend, const char* target, const char* cache_dir, int* count) {
  using namespace spmvjit;
  return guarded([&] {
    if (count) *count = 0;
    require_enum(backend, SPMV_BACKEND_HIP, "backend");
    const BackendKind kind = backend == SPMV_BACKEND_CUDA  ? BackendKind::cuda
                             : backend == SPMV_BACKEND_HIP ? BackendKind::hip
                                                           : BackendKind::cpu;
    // GPUs: the compiler alone builds for a named target, no device needed; NULL/"native" = device 0.
    Backend& b = backend_compiler(kind, target);
    const int n = warmup_kernels(b, resolve_cache_dir(cache_dir));  // on every usable core
    if (count) *count = n;
  });
}

}  // extern "C"
