/* spmvjit C API: plan once (statistics, format choice, JIT compile), execute many times. */
#ifndef SPMVJIT_SPMVJIT_H
#define SPMVJIT_SPMVJIT_H

#include <spmvjit/version.h> /* SPMVJIT_VERSION_MAJOR, _MINOR, _PATCH, _STRING */
#include <stddef.h>
#include <stdint.h>

/* SPMVJIT_API marks what the shared library exports: the functions below and nothing else (it
 * is built with hidden visibility and a version script; tests/check_exports.sh checks). */
#if defined(__GNUC__) || defined(__clang__)
#define SPMVJIT_API __attribute__((visibility("default")))
#else
#define SPMVJIT_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* Every call returns a status; on failure spmv_last_error() (per thread) says what and where. */
typedef enum spmv_status_t {
  SPMV_STATUS_SUCCESS = 0,
  SPMV_STATUS_INVALID_VALUE = 1,     /* bad argument: null pointer, unknown enum, bad option */
  SPMV_STATUS_INVALID_MATRIX = 2,    /* CSR arrays inconsistent (row_ptr, columns, nnz) */
  SPMV_STATUS_SIZE_OVERFLOW = 3,     /* sizes do not fit the chosen index type */
  SPMV_STATUS_UNSUPPORTED = 4,       /* valid request this build or format cannot do */
  SPMV_STATUS_NO_DEVICE = 5,         /* backend requested but no such device/driver */
  SPMV_STATUS_OUT_OF_MEMORY = 6,     /* host or device allocation failed */
  SPMV_STATUS_COMPILE_FAILED = 7,    /* JIT compiler rejected generated source (log in message) */
  SPMV_STATUS_IO_ERROR = 8,          /* file could not be read or written */
  SPMV_STATUS_PARSE_ERROR = 9,       /* malformed input file (line number in message) */
  SPMV_STATUS_EXECUTION_FAILED = 10, /* a launch or device operation failed */
  SPMV_STATUS_INTERNAL_ERROR = 11    /* a bug in spmvjit */
} spmv_status_t;

typedef enum spmv_index_type_t { SPMV_INDEX_INT32 = 0, SPMV_INDEX_INT64 = 1 } spmv_index_type_t;
/* Complex values are pairs (re, im) as C99's float _Complex / double _Complex, C++'s
 * std::complex and cuSPARSE's CUDA_C_32F / CUDA_C_64F lay them out: 8 and 16 bytes. Device arrays
 * of complex values (x, y) must be aligned to that size, as cudaMalloc'ed arrays are (GPU kernels
 * load a value as one vector). Complex plans take the formats that support them (describe lists
 * the others as not applicable), one vector (spmv_execute) or k vectors in either layout
 * (spmm_execute: csr_mm, on the CPU and GPUs), op(A) = A, A^T or A^H, and, for now, no SYMMETRIC
 * (Hermitian) matrices. */
typedef enum spmv_value_type_t {
  SPMV_VALUE_FLOAT = 0,
  SPMV_VALUE_DOUBLE = 1,
  SPMV_VALUE_COMPLEX_FLOAT = 2,
  SPMV_VALUE_COMPLEX_DOUBLE = 3
} spmv_value_type_t;
typedef enum spmv_memory_t { SPMV_MEMORY_HOST = 0, SPMV_MEMORY_DEVICE = 1 } spmv_memory_t;

typedef enum spmv_backend_t {
  SPMV_BACKEND_AUTO = 0, /* CUDA if a device is present, else CPU */
  SPMV_BACKEND_CPU = 1,
  SPMV_BACKEND_CUDA = 2,
  SPMV_BACKEND_HIP = 3
} spmv_backend_t;

typedef enum spmv_log_level_t {
  SPMV_LOG_TRACE = 0,
  SPMV_LOG_DEBUG = 1,
  SPMV_LOG_INFO = 2,
  SPMV_LOG_WARN = 3,
  SPMV_LOG_ERROR = 4,
  SPMV_LOG_OFF = 5,
  SPMV_LOG_DEFAULT = 6 /* in options: the process-wide level (spmv_set_logging); there: warn */
} spmv_log_level_t;

