// GPU kernel prelude for CUDA (NVRTC): argument block, types, warp intrinsics, epilogue.
// GPU templates use only what this prelude defines, so a HIP prelude can serve them too.
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

typedef SPMVJIT_INDEX_T I;
typedef long long i64;

#ifndef SPMVJIT_RUNTIME_EPILOGUE
#define SPMVJIT_RUNTIME_EPILOGUE 0
#endif

#include "../contract/spmv_args.h"

// Threads of a warp: codegen bakes the target's (KernelSpec::warp_size); 32 on every NVIDIA GPU.
#ifndef SPMVJIT_WARP
#define SPMVJIT_WARP 32
#endif
#if SPMVJIT_WARP != 32
#error "CUDA warps are 32 threads"
#endif
// One bit per lane (ballots and shuffle masks).
typedef unsigned spmvjit_lanes_t;
#define SPMVJIT_FULL_MASK 0xffffffffu
#define SPMVJIT_DEVICE static __device__ __forceinline__
#define SPMVJIT_METHOD __device__ __forceinline__
#define SPMVJIT_RESTRICT __restrict__

// Complex values (SPMVJIT_COMPLEX): V is a pair of SPMVJIT_VALUE_T, aligned as cuComplex.
#if SPMVJIT_COMPLEX
#define SPMVJIT_COMPLEX_ALIGNED 1
#include "../contract/complex.h"
typedef spmvjit_complex<SPMVJIT_VALUE_T> V;
#else
typedef SPMVJIT_VALUE_T V;
#endif

// Read-only, cached loads for data no kernel writes during the launch (x, matrix arrays).
// SPMVJIT_LDG_PLAIN (a measuring knob: SPMVJIT_CUDA_EXTRA_OPTIONS=-DSPMVJIT_LDG_PLAIN) makes them
// plain loads through restrict pointers, as the HIP prelude's.
#ifdef SPMVJIT_LDG_PLAIN
template <class T>
SPMVJIT_DEVICE T spmvjit_ldg(const T* p) { return *p; }
#else
template <class T>
SPMVJIT_DEVICE T spmvjit_ldg(const T* p) { return __ldg(p); }
#if SPMVJIT_COMPLEX  // one vector load of the pair
SPMVJIT_DEVICE spmvjit_complex<float> spmvjit_ldg(const spmvjit_complex<float>* p) {
  const float2 v = __ldg(reinterpret_cast<const float2*>(p));
  return spmvjit_complex<float>(v.x, v.y);
}
SPMVJIT_DEVICE spmvjit_complex<double> spmvjit_ldg(const spmvjit_complex<double>* p) {
  const double2 v = __ldg(reinterpret_cast<const double2*>(p));
  return spmvjit_complex<double>(v.x, v.y);
}
#endif
#endif
// Streaming loads for matrix arrays read exactly once (evict-first keeps x in cache).
template <class T>
SPMVJIT_DEVICE T spmvjit_ld_stream(const T* p) { return __ldcs(p); }
#if SPMVJIT_COMPLEX
SPMVJIT_DEVICE spmvjit_complex<float> spmvjit_ld_stream(const spmvjit_complex<float>* p) {
  const float2 v = __ldcs(reinterpret_cast<const float2*>(p));
  return spmvjit_complex<float>(v.x, v.y);
}
SPMVJIT_DEVICE spmvjit_complex<double> spmvjit_ld_stream(const spmvjit_complex<double>* p) {
  const double2 v = __ldcs(reinterpret_cast<const double2*>(p));
  return spmvjit_complex<double>(v.x, v.y);
}
#endif
template <class T>
SPMVJIT_DEVICE T spmvjit_shfl_down(T v, int d) { return __shfl_down_sync(SPMVJIT_FULL_MASK, v, d); }
template <class T>
SPMVJIT_DEVICE T spmvjit_shfl(T v, int lane) { return __shfl_sync(SPMVJIT_FULL_MASK, v, lane); }
template <class T>
SPMVJIT_DEVICE T spmvjit_shfl_up(T v, int d) { return __shfl_up_sync(SPMVJIT_FULL_MASK, v, d); }
SPMVJIT_DEVICE spmvjit_lanes_t spmvjit_ballot(bool p) { return __ballot_sync(SPMVJIT_FULL_MASK, p); }
SPMVJIT_DEVICE int spmvjit_lane() { return int(threadIdx.x) & (SPMVJIT_WARP - 1); }
// The lowest lane set in a nonzero ballot.
SPMVJIT_DEVICE int spmvjit_lowest_lane(spmvjit_lanes_t m) { return __ffs(int(m)) - 1; }
SPMVJIT_DEVICE int spmvjit_lane_count(spmvjit_lanes_t m) { return __popc(m); }
template <class T>
SPMVJIT_DEVICE T spmvjit_shfl_xor(T v, int mask) {
  return __shfl_xor_sync(SPMVJIT_FULL_MASK, v, mask);
}
#if SPMVJIT_COMPLEX
#include "complex_ops.cuh"
#else
SPMVJIT_DEVICE void spmvjit_atomic_add(V* p, V v) { atomicAdd(p, v); }
#endif
// 64-bit counters of the device planning kernels (templates/gpu/device_plan.cu).
SPMVJIT_DEVICE void spmvjit_atomic_add_u64(unsigned long long* p, unsigned long long v) { atomicAdd(p, v); }
SPMVJIT_DEVICE void spmvjit_atomic_min_u64(unsigned long long* p, unsigned long long v) { atomicMin(p, v); }
SPMVJIT_DEVICE void spmvjit_atomic_max_u64(unsigned long long* p, unsigned long long v) { atomicMax(p, v); }
SPMVJIT_DEVICE void spmvjit_atomic_add_f64(double* p, double v) { atomicAdd(p, v); }
// Block-wide barrier and block-shared storage (block-cooperative kernels such as csr_adaptive).
SPMVJIT_DEVICE void spmvjit_sync_block() { __syncthreads(); }
// Barrier that also returns whether p held in any thread of the block.
SPMVJIT_DEVICE bool spmvjit_sync_block_or(bool p) { return __syncthreads_or(p) != 0; }
// Return the old value (shared memory).
SPMVJIT_DEVICE int spmvjit_atomic_inc_shared(int* p) { return atomicAdd(p, 1); }
SPMVJIT_DEVICE unsigned spmvjit_atomic_inc_shared_u32(unsigned* p) { return atomicAdd(p, 1u); }
SPMVJIT_DEVICE unsigned spmvjit_atomic_add_shared_u32(unsigned* p, unsigned v) { return atomicAdd(p, v); }
SPMVJIT_DEVICE unsigned long long spmvjit_atomic_cas_shared_u64(unsigned long long* p, unsigned long long expected,
                                                                unsigned long long desired) {
  return atomicCAS(p, expected, desired);
}
// Leading zero bits of a 64-bit value (64 for 0).
SPMVJIT_DEVICE int spmvjit_clz64(long long v) { return __clzll(v); }
#define SPMVJIT_SHARED __shared__
// Programmatic dependent launch (sm_90+; no-ops below, and when the launch did not ask for it).
// A step launched early (LaunchStep::early) calls spmvjit_grid_wait() before it touches anything
// the previous step writes; a step may call spmvjit_grid_launch_dependents() to let the next
// step's blocks start in its tail.
SPMVJIT_DEVICE void spmvjit_grid_wait() {
#if __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}
SPMVJIT_DEVICE void spmvjit_grid_launch_dependents() {
#if __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" :::);
#endif
}

// alpha and beta as V: templates read them through these, never as (V)a.alpha, which would drop
// a complex value's imaginary part.
SPMVJIT_DEVICE V spmvjit_alpha(const SpmvArgs& a) {
#if SPMVJIT_COMPLEX
  return V((SPMVJIT_VALUE_T)a.alpha, (SPMVJIT_VALUE_T)a.alpha_im);
#else
  return (V)a.alpha;
#endif
}
SPMVJIT_DEVICE V spmvjit_beta(const SpmvArgs& a) {
#if SPMVJIT_COMPLEX
  return V((SPMVJIT_VALUE_T)a.beta, (SPMVJIT_VALUE_T)a.beta_im);
#else
  return (V)a.beta;
#endif
}

// E bit 0: beta == 0 (y is not read); bit 1: alpha == 1; E == SPMVJIT_EPILOGUE_RUNTIME: both
// decided at run time. Kernels ask through these, never test the bits themselves.
template <int E>
SPMVJIT_DEVICE bool spmvjit_beta_zero(V beta) {
  return E == SPMVJIT_EPILOGUE_RUNTIME ? beta == V(0) : (E & 1) != 0;
}
template <int E>
SPMVJIT_DEVICE bool spmvjit_alpha_one(V alpha) {
  return E == SPMVJIT_EPILOGUE_RUNTIME ? alpha == V(1) : (E & 2) != 0;
}
template <int E>
SPMVJIT_DEVICE V spmvjit_epilogue(V acc, const V* y, i64 r, V alpha, V beta) {
  const V ax = spmvjit_alpha_one<E>(alpha) ? acc : alpha * acc;
  return spmvjit_beta_zero<E>(beta) ? ax : ax + beta * y[r];
}

// Exports entry_0..entry_3 (the four epilogues) from `template <int E> __device__ void fn(const
// SpmvArgs&)`, or the one run-time variant entry_r (SPMVJIT_RUNTIME_EPILOGUE). BLOCK is the block
// size the launch uses (it bounds register use).
#if SPMVJIT_RUNTIME_EPILOGUE
#define SPMVJIT_EXPORT_KERNEL(fn, entry, BLOCK)                                     \
  extern "C" __global__ void __launch_bounds__(BLOCK) entry##_r(const SpmvArgs a) { \
    fn<SPMVJIT_EPILOGUE_RUNTIME>(a);                                                \
  }
