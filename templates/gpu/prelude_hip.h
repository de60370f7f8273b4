// GPU kernel prelude for HIP (hipRTC, AMD GPUs): the names prelude_cuda.h gives the templates,
// for wavefronts of 64 lanes (CDNA, GCN) or 32 (RDNA), so every GPU template compiles unchanged.
// On HIP's NVIDIA platform (__HIP_PLATFORM_NVIDIA__: hipRTC is NVRTC there) the few HIP device
// functions CUDA lacks map to CUDA's, as HIP's own nvidia_hip_runtime.h maps them; warps of 32.
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

// Lanes of a wavefront: codegen bakes the target's (KernelSpec::warp_size). The compiler's own
// wavefront (clang's __AMDGCN_WAVEFRONT_SIZE: 64 on gfx9, 32 on gfx10+ unless -mwavefrontsize64)
// must agree, or every warp-wide reduction would be wrong: refuse to compile instead.
#ifndef SPMVJIT_WARP
#ifdef __AMDGCN_WAVEFRONT_SIZE
#define SPMVJIT_WARP __AMDGCN_WAVEFRONT_SIZE
#else
#define SPMVJIT_WARP 64
#endif
#endif
#if SPMVJIT_WARP != 32 && SPMVJIT_WARP != 64
#error "HIP wavefronts are 32 or 64 lanes"
#endif
#if defined(__AMDGCN_WAVEFRONT_SIZE) && __AMDGCN_WAVEFRONT_SIZE != SPMVJIT_WARP
#error "SPMVJIT_WARP differs from the wavefront size this target compiles for"
#endif
// One bit per lane (ballots): 64-bit masks on wavefronts of 64.
#if SPMVJIT_WARP == 64
typedef unsigned long long spmvjit_lanes_t;
#define SPMVJIT_FULL_MASK 0xffffffffffffffffull
#else
typedef unsigned spmvjit_lanes_t;
#define SPMVJIT_FULL_MASK 0xffffffffu
#endif
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

#if defined(__HIP_PLATFORM_NVIDIA__)
#define SPMVJIT_HIP_NONTEMPORAL_LOAD(p) __ldcs(p)
#define SPMVJIT_HIP_SHFL_DOWN(v, d) __shfl_down_sync(SPMVJIT_FULL_MASK, v, d, SPMVJIT_WARP)
#define SPMVJIT_HIP_SHFL_UP(v, d) __shfl_up_sync(SPMVJIT_FULL_MASK, v, d, SPMVJIT_WARP)
#define SPMVJIT_HIP_SHFL(v, lane) __shfl_sync(SPMVJIT_FULL_MASK, v, lane, SPMVJIT_WARP)
#define SPMVJIT_HIP_SHFL_XOR(v, m) __shfl_xor_sync(SPMVJIT_FULL_MASK, v, m, SPMVJIT_WARP)
#define SPMVJIT_HIP_BALLOT(p) __ballot_sync(SPMVJIT_FULL_MASK, p)
#define SPMVJIT_HIP_CTZ64(m) (__ffsll((long long)(m)) - 1)
#define SPMVJIT_HIP_POPC64(m) __popcll(m)
#else
#define SPMVJIT_HIP_NONTEMPORAL_LOAD(p) __builtin_nontemporal_load(p)
#define SPMVJIT_HIP_SHFL_DOWN(v, d) __shfl_down(v, unsigned(d), SPMVJIT_WARP)
#define SPMVJIT_HIP_SHFL_UP(v, d) __shfl_up(v, unsigned(d), SPMVJIT_WARP)
#define SPMVJIT_HIP_SHFL(v, lane) __shfl(v, lane, SPMVJIT_WARP)
#define SPMVJIT_HIP_SHFL_XOR(v, m) __shfl_xor(v, m, SPMVJIT_WARP)
#define SPMVJIT_HIP_BALLOT(p) __ballot(p)
#define SPMVJIT_HIP_CTZ64(m) __builtin_ctzll(m)
#define SPMVJIT_HIP_POPC64(m) __builtin_popcountll(m)
#endif

