// The HIP device names the GPU templates use, for clang compiling HIP with no ROCm headers and no
// device libraries (-nogpuinc -nogpulib): what hipRTC's built-in hip_runtime.h gives them, built
// on clang's AMDGPU builtins alone. The HIP backend compiles with clang 19 (the CPU backend's LLVM
// plugin) for processors its hipRTC does not know (gfx942 with ROCm 5.2), defining
// SPMVJIT_HIP_CLANG; codegen pastes this file ahead of every HIP kernel source. Everything here is
// inline and calls no library function, so a code object links with nothing but itself.
#ifndef SPMVJIT_HIP_CLANG_RUNTIME_INCLUDED
#define SPMVJIT_HIP_CLANG_RUNTIME_INCLUDED

#if !defined(__HIP__) || !defined(__AMDGCN__)
#error "hip_clang_runtime.h is for clang's HIP device compile (-x hip -fcuda-is-device, amdgcn)"
#endif

#define __global__ __attribute__((global))
#define __device__ __attribute__((device))
#define __host__ __attribute__((host))
#define __shared__ __attribute__((shared))
#define __constant__ __attribute__((constant))
#define __forceinline__ inline __attribute__((always_inline))
#define __launch_bounds__(threads) __attribute__((amdgpu_flat_work_group_size(1, threads)))

struct spmvjit_dim3 {
  unsigned x, y, z;
};
#define threadIdx                                                                   \
  (spmvjit_dim3{__builtin_amdgcn_workitem_id_x(), __builtin_amdgcn_workitem_id_y(), \
                __builtin_amdgcn_workitem_id_z()})
#define blockIdx                                                                      \
  (spmvjit_dim3{__builtin_amdgcn_workgroup_id_x(), __builtin_amdgcn_workgroup_id_y(), \
                __builtin_amdgcn_workgroup_id_z()})
#define blockDim                                               \
  (spmvjit_dim3{unsigned(__builtin_amdgcn_workgroup_size_x()), \
                unsigned(__builtin_amdgcn_workgroup_size_y()), \
                unsigned(__builtin_amdgcn_workgroup_size_z())})
// The grid in work-groups: the dispatch's grid is in work-items (hipModuleLaunchKernel sets it to
// blocks x threads per block, a multiple of the block).
#define gridDim                                                                                 \
  (spmvjit_dim3{__builtin_amdgcn_grid_size_x() / unsigned(__builtin_amdgcn_workgroup_size_x()), \
                __builtin_amdgcn_grid_size_y() / unsigned(__builtin_amdgcn_workgroup_size_y()), \
                __builtin_amdgcn_grid_size_z() / unsigned(__builtin_amdgcn_workgroup_size_z())})

struct alignas(8) uint2 {
  unsigned x, y;
};
struct alignas(16) uint4 {
  unsigned x, y, z, w;
};

template <class T>
static __device__ __forceinline__ T min(T a, T b) {
  return b < a ? b : a;
}
template <class T>
static __device__ __forceinline__ T max(T a, T b) {
  return a < b ? b : a;
}

// Block barrier: LDS and global writes before it are seen by the work-group after it.
static __device__ __forceinline__ void __syncthreads() {
  __builtin_amdgcn_fence(__ATOMIC_RELEASE, "workgroup");
  __builtin_amdgcn_s_barrier();
  __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "workgroup");
}
// A barrier that returns nonzero when p is nonzero in any thread of the block (HIP's calls a
// device-library reduction; one LDS flag does the same here).
static __device__ __forceinline__ int __syncthreads_or(int p) {
  __shared__ int any;
  __syncthreads();  // every thread has read the flag of an earlier call
  if (__builtin_amdgcn_workitem_id_x() == 0 && __builtin_amdgcn_workitem_id_y() == 0 &&
      __builtin_amdgcn_workitem_id_z() == 0)
    any = 0;
  __syncthreads();
  if (p) __hip_atomic_store(&any, 1, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_WORKGROUP);
  __syncthreads();
  return __hip_atomic_load(&any, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_WORKGROUP);
}

