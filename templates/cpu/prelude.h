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

typedef SPMVJIT_INDEX_T I;
typedef SPMVJIT_VALUE_T V;
typedef long long i64;

#include "../contract/spmv_args.h"

// E bit 0: beta == 0 (y is not read); bit 1: alpha == 1.
template <int E>
static inline V spmvjit_epilogue(V acc, const V* y, i64 r, V alpha, V beta) {
  const V ax = (E & 2) ? acc : alpha * acc;
  return (E & 1) ? ax : ax + beta * y[r];
}

#define SPMVJIT_RESTRICT __restrict__

// Exports spmvjit_part_<e>(args, part) for the four epilogues from `template <int E> part(...)`.
#define SPMVJIT_EXPORT(fn, entry)                                                          \
  extern "C" void entry##_0(const SpmvArgs* a, i64 p) { fn<0>(*a, p); }                    \
  extern "C" void entry##_1(const SpmvArgs* a, i64 p) { fn<1>(*a, p); }                    \
  extern "C" void entry##_2(const SpmvArgs* a, i64 p) { fn<2>(*a, p); }                    \
  extern "C" void entry##_3(const SpmvArgs* a, i64 p) { fn<3>(*a, p); }

#endif  // SPMVJIT_PRELUDE_INCLUDED