#else
#define SPMVJIT_EXPORT_KERNEL(fn, entry, BLOCK)                                              \
  extern "C" __global__ void __launch_bounds__(BLOCK) entry##_0(const SpmvArgs a) { fn<0>(a); } \
  extern "C" __global__ void __launch_bounds__(BLOCK) entry##_1(const SpmvArgs a) { fn<1>(a); } \
  extern "C" __global__ void __launch_bounds__(BLOCK) entry##_2(const SpmvArgs a) { fn<2>(a); } \
  extern "C" __global__ void __launch_bounds__(BLOCK) entry##_3(const SpmvArgs a) { fn<3>(a); }
#endif

#include "values.cuh"

// y = beta * y, or 0 when beta == 0, reading neither A nor x: spmv_execute with alpha == 0
// (BLAS's rule: an inf or nan in x must not reach y). Every module exports it. One thread per
// element of y's rows x vectors, in its layout.
extern "C" __global__ void __launch_bounds__(256) spmvjit_scale_y(const SpmvArgs a) {
  const i64 i = i64(blockIdx.x) * i64(blockDim.x) + i64(threadIdx.x);
  if (i >= a.rows * a.vectors) return;
  const i64 r = i % a.rows, j = i / a.rows;
  V* y = (V*)a.y + (a.layout ? r * a.ldy + j : j * a.ldy + r);
  const V beta = spmvjit_beta(a);
  *y = beta == V(0) ? V(0) : beta * *y;
}

#endif  // SPMVJIT_PRELUDE_INCLUDED