/* A CSR matrix owned by the caller. The plan copies what it needs; the caller may free the
 * arrays after spmv_plan returns. Explicit zeros are kept. Column indices need not be sorted.
 * The arrays must hold the entries stated below: their contents are validated (monotone row_ptr,
 * columns in range), their lengths cannot be. */
typedef struct spmv_csr_t {
  int64_t rows;
  int64_t cols;
  int64_t nnz;
  const void* row_ptr; /* rows + 1 entries of index_type */
  const void* col_idx; /* nnz entries of index_type */
  const void* values;  /* nnz entries of value_type */
  spmv_index_type_t index_type;
  spmv_value_type_t value_type;
  int index_base;       /* 0 or 1 */
  spmv_memory_t memory; /* where the three arrays live */
} spmv_csr_t;

/* Logging. Messages go to a callback (level, text, user) or, without one, to stderr. The
 * process-wide setting (spmv_set_logging; default: warn, stderr) takes messages outside any plan
 * (spmv_warmup, a process's first use of a backend) and is the default of every plan. A plan's
 * options.log_callback and options.log_level take every message logged while working for that
 * plan: in spmv_plan, spmv_execute, spmv_plan_update_values, spmv_plan_describe and
 * spmv_plan_destroy on it, and on the threads working for it meanwhile or later (the kernel
 * compile that spmv_plan may leave running in the background). A plan that sets neither changes
 * nothing: its messages go where the process-wide setting says. $SPMVJIT_LOG_LEVEL (trace,
 * debug, info, warn, error, off or 0-5), when set, overrides every level. Callbacks are called
 * one at a time, possibly on a library thread, and must not call spmvjit. */
typedef void (*spmv_log_callback_t)(int level, const char* message, void* user);

/* How spmv_plan picks the format (FFTW's convention). ESTIMATE ranks candidates by a byte-based
 * cost model (fast). MEASURE builds the best few candidates, times each on this matrix and keeps
 * the fastest; the choice is remembered as "wisdom" in the cache directory, so planning the same
 * matrix again (same pattern, types and device) skips the timing. */
typedef enum spmv_planning_t { SPMV_PLANNING_ESTIMATE = 0, SPMV_PLANNING_MEASURE = 1 } spmv_planning_t;

/* Layout of the dense X and Y of spmm_execute (cuSPARSE's CUSPARSE_ORDER_COL / _ROW): element
 * (i, j) at j * ld + i (column-major) or i * ld + j (row-major). */
typedef enum spmv_layout_t { SPMV_LAYOUT_COL_MAJOR = 0, SPMV_LAYOUT_ROW_MAJOR = 1 } spmv_layout_t;

/* op(A) of a plan (cuSPARSE's cusparseOperation_t): A, its transpose, its conjugate transpose
 * (the transpose for real values). A plan computes one operation, fixed when it is made, because
 * the JIT bakes the layout into the kernels: for op(A) = A^T the plan builds A^T's layout at plan
 * time (on the GPU for GPU plans, in parallel on the host for CPU plans and complex values; for
 * A^H with its values conjugated, and so are spmv_plan_update_values' values), so every format, the
 * planner's choice and deterministic sums apply to A^T as to any matrix, at one conversion pass
 * of extra planning cost and an index per nonzero kept for spmv_plan_update_values (describe's
 * "transpose" section reports both). Users who need A x and A^T x make two plans. */
typedef enum spmv_operation_t {
  SPMV_OPERATION_NON_TRANSPOSE = 0,
  SPMV_OPERATION_TRANSPOSE = 1,
  SPMV_OPERATION_CONJUGATE_TRANSPOSE = 2
} spmv_operation_t;