// Read-only loads: AMD GPUs have no separate read-only path (the vector L1 caches every load), so
// a plain load through a restrict pointer is what __ldg would be.
template <class T>
SPMVJIT_DEVICE T spmvjit_ldg(const T* p) {
  return *p;
}
// Streaming loads for matrix arrays read exactly once: nontemporal loads, so x stays in cache.
// __builtin_nontemporal_load takes scalars; vector structs (uint2, uint4) load as they are.
template <class T>
SPMVJIT_DEVICE T spmvjit_ld_stream(const T* p) {
  return *p;
}
#define SPMVJIT_HIP_NT_LOAD(T) \
  SPMVJIT_DEVICE T spmvjit_ld_stream(const T* p) { return SPMVJIT_HIP_NONTEMPORAL_LOAD(p); }
SPMVJIT_HIP_NT_LOAD(float)
SPMVJIT_HIP_NT_LOAD(double)
SPMVJIT_HIP_NT_LOAD(int)
SPMVJIT_HIP_NT_LOAD(unsigned)
SPMVJIT_HIP_NT_LOAD(long long)
SPMVJIT_HIP_NT_LOAD(unsigned long long)
SPMVJIT_HIP_NT_LOAD(unsigned short)
SPMVJIT_HIP_NT_LOAD(unsigned char)
#undef SPMVJIT_HIP_NT_LOAD
#if SPMVJIT_COMPLEX  // the two parts, each nontemporal
template <class T>
SPMVJIT_DEVICE spmvjit_complex<T> spmvjit_ld_stream(const spmvjit_complex<T>* p) {
  return spmvjit_complex<T>(SPMVJIT_HIP_NONTEMPORAL_LOAD(&p->re), SPMVJIT_HIP_NONTEMPORAL_LOAD(&p->im));
}
#endif
// Shuffles over the whole wavefront (HIP's have no mask: every lane takes part, as with CUDA's
// full mask).
template <class T>
SPMVJIT_DEVICE T spmvjit_shfl_down(T v, int d) {
  return SPMVJIT_HIP_SHFL_DOWN(v, d);
}
template <class T>
SPMVJIT_DEVICE T spmvjit_shfl(T v, int lane) {
  return SPMVJIT_HIP_SHFL(v, lane);
}
template <class T>
SPMVJIT_DEVICE T spmvjit_shfl_up(T v, int d) {
  return SPMVJIT_HIP_SHFL_UP(v, d);
}
SPMVJIT_DEVICE spmvjit_lanes_t spmvjit_ballot(bool p) { return (spmvjit_lanes_t)SPMVJIT_HIP_BALLOT(p); }
SPMVJIT_DEVICE int spmvjit_lane() { return int(threadIdx.x) & (SPMVJIT_WARP - 1); }
// The lowest lane set in a nonzero ballot (NVRTC, under HIP's NVIDIA platform, has none of clang's
// bit builtins: CUDA's intrinsics there).
SPMVJIT_DEVICE int spmvjit_lowest_lane(spmvjit_lanes_t m) { return SPMVJIT_HIP_CTZ64((unsigned long long)m); }
SPMVJIT_DEVICE int spmvjit_lane_count(spmvjit_lanes_t m) { return SPMVJIT_HIP_POPC64((unsigned long long)m); }
template <class T>
SPMVJIT_DEVICE T spmvjit_shfl_xor(T v, int mask) {
  return SPMVJIT_HIP_SHFL_XOR(v, mask);
}
// Floating-point atomics as HIP compiles them by default (a compare-and-swap loop where the
// hardware's float atomics would not be safe on every kind of memory).
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
// Block-wide barrier and block-shared (LDS) storage.
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
// No programmatic dependent launch on AMD GPUs: steps run one after another in stream order
// (the HIP backend ignores LaunchStep::early), so there is nothing to wait for or release.
SPMVJIT_DEVICE void spmvjit_grid_wait() {}
SPMVJIT_DEVICE void spmvjit_grid_launch_dependents() {}

// The rest is prelude_cuda.h's text, unchanged (tests/runtime/test_hip.cpp checks that the two
// agree from here on), so it keeps that file's layout.
// clang-format off
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
