// CPU kernel prelude: the argument block, types and epilogue shared by every CPU template.
// Self-contained (no system headers) so the in-process compile needs no include paths.
#ifndef SPMVJIT_PRELUDE_INCLUDED
#define SPMVJIT_PRELUDE_INCLUDED

#ifndef SPMVJIT_INDEX_T
#define SPMVJIT_INDEX_T int
#endif
#ifndef SPMVJIT_VALUE_T
#define SPMVJIT_VALUE_T double
#endif

#ifndef SPMVJIT_COMPLEX
#define SPMVJIT_COMPLEX 0
#endif
#define SPMVJIT_METHOD inline

typedef SPMVJIT_INDEX_T I;
typedef long long i64;
// Complex values (SPMVJIT_COMPLEX): V is a pair of SPMVJIT_VALUE_T.
#if SPMVJIT_COMPLEX
#include "../contract/complex.h"
typedef spmvjit_complex<SPMVJIT_VALUE_T> V;
#else
typedef SPMVJIT_VALUE_T V;
#endif

#ifndef SPMVJIT_RUNTIME_EPILOGUE
#define SPMVJIT_RUNTIME_EPILOGUE 0
#endif

#include "../contract/spmv_args.h"

// alpha and beta as V: templates read them through these, never as (V)a.alpha, which would drop
// a complex value's imaginary part.
static inline V spmvjit_alpha(const SpmvArgs& a) {
#if SPMVJIT_COMPLEX
  return V((SPMVJIT_VALUE_T)a.alpha, (SPMVJIT_VALUE_T)a.alpha_im);
#else
  return (V)a.alpha;
#endif
}
static inline V spmvjit_beta(const SpmvArgs& a) {
#if SPMVJIT_COMPLEX
  return V((SPMVJIT_VALUE_T)a.beta, (SPMVJIT_VALUE_T)a.beta_im);
#else
  return (V)a.beta;
#endif
}

// E bit 0: beta == 0 (y is not read); bit 1: alpha == 1; E == SPMVJIT_EPILOGUE_RUNTIME: both
// decided at run time. Kernels ask through these, never test the bits themselves.
template <int E>
static inline bool spmvjit_beta_zero(V beta) {
  return E == SPMVJIT_EPILOGUE_RUNTIME ? beta == V(0) : (E & 1) != 0;
}
template <int E>
static inline bool spmvjit_alpha_one(V alpha) {
  return E == SPMVJIT_EPILOGUE_RUNTIME ? alpha == V(1) : (E & 2) != 0;
}
template <int E>
static inline V spmvjit_epilogue(V acc, const V* y, i64 r, V alpha, V beta) {
  const V ax = spmvjit_alpha_one<E>(alpha) ? acc : alpha * acc;
  return spmvjit_beta_zero<E>(beta) ? ax : ax + beta * y[r];
}

// y[r0 + i] = epilogue(acc[i]) for i < n <= N, the rows of one block. A full block runs a loop of
// constant trip count, which becomes vector stores; a loop of n iterations with alpha == 1 and
// beta == 0 becomes a call of libc's memcpy per block (sell_diag's 8-row slices spent 9% of a
// plan-and-run profile of poisson2d:1000 in it).
template <int E, i64 N>
static inline void spmvjit_store_block(const V* acc, V* y, i64 r0, i64 n, V alpha, V beta) {
  if (n == N) {
    for (i64 i = 0; i < N; ++i) y[r0 + i] = spmvjit_epilogue<E>(acc[i], y, r0 + i, alpha, beta);
  } else {
    for (i64 i = 0; i < n; ++i) y[r0 + i] = spmvjit_epilogue<E>(acc[i], y, r0 + i, alpha, beta);
  }
}

#define SPMVJIT_RESTRICT __restrict__

#include "values.h"

// Exports spmvjit_part_<e>(args, part) for the four epilogues from `template <int E> part(...)`,
// or the one run-time variant spmvjit_part_r (SPMVJIT_RUNTIME_EPILOGUE).
#if SPMVJIT_RUNTIME_EPILOGUE
#define SPMVJIT_EXPORT(fn, entry) \
  extern "C" void entry##_r(const SpmvArgs* a, i64 p) { fn<SPMVJIT_EPILOGUE_RUNTIME>(*a, p); }
#else
#define SPMVJIT_EXPORT(fn, entry)                                                          \
  extern "C" void entry##_0(const SpmvArgs* a, i64 p) { fn<0>(*a, p); }                    \
  extern "C" void entry##_1(const SpmvArgs* a, i64 p) { fn<1>(*a, p); }                    \
  extern "C" void entry##_2(const SpmvArgs* a, i64 p) { fn<2>(*a, p); }                    \
  extern "C" void entry##_3(const SpmvArgs* a, i64 p) { fn<3>(*a, p); }
#endif

#endif  // SPMVJIT_PRELUDE_INCLUDED