/* What the matrix is (MKL's sparse_matrix_type_t, cuSPARSE's fill-mode attribute): GENERAL, or
 * SYMMETRIC, A = A^T given by one triangle, the one fill_mode names, diagonal included; entries of
 * the other triangle are not read (a full symmetric CSR may be passed as it is). A symmetric
 * matrix lets the planner choose a format that stores and reads one triangle (sym_diag: nearly
 * half the bytes of a banded or stencil matrix); any other format gets the full matrix, built at
 * plan time (describe's "symmetric" section says which, and what it cost). op(A) = A^T is A.
 * HERMITIAN, A = A^H given by one triangle likewise: the other triangle is the conjugate of the
 * one given, and the imaginary parts of the diagonal are not read (taken as zero, as in BLAS's
 * zhemv). For real values HERMITIAN is SYMMETRIC. op(A) of a complex symmetric or Hermitian
 * matrix is A or its conjugate (A^H of a symmetric one, A^T of a Hermitian one): no transpose is
 * built, only the values conjugated. */
typedef enum spmv_matrix_type_t {
  SPMV_MATRIX_GENERAL = 0,
  SPMV_MATRIX_SYMMETRIC = 1,
  SPMV_MATRIX_HERMITIAN = 2
} spmv_matrix_type_t;
typedef enum spmv_fill_mode_t {
  SPMV_FILL_LOWER = 0, /* entries with col <= row (Matrix Market's symmetric files) */
  SPMV_FILL_UPPER = 1  /* entries with col >= row */
} spmv_fill_mode_t;

/* Options carry their size, so that a library with more fields still reads an older caller's
 * struct: spmv_options_init sets struct_size to sizeof(spmv_options_t) as the caller was
 * compiled, and the library reads only the fields within struct_size (the others take their
 * defaults). Always start from spmv_options_init (or the C++ spmvjit::Options). */
typedef struct spmv_options_t {
  size_t struct_size; /* set by spmv_options_init; 0 = not initialized: INVALID_VALUE */
  spmv_backend_t backend;
  int device;                       /* GPU ordinal */
  int threads;                      /* CPU: at most this many threads of the shared pool; 0 = all
                                       of them (more than the pool has = all; describe says so) */
  const char* cache_dir;            /* NULL = $SPMVJIT_CACHE_DIR, $XDG_CACHE_HOME/spmvjit, ~/.cache/spmvjit;
                                       "" = memory only */
  const char* format;               /* NULL or "auto" = planner decides; else a format name, e.g. "sell" */
  spmv_log_level_t log_level;       /* this plan's messages; DEFAULT = the process-wide level */
  spmv_log_callback_t log_callback; /* this plan's messages; NULL = the process-wide callback */
  void* log_user;                   /* passed to log_callback */
  spmv_planning_t planning;         /* ESTIMATE (default) or MEASURE; ignored when format is forced */
  int deterministic;                /* nonzero: bitwise-identical y on every run of this plan with the
                                       same inputs on the same device (no atomics in the sums: formats
                                       that need them are not chosen; a forced one is refused; the
                                       plan waits for its specialized kernel instead of running a
                                       quicker first tier meanwhile) */
  int vectors;                      /* k: the plan multiplies k vectors at once with spmm_execute (0 or 1:
                                       one vector, spmv_execute). k is baked into the kernel up to 32;
                                       beyond, the kernel loops over blocks of vectors. Formats and their
                                       parameters are chosen for k (the matrix is read once for all k). */
  spmv_layout_t layout;             /* of X and Y in spmm_execute (default column-major) */
  spmv_operation_t operation;       /* y = alpha*op(A)*x + beta*y (default A): with a transpose, x has
                                       A's rows entries and y A's cols (X and Y of spmm_execute alike) */
  spmv_matrix_type_t matrix_type;   /* GENERAL (default), SYMMETRIC or HERMITIAN (square only) */
  spmv_fill_mode_t fill_mode; /* the triangle a SYMMETRIC or HERMITIAN matrix is read from (default LOWER);
                                 spmv_plan_update_values takes values in the same CSR order */
} spmv_options_t;

typedef struct spmv_plan_s* spmv_plan_t;

