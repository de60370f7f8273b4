// dlopen/dlsym of the CUDA driver and NVRTC: the library starts and reports NO_DEVICE without them.
#include "runtime/cuda/cuda_api.hpp"

#include <dlfcn.h>

#include <mutex>

#include "core/error.hpp"

namespace spmvjit::cuda {
namespace {

template <class Api>
struct Loaded {
  Api api;
  bool ok = false;
  std::string why;
};

// Resolves every symbol or none: a partial table would crash later instead of failing now.
#define SPMVJIT_CU_RESOLVE(fn)                                                       \
  api.fn = reinterpret_cast<decltype(api.fn)>(::dlsym(handle, SPMVJIT_CU_NAME(fn))); \
  if (!api.fn) missing += std::string(missing.empty() ? "" : ", ") + SPMVJIT_CU_NAME(fn);

const Loaded<DriverApi>& load_driver() {
  static const Loaded<DriverApi> loaded = [] {
    Loaded<DriverApi> l;
    void* handle = ::dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
      const char* e = ::dlerror();
      l.why = std::string("no CUDA device/driver: cannot load libcuda.so.1 (") + (e ? e : "?") + ")";
      return l;
    }
    DriverApi& api = l.api;
    std::string missing;
    SPMVJIT_DRIVER_FUNCTIONS(SPMVJIT_CU_RESOLVE)
    if (!missing.empty()) {
      l.why = "no CUDA device/driver: libcuda.so.1 lacks " + missing + " (driver too old)";
      return l;
    }
    api.cuLaunchKernelEx =
        reinterpret_cast<decltype(api.cuLaunchKernelEx)>(::dlsym(handle, SPMVJIT_CU_NAME(cuLaunchKernelEx)));
    const CUresult r = api.cuInit(0);
    if (r != CUDA_SUCCESS) {
      const char* name = nullptr;
      api.cuGetErrorName(r, &name);
      l.why = std::string("no CUDA device/driver: cuInit failed with ") + (name ? name : "?");
      return l;
    }
    l.ok = true;
    return l;
  }();
  return loaded;
}

const Loaded<NvrtcApi>& load_nvrtc() {
  static const Loaded<NvrtcApi> loaded = [] {
    Loaded<NvrtcApi> l;
    void* handle = nullptr;
    std::string tried;
    for (const char* name : {"libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so"}) {
      handle = ::dlopen(name, RTLD_NOW | RTLD_LOCAL);
      if (handle) break;
      tried += std::string(tried.empty() ? "" : ", ") + name;
    }
    if (!handle) {
      l.why = "NVRTC not found (tried " + tried + "): install the CUDA toolkit's NVRTC";
      return l;
    }
    NvrtcApi& api = l.api;
    std::string missing;
    SPMVJIT_NVRTC_FUNCTIONS(SPMVJIT_CU_RESOLVE)
    if (!missing.empty()) {
      l.why = "NVRTC lacks " + missing + " (too old)";
      return l;
    }
    l.ok = true;
    return l;
  }();
  return loaded;
}

}  // namespace

const DriverApi* driver(std::string* why) {
  const auto& l = load_driver();
  if (!l.ok && why) *why = l.why;
  return l.ok ? &l.api : nullptr;
}

const NvrtcApi* nvrtc(std::string* why) {
  const auto& l = load_nvrtc();
  if (!l.ok && why) *why = l.why;
  return l.ok ? &l.api : nullptr;
}

std::string driver_error(CUresult r) {
  const DriverApi* d = driver();
  const char* name = nullptr;
  const char* text = nullptr;
  if (d) {
    d->cuGetErrorName(r, &name);
    d->cuGetErrorString(r, &text);
  }
  return std::string(name ? name : "CUresult " + std::to_string(int(r))) + " (" + (text ? text : "?") + ")";
}

void check(CUresult r, const char* what, spmv_status_t status) {
  if (r != CUDA_SUCCESS) fail(status, std::string(what) + " failed: " + driver_error(r));
}

}  // namespace spmvjit::cuda
