// The HIP runtime and hipRTC entry points, resolved at run time with dlopen (no link dependency).
// The HIP headers give only types and prototypes; a machine without ROCm still starts.
//
// Built with SPMVJIT_HIP_NVIDIA (CMake: -DSPMVJIT_HIP_PLATFORM=nvidia), the same backend runs on
// HIP's NVIDIA platform instead: the HIP headers' inline wrappers (hipRTC over NVRTC, the module
// API over the CUDA driver) fill the same tables, and the library links the CUDA runtime, driver
// and NVRTC. That build exists to run the HIP backend's host code and the templates' HIP prelude
// on an NVIDIA GPU; the default build is the AMD platform.
#pragma once

#if defined(SPMVJIT_HIP_NVIDIA)
#ifndef __HIP_PLATFORM_NVIDIA__
#define __HIP_PLATFORM_NVIDIA__ 1
#endif
#include "runtime/hip/nvidia_compat.h"
#elif !defined(__HIP_PLATFORM_AMD__)
#define __HIP_PLATFORM_AMD__ 1
#endif
#include <hip/hip_runtime_api.h>
#include <hip/hip_version.h>
#include <hip/hiprtc.h>

#include <string>
#include <vector>

#include "spmvjit/spmvjit.h"

namespace spmvjit::hip {

#define SPMVJIT_HIP_STR2(x) #x
#define SPMVJIT_HIP_NAME(x) SPMVJIT_HIP_STR2(x)
#define SPMVJIT_HIP_MEMBER(fn) decltype(&::fn) fn = nullptr;

#define SPMVJIT_HIP_RUNTIME_FUNCTIONS(X)                                                                     \
  X(hipInit)                                                                                                 \
  X(hipRuntimeGetVersion)                                                                                    \
  X(hipGetErrorName)                                                                                         \
  X(hipGetErrorString)                                                                                       \
  X(hipGetDeviceCount)                                                                                       \
  X(hipGetDeviceProperties) X(hipDeviceGetAttribute) X(hipSetDevice) X(hipGetDevice) X(hipDeviceSynchronize) \
      X(hipModuleLoadData) X(hipModuleUnload) X(hipModuleGetFunction) X(hipModuleLaunchKernel) X(hipFree)    \
          X(hipMemcpyHtoD) X(hipMemcpyDtoH) X(hipStreamSynchronize) X(hipEventCreateWithFlags)               \
              X(hipEventRecord) X(hipEventDestroy) X(hipStreamWaitEvent) X(hipEventSynchronize)              \
                  X(hipEventElapsedTime) X(hipMemset) X(hipMemcpy)

#define SPMVJIT_HIPRTC_FUNCTIONS(X)                                                              \
  X(hiprtcVersion)                                                                               \
  X(hiprtcGetErrorString)                                                                        \
  X(hiprtcCreateProgram)                                                                         \
  X(hiprtcCompileProgram)                                                                        \
  X(hiprtcDestroyProgram) X(hiprtcGetProgramLogSize) X(hiprtcGetProgramLog) X(hiprtcGetCodeSize) \
      X(hiprtcGetCode)

struct RuntimeApi {
  SPMVJIT_HIP_RUNTIME_FUNCTIONS(SPMVJIT_HIP_MEMBER)
  // The C entry point of hipMalloc (the headers add a template overload for T**).
  hipError_t (*hipMalloc)(void**, size_t) = nullptr;
};
struct RtcApi {
  SPMVJIT_HIPRTC_FUNCTIONS(SPMVJIT_HIP_MEMBER)
  std::string library;  // the file it came from (libhiprtc.so.N, or libamdhip64.so.N on ROCm 5.2)
  // Optional: present where hipRTC lives in the runtime library (ROCm 5.2), for the version.
  decltype(&::hipRuntimeGetVersion) runtime_version = nullptr;
};

// True when this build runs on HIP's NVIDIA platform (see above).
#if defined(SPMVJIT_HIP_NVIDIA)
inline constexpr bool kNvidiaPlatform = true;
#else
inline constexpr bool kNvidiaPlatform = false;
#endif

// The HIP major version these headers describe: only a runtime of the same major version (its
// soname, libamdhip64.so.<major>) has the structure layouts and enum values compiled in here.
inline constexpr int kHipMajor = HIP_VERSION_MAJOR;

// The libraries tried, in order: $SPMVJIT_HIP_RUNTIME / $SPMVJIT_HIPRTC when set (a path or
// soname; for tests and unusual installs), then the sonames of this HIP major version.
std::vector<std::string> runtime_candidates();
std::vector<std::string> rtc_candidates();

// libamdhip64 with hipInit done and at least one device, or nullptr; `why` says what was
// missing ("no HIP device: ..."). Loaded once.
const RuntimeApi* runtime(std::string* why = nullptr);
// hipRTC (libhiprtc.so.N, else the runtime library that carries it), or nullptr with `why`.
// Needs no device. Loaded once.
const RtcApi* rtc(std::string* why = nullptr);

// What loading from `names` (instead of the candidates above) says: "" when it would serve, else
// why not. Each call opens the libraries again; for tests of the error paths.
std::string probe_runtime(const std::vector<std::string>& names);
std::string probe_rtc(const std::vector<std::string>& names);

// "hipErrorOutOfMemory (out of memory)".
std::string error_text(hipError_t r);
// Throws Error(status) naming `what` when r is not hipSuccess.
void check(hipError_t r, const char* what, spmv_status_t status = SPMV_STATUS_EXECUTION_FAILED);

// The AMDGPU processors the installed code-object manager (libamd_comgr, which hipRTC compiles
// through) knows, as "gfx90a", "gfx1030", ... Empty when it cannot be loaded or listed: hipRTC
// then gets the target unchecked. hipRTC of ROCm 5.2 aborts the process on a processor its
// compiler does not know, so the backend refuses those first.
const std::vector<std::string>& comgr_processors(std::string* version = nullptr);

}  // namespace spmvjit::hip