/* Fills defaults: backend auto, device 0, all threads, default cache, format auto, the
 * process-wide logging; and struct_size. A macro, so that struct_size is the size of the struct
 * this caller was compiled with; spmv_options_init_sized writes only the first struct_size bytes
 * (zeros past the fields it knows). Bindings that cannot expand macros call it with their size. */
SPMVJIT_API void spmv_options_init_sized(spmv_options_t* options, size_t struct_size);
#define spmv_options_init(options) spmv_options_init_sized((options), sizeof(spmv_options_t))

/* Validates A, computes statistics, picks a format, converts, compiles or loads the kernels.
 * On failure *plan is NULL and nothing else changed. options may be NULL (defaults); else it must
 * have been set up by spmv_options_init (a struct_size below its first option, 0 included, is
 * INVALID_VALUE). */
SPMVJIT_API spmv_status_t spmv_plan(spmv_plan_t* plan, const spmv_csr_t* A, const spmv_options_t* options);

/* y = alpha*A*x + beta*y. alpha and beta point to scalars of the matrix's value type (host):
 * complex ones for a complex plan (beta == 0 and alpha == 0 mean both parts zero).
 * x (cols values) and y (rows values) live where the plan's backend computes (host for CPU,
 * device for GPU); the library cannot check their lengths. beta == 0 means y is not read;
 * alpha == 0 means y = beta*y with A and x not read (BLAS), so an inf or nan in x stays out.
 * stream is a cudaStream_t/hipStream_t for GPU plans, ignored on the CPU. Allocates nothing.
 * Safe to call concurrently, on distinct plans or on one: calls on one plan that would share
 * its scratch (carries) take turns, and on a GPU each such call's stream waits for the previous
 * call's work, whatever stream that was queued on.
 * CPU threads: every CPU plan of the process shares one pool, started by the first CPU plan and
 * sized by $SPMVJIT_NUM_THREADS, else the first number of $OMP_NUM_THREADS, else the CPUs in
 * the process's affinity mask (taskset, cpusets, MPI rank binding); invalid values are ignored
 * with a warning on stderr. The pool runs one execute at a time; an execute that finds it busy
 * runs on its caller's thread alone, so concurrent executes never wait for each other's SpMV
 * and never start more threads than the pool and the callers. In a child forked after the pool
 * started, executes run on the caller's thread. */
SPMVJIT_API spmv_status_t spmv_execute(spmv_plan_t plan, const void* alpha, const void* x, const void* beta,
                                       void* y, void* stream);

/* spmv_execute, checked: value_type must be the plan's (the matrix's), else INVALID_VALUE and
 * nothing is read or written. alpha, beta, x and y are of that type. The C++ layer's
 * SpmvPlan::execute<V> calls it; C callers whose scalar type could drift from the matrix's
 * should too (the check costs a comparison). */
SPMVJIT_API spmv_status_t spmv_execute_typed(spmv_plan_t plan, spmv_value_type_t value_type,
                                             const void* alpha, const void* x, const void* beta, void* y,
                                             void* stream);

/* Y = alpha*A*X + beta*Y for the k vectors the plan was made for (spmv_options_t::vectors): X is
 * cols x k and Y rows x k, dense, in the plan's layout, with leading dimensions ldx and ldy
 * (column-major: ldx >= cols, ldy >= rows; row-major: ldx, ldy >= k), where the plan computes.
 * alpha and beta as in spmv_execute, of the matrix's value type. A plan for k > 1 vectors
 * refuses spmv_execute; a plan for one vector takes spmm_execute with k = 1 (X and Y one
 * column). Why a plan option and not an argument of this call: k and the layout are baked into
 * the kernels, so they must be known when the plan compiles them; the leading dimensions are
 * sizes, never baked, and may change from call to call. Allocates nothing; the concurrency
 * rules of spmv_execute apply. */
SPMVJIT_API spmv_status_t spmm_execute(spmv_plan_t plan, const void* alpha, const void* X, int64_t ldx,
                                       const void* beta, void* Y, int64_t ldy, void* stream);

