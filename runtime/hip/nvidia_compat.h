// HIP's NVIDIA platform (hip/nvidia_detail, as Debian's libamdhip64-dev ships it from ROCm 5.2)
// against a newer CUDA: those headers are inline wrappers written for CUDA 11, and CUDA 12-13
// removed or changed what a few of them call. Included ahead of the HIP headers (hip_api.hpp),
// it gives each such name what the wrapper expects, so the headers compile unchanged:
// - cudaDeviceProp lost clockRate, memoryClockRate, computeMode, kernelExecTimeoutEnabled and
//   cooperativeMultiDeviceLaunch (CUDA 13): a struct with them, filled from device attributes;
// - cudaMemAdvise and cudaMemPrefetchAsync take a cudaMemLocation instead of a device (CUDA 13);
// - cuCtxCreate takes creation parameters (CUDA 13: cuCtxCreate_v4);
// - texture references and multi-device cooperative launches are gone: cudaErrorNotSupported.
// The backend itself calls none of these but hipGetDeviceProperties.
#pragma once
#include <cuda.h>
#include <cuda_runtime_api.h>
#include <string.h>

#if CUDART_VERSION >= 13000
struct spmvjit_cuda_device_prop : cudaDeviceProp {
  int clockRate, memoryClockRate, computeMode, cooperativeMultiDeviceLaunch, kernelExecTimeoutEnabled;
};
inline cudaError_t spmvjit_cuda_get_device_properties(spmvjit_cuda_device_prop* p, int device) {
  memset(p, 0, sizeof *p);
  cudaError_t r = cudaGetDeviceProperties(static_cast<cudaDeviceProp*>(p), device);
  if (r != cudaSuccess) return r;
  const struct {
    int* field;
    cudaDeviceAttr attr;
  } more[] = {{&p->clockRate, cudaDevAttrClockRate},
              {&p->memoryClockRate, cudaDevAttrMemoryClockRate},
              {&p->computeMode, cudaDevAttrComputeMode},
              {&p->kernelExecTimeoutEnabled, cudaDevAttrKernelExecTimeout}};
  for (const auto& m : more)
    if ((r = cudaDeviceGetAttribute(m.field, m.attr, device)) != cudaSuccess) return r;
  return cudaSuccess;
}
inline cudaError_t spmvjit_cuda_choose_device(int* device, const spmvjit_cuda_device_prop* p) {
  return cudaChooseDevice(device, static_cast<const cudaDeviceProp*>(p));
}
inline cudaError_t spmvjit_cuda_mem_advise(const void* p, size_t n, cudaMemoryAdvise a, int device) {
  cudaMemLocation loc{};
  loc.type = device == cudaCpuDeviceId ? cudaMemLocationTypeHost : cudaMemLocationTypeDevice;
  loc.id = device;
  return cudaMemAdvise(p, n, a, loc);
}
inline cudaError_t spmvjit_cuda_mem_prefetch(const void* p, size_t n, int device, cudaStream_t s) {
  cudaMemLocation loc{};
  loc.type = device == cudaCpuDeviceId ? cudaMemLocationTypeHost : cudaMemLocationTypeDevice;
  loc.id = device;
  return cudaMemPrefetchAsync(p, n, loc, 0, s);
}
inline CUresult spmvjit_cu_ctx_create(CUcontext* ctx, unsigned flags, CUdevice dev) {
  return cuCtxCreate_v4(ctx, nullptr, flags, dev);
}
#endif
#if CUDART_VERSION >= 12000
template <class... A>
inline cudaError_t spmvjit_cuda_removed(A...) {
  return cudaErrorNotSupported;
}
#endif
#if CUDART_VERSION >= 13000
#undef cudaGetDeviceProperties
#define cudaDeviceProp spmvjit_cuda_device_prop
#define cudaGetDeviceProperties spmvjit_cuda_get_device_properties
#define cudaChooseDevice spmvjit_cuda_choose_device
#define cudaMemAdvise spmvjit_cuda_mem_advise
#define cudaMemPrefetchAsync spmvjit_cuda_mem_prefetch
#undef cuCtxCreate
#define cuCtxCreate spmvjit_cu_ctx_create
#define cudaDevAttrCooperativeMultiDeviceLaunch ((cudaDeviceAttr)-1)
#endif
#if CUDART_VERSION >= 12000
#define cudaBindTexture spmvjit_cuda_removed
#define cudaBindTexture2D spmvjit_cuda_removed
#define cudaGetTextureAlignmentOffset spmvjit_cuda_removed
#define cudaLaunchCooperativeKernelMultiDevice spmvjit_cuda_removed
#endif
