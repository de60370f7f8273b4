// The CUDA driver and NVRTC entry points, resolved at run time with dlopen (no link dependency).
// cuda.h / nvrtc.h give only types and prototypes; a machine without them still starts.
#pragma once

#include <cuda.h>
#include <nvrtc.h>

#include <string>

#include "spmvjit/spmvjit.h"

namespace spmvjit::cuda {

// cuda.h #defines versioned names (cuMemAlloc -> cuMemAlloc_v2): members declared through the
// same macro names expand alike, and SPMVJIT_CU_NAME gives the symbol dlsym must look up.
#define SPMVJIT_CU_STR2(x) #x
#define SPMVJIT_CU_NAME(x) SPMVJIT_CU_STR2(x)
#define SPMVJIT_CU_MEMBER(fn) decltype(&::fn) fn = nullptr;

#define SPMVJIT_DRIVER_FUNCTIONS(X)                                                                    \
  X(cuInit)                                                                                            \
  X(cuDriverGetVersion) X(cuGetErrorString) X(cuGetErrorName) X(cuDeviceGetCount) X(cuDeviceGet)       \
      X(cuDeviceGetAttribute) X(cuDeviceGetName) X(cuDevicePrimaryCtxRetain) X(cuCtxSetCurrent)        \
          X(cuCtxGetCurrent) X(cuCtxSynchronize) X(cuModuleLoadData) X(cuModuleUnload)                 \
              X(cuModuleGetFunction) X(cuLaunchKernel) X(cuMemAlloc) X(cuMemFree) X(cuMemcpyHtoD)      \
                  X(cuMemcpyDtoH) X(cuMemcpyDtoD) X(cuMemsetD8) X(cuMemGetInfo) X(cuStreamSynchronize) \
                      X(cuEventCreate) X(cuEventRecord) X(cuEventSynchronize) X(cuEventElapsedTime)    \
                          X(cuEventDestroy) X(cuFuncGetAttribute) X(cuMemHostAlloc) X(cuMemFreeHost)   \
                              X(cuMemcpyHtoDAsync) X(cuStreamWaitEvent) X(cuStreamCreate) X(cuStreamDestroy)

#define SPMVJIT_NVRTC_FUNCTIONS(X)                                                            \
  X(nvrtcVersion) X(nvrtcGetNumSupportedArchs) X(nvrtcGetSupportedArchs) X(nvrtcGetErrorString) \
  X(nvrtcCreateProgram) X(nvrtcCompileProgram) X(nvrtcDestroyProgram) X(nvrtcGetProgramLogSize) \
  X(nvrtcGetProgramLog) X(nvrtcGetCUBINSize) X(nvrtcGetCUBIN) X(nvrtcGetPTXSize) X(nvrtcGetPTX)

struct DriverApi {
  SPMVJIT_DRIVER_FUNCTIONS(SPMVJIT_CU_MEMBER)
  // Optional (CUDA 11.8+ drivers): nullptr means plain cuLaunchKernel launches only.
  SPMVJIT_CU_MEMBER(cuLaunchKernelEx)
};
struct NvrtcApi {
  SPMVJIT_NVRTC_FUNCTIONS(SPMVJIT_CU_MEMBER)
};

// libcuda.so.1 with cuInit done, or nullptr; `why` says what was missing. Loaded once.
const DriverApi* driver(std::string* why = nullptr);
// NVRTC (libnvrtc.so.13, .so.12, .so), or nullptr with `why`. Loaded once.
const NvrtcApi* nvrtc(std::string* why = nullptr);

// "CUDA_ERROR_OUT_OF_MEMORY (out of memory)".
std::string driver_error(CUresult r);
// Throws Error(status) naming `what` when r is not CUDA_SUCCESS.
void check(CUresult r, const char* what, spmv_status_t status = SPMV_STATUS_EXECUTION_FAILED);

}  // namespace spmvjit::cuda