/* What a plan computes and where. Designed to grow: the caller sets struct_size to
 * sizeof(spmv_plan_info_t) (SPMV_PLAN_INFO_INIT does) and spmv_plan_info fills only the fields
 * within it, so a caller compiled against an older, smaller struct keeps working. */
typedef struct spmv_plan_info_t {
  size_t struct_size;
  int64_t rows;
  int64_t cols;
  int64_t nnz;
  spmv_index_type_t index_type;
  spmv_value_type_t value_type; /* the type of alpha, beta, x and y in spmv_execute */
  spmv_backend_t backend;       /* where it runs: CPU, CUDA or HIP (never AUTO) */
  int threads;                  /* CPU threads its executes use (1 on GPUs) */
  int vectors;                  /* k of spmm_execute (1: one vector) */
  spmv_layout_t layout;         /* of X and Y in spmm_execute */
  spmv_operation_t operation;   /* op(A); rows and cols above are A's, as given to spmv_plan */
  spmv_matrix_type_t matrix_type;
  spmv_fill_mode_t fill_mode;
} spmv_plan_info_t;
#define SPMV_PLAN_INFO_INIT                                                                         \
  {                                                                                                 \
    sizeof(spmv_plan_info_t), 0, 0, 0, SPMV_INDEX_INT32, SPMV_VALUE_FLOAT, SPMV_BACKEND_AUTO, 0, 1, \
        SPMV_LAYOUT_COL_MAJOR, SPMV_OPERATION_NON_TRANSPOSE, SPMV_MATRIX_GENERAL, SPMV_FILL_LOWER   \
  }

/* Fills *info (the fields within info->struct_size). INVALID_VALUE when plan or info is null or
 * struct_size is below its first field (0: not set). */
SPMVJIT_API spmv_status_t spmv_plan_info(spmv_plan_t plan, spmv_plan_info_t* info);

/* New values for the same sparsity pattern (same row_ptr/col_idx as planned); no re-plan. */
SPMVJIT_API spmv_status_t spmv_plan_update_values(spmv_plan_t plan, const void* values, spmv_memory_t memory);

/* JSON: format, parameters, statistics, kernel key, cache outcome, timings of each stage.
 * The returned text is owned by the plan and valid until the next call on it. */
SPMVJIT_API spmv_status_t spmv_plan_describe(spmv_plan_t plan, const char** json);

/* Frees the plan (NULL is a no-op; destroying a plan twice is undefined, as free() twice is).
 * If the plan's specialized kernel is still compiling in the background, waits for that compile
 * to end (a compile not yet begun is dropped). */
SPMVJIT_API spmv_status_t spmv_plan_destroy(spmv_plan_t plan);

/* Compiles into the cache every kernel a plan for these types may use on this backend and
 * target (e.g. "sm_90", "native"), without needing the device. *count receives the number.
 * SPMV_STATUS_IO_ERROR when cache_dir cannot be used: not this user's, writable by group or
 * others, or not writable (plans in such a directory keep kernels in memory only). */
SPMVJIT_API spmv_status_t spmv_warmup(spmv_backend_t backend, const char* target, const char* cache_dir,
                                      int* count);

/* The process-wide logging (see spmv_log_callback_t): level (DEFAULT = warn) and callback
 * (NULL = stderr) for messages outside any plan and of plans that set none of their own.
 * Replaces the previous setting; plans' own options are unaffected. */
SPMVJIT_API spmv_status_t spmv_set_logging(spmv_log_level_t level, spmv_log_callback_t callback, void* user);

/* Message of the last failed call on this thread ("" if none). */
SPMVJIT_API const char* spmv_last_error(void);
SPMVJIT_API const char* spmv_status_string(spmv_status_t status);
/* The library's version, "MAJOR.MINOR.PATCH" (the header's is SPMVJIT_VERSION_STRING: compare
 * them to catch a program running against another build than it was compiled with). */
SPMVJIT_API const char* spmv_version(void);

#ifdef __cplusplus
}
#endif

#endif /* SPMVJIT_SPMVJIT_H */