// This lane's number in its wavefront.
static __device__ __forceinline__ int spmvjit_hip_lane_id() {
  return int(__builtin_amdgcn_mbcnt_hi(~0u, __builtin_amdgcn_mbcnt_lo(~0u, 0u)));
}
// ds_bpermute moves 32 bits from lane `src` (every lane active); wider values move in 32-bit
// words.
template <class T>
static __device__ __forceinline__ T spmvjit_hip_permute(T v, int src) {
  static_assert(sizeof(T) % 4 == 0, "shuffles move whole 32-bit words");
  int w[sizeof(T) / 4];
  __builtin_memcpy(w, &v, sizeof(T));
  for (int i = 0; i < int(sizeof(T) / 4); ++i) w[i] = __builtin_amdgcn_ds_bpermute(src << 2, w[i]);
  __builtin_memcpy(&v, w, sizeof(T));
  return v;
}
// HIP's shuffle semantics within segments of `width` lanes: a source outside the segment leaves
// the lane's own value.
template <class T>
static __device__ __forceinline__ T __shfl(T v, int src, int width) {
  const int self = spmvjit_hip_lane_id();
  return spmvjit_hip_permute(v, (src & (width - 1)) + (self & ~(width - 1)));
}
template <class T>
static __device__ __forceinline__ T __shfl_down(T v, unsigned d, int width) {
  const int self = spmvjit_hip_lane_id();
  const int src = int((self & (width - 1)) + d) >= width ? self : self + int(d);
  return spmvjit_hip_permute(v, src);
}
template <class T>
static __device__ __forceinline__ T __shfl_up(T v, unsigned d, int width) {
  const int self = spmvjit_hip_lane_id();
  const int src = self - int(d) < (self & ~(width - 1)) ? self : self - int(d);
  return spmvjit_hip_permute(v, src);
}
template <class T>
static __device__ __forceinline__ T __shfl_xor(T v, int mask, int width) {
  const int self = spmvjit_hip_lane_id();
  const int src = (self ^ mask) >= ((self + width) & ~(width - 1)) ? self : self ^ mask;
  return spmvjit_hip_permute(v, src);
}
#if __AMDGCN_WAVEFRONT_SIZE == 64
static __device__ __forceinline__ unsigned long long __ballot(int p) {
  return __builtin_amdgcn_ballot_w64(p != 0);
}
#else
static __device__ __forceinline__ unsigned __ballot(int p) { return __builtin_amdgcn_ballot_w32(p != 0); }
#endif

// Atomics at device scope, relaxed, as HIP's atomicAdd/Min/Max (floating-point adds compile to
// a compare-and-swap loop unless unsafe FP atomics are asked for, as with hipRTC's defaults).
template <class T>
static __device__ __forceinline__ T atomicAdd(T* p, T v) {
  return __hip_atomic_fetch_add(p, v, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_AGENT);
}
template <class T>
static __device__ __forceinline__ T atomicMin(T* p, T v) {
  return __hip_atomic_fetch_min(p, v, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_AGENT);
}
template <class T>
static __device__ __forceinline__ T atomicMax(T* p, T v) {
  return __hip_atomic_fetch_max(p, v, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_AGENT);
}

// Returns the old value, as HIP's atomicCAS.
template <class T>
static __device__ __forceinline__ T atomicCAS(T* p, T expected, T desired) {
  __hip_atomic_compare_exchange_strong(p, &expected, desired, __ATOMIC_RELAXED, __ATOMIC_RELAXED,
                                       __HIP_MEMORY_SCOPE_AGENT);
  return expected;
}

// Leading zero bits, 64 for 0 (as HIP's).
static __device__ __forceinline__ int __clzll(long long v) {
  return v == 0 ? 64 : __builtin_clzll((unsigned long long)v);
}

#endif  // SPMVJIT_HIP_CLANG_RUNTIME_INCLUDED
