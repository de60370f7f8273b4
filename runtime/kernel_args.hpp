// SpmvArgs: the one argument block every kernel of every backend receives.
#pragma once

#include <cstdint>

namespace spmvjit {

// Must match the struct in templates/cpu/prelude.h and templates/gpu/prelude_*.h byte for byte.
struct SpmvArgs {
  const void* a[8];
  long long n[8];
  const void* x;
  void* y;
  double alpha;
  double beta;
  long long rows;
  long long cols;
  void* scratch;
};
static_assert(sizeof(SpmvArgs) == 8 * 8 + 8 * 8 + 8 * 7, "SpmvArgs layout is ABI");

}  // namespace spmvjit
