// GPU prelude that runs device build kernels on the CPU, one thread after another: tests check
// the device converters (templates/gpu/*_build.cu) against the host converters with no GPU. Build
// kernels are grid-stride loops with no cooperation inside a block (no shuffles, barriers or
// shared memory), so running the threads in sequence is one valid schedule; this prelude leaves
// those wrappers out, so a build kernel that uses one fails to compile here.
#ifndef SPMVJIT_PRELUDE_INCLUDED
#define SPMVJIT_PRELUDE_INCLUDED
// Kernels whose threads cooperate (DeviceConverter::cooperative) are left out of the module here.
#define SPMVJIT_EMULATED 1

#ifndef SPMVJIT_INDEX_T
#define SPMVJIT_INDEX_T int
#endif
#ifndef SPMVJIT_VALUE_T
#define SPMVJIT_VALUE_T double
#endif

#ifndef SPMVJIT_COMPLEX
#define SPMVJIT_COMPLEX 0
#endif

typedef SPMVJIT_INDEX_T I;
typedef long long i64;

#include "../contract/spmv_args.h"

#ifndef SPMVJIT_WARP
#define SPMVJIT_WARP 32
#endif
#define SPMVJIT_DEVICE static inline
#define SPMVJIT_METHOD inline
#define SPMVJIT_RESTRICT __restrict__
#if SPMVJIT_COMPLEX
#include "../contract/complex.h"
typedef spmvjit_complex<SPMVJIT_VALUE_T> V;
#else
typedef SPMVJIT_VALUE_T V;
#endif
#define __global__
#define __device__
#define __forceinline__ inline
#define __launch_bounds__(...)

struct spmvjit_dim3 {
  unsigned x, y, z;
};
// The emulated thread's coordinates, set by spmvjit_emu_thread before each call of a kernel.
static spmvjit_dim3 threadIdx, blockIdx, blockDim, gridDim;
extern "C" void spmvjit_emu_thread(unsigned block, unsigned thread, unsigned block_dim, unsigned grid_dim) {
  blockIdx = {block, 0, 0};
  threadIdx = {thread, 0, 0};
  blockDim = {block_dim, 1, 1};
  gridDim = {grid_dim, 1, 1};
}

template <class T>
SPMVJIT_DEVICE T spmvjit_ldg(const T* p) {
  return *p;
}
template <class T>
SPMVJIT_DEVICE T spmvjit_ld_stream(const T* p) {
  return *p;
}
SPMVJIT_DEVICE int spmvjit_lane() { return int(threadIdx.x) & (SPMVJIT_WARP - 1); }
SPMVJIT_DEVICE void spmvjit_atomic_add(V* p, V v) { *p += v; }
SPMVJIT_DEVICE void spmvjit_atomic_add_u64(unsigned long long* p, unsigned long long v) { *p += v; }
SPMVJIT_DEVICE void spmvjit_atomic_min_u64(unsigned long long* p, unsigned long long v) {
  *p = v < *p ? v : *p;
}
SPMVJIT_DEVICE void spmvjit_atomic_max_u64(unsigned long long* p, unsigned long long v) {
  *p = v > *p ? v : *p;
}
SPMVJIT_DEVICE void spmvjit_atomic_add_f64(double* p, double v) { *p += v; }
SPMVJIT_DEVICE int spmvjit_clz64(long long v) { return v ? __builtin_clzll((unsigned long long)v) : 64; }
SPMVJIT_DEVICE void spmvjit_grid_wait() {}
SPMVJIT_DEVICE void spmvjit_grid_launch_dependents() {}

#include "values.cuh"

#endif  // SPMVJIT_PRELUDE_INCLUDED
