// dlopen/dlsym of the HIP runtime and hipRTC: the library starts and reports NO_DEVICE without them.
#include "runtime/hip/hip_api.hpp"

#include <dlfcn.h>

#include <cstdlib>

#include "core/error.hpp"

namespace spmvjit::hip {
namespace {

template <class Api>
struct Loaded {
  Api api;
  bool ok = false;
  std::string why;
};

// Resolves every symbol or none: a partial table would crash later instead of failing now.
#define SPMVJIT_HIP_RESOLVE(fn)                                                       \
  api.fn = reinterpret_cast<decltype(api.fn)>(::dlsym(handle, SPMVJIT_HIP_NAME(fn))); \
  if (!api.fn) missing += std::string(missing.empty() ? "" : ", ") + SPMVJIT_HIP_NAME(fn);

// The first of `names` that dlopen takes, or nullptr with every failure in `tried`.
void* open_first(const std::vector<std::string>& names, std::string* opened, std::string* tried) {
  for (const std::string& name : names) {
    if (void* h = ::dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL)) {
      *opened = name;
      return h;
    }
    const char* e = ::dlerror();
    *tried += (tried->empty() ? "" : "; ") + name + ": " + (e ? e : "?");
  }
  return nullptr;
}

std::vector<std::string> with_override(const char* env, std::vector<std::string> names) {
  if (const char* e = std::getenv(env); e && *e) names.insert(names.begin(), e);
  return names;
}

const std::string kMajor = std::to_string(kHipMajor);

Loaded<RuntimeApi> load_runtime_from(const std::vector<std::string>& names) {
  Loaded<RuntimeApi> l;
  std::string name, tried;
  void* handle = open_first(names, &name, &tried);
  if (!handle) {
    l.why = "no HIP device: cannot load the HIP runtime (" + tried + ")";
    return l;
  }
  RuntimeApi& api = l.api;
  std::string missing;
  SPMVJIT_HIP_RUNTIME_FUNCTIONS(SPMVJIT_HIP_RESOLVE)
  SPMVJIT_HIP_RESOLVE(hipMalloc)
  if (!missing.empty()) {
    l.why = "no HIP device: " + name + " lacks " + missing;
    return l;
  }
  int version = 0;
  (void)api.hipRuntimeGetVersion(&version);
  if (version / 10000000 != kHipMajor) {  // HIP_VERSION = major * 10^7 + minor * 10^5 + patch
    l.why = "no HIP device: " + name + " is HIP " + std::to_string(version / 10000000) +
            "; this spmvjit was built with the HIP " + kMajor + " headers";
    return l;
  }
  const hipError_t init = api.hipInit(0);  // fails without a device; the count says why
  int count = 0;
  const hipError_t r = api.hipGetDeviceCount(&count);
  if (r != hipSuccess || count == 0) {
    const hipError_t e = r != hipSuccess ? r : init;
    l.why = std::string("no HIP device: the HIP runtime (") + name + ") finds no AMD GPU" +
            (e != hipSuccess ? std::string(" (") + api.hipGetErrorName(e) + ")" : std::string());
    return l;
  }
  l.ok = true;
  return l;
}

#if defined(SPMVJIT_HIP_NVIDIA)
// HIP's NVIDIA platform: the entry points are the headers' inline wrappers over the CUDA runtime
// and driver (linked), so there is nothing to open; the device check is the same.
#define SPMVJIT_HIP_WRAPPER(fn) api.fn = &::fn;

std::string cuda_versions() {
  int runtime = 0, driver = 0;
  (void)cudaRuntimeGetVersion(&runtime);
  (void)cudaDriverGetVersion(&driver);
  auto v = [](int x) { return std::to_string(x / 1000) + "." + std::to_string(x % 1000 / 10); };
  return "CUDA runtime " + v(runtime) + ", driver " + v(driver);
}

Loaded<RuntimeApi> load_nvidia_runtime() {
  Loaded<RuntimeApi> l;
  RuntimeApi& api = l.api;
  SPMVJIT_HIP_RUNTIME_FUNCTIONS(SPMVJIT_HIP_WRAPPER)
  api.hipMalloc = [](void** p, size_t bytes) { return ::hipMalloc(p, bytes); };
  const hipError_t init = api.hipInit(0);
  int count = 0;
  const hipError_t r = api.hipGetDeviceCount(&count);
  if (init != hipSuccess || r != hipSuccess || count == 0) {
    const hipError_t e = init != hipSuccess ? init : r;
    l.why = "no HIP device: HIP's NVIDIA platform (" + cuda_versions() + ") finds no NVIDIA GPU" +
            (e != hipSuccess ? std::string(" (") + api.hipGetErrorName(e) + ")" : std::string());
    return l;
  }
  l.ok = true;
  return l;
}
#endif

const Loaded<RuntimeApi>& load_runtime() {
#if defined(SPMVJIT_HIP_NVIDIA)
  static const Loaded<RuntimeApi> loaded = load_nvidia_runtime();
#else
  static const Loaded<RuntimeApi> loaded = load_runtime_from(runtime_candidates());
#endif
  return loaded;
}

Loaded<RtcApi> load_rtc_from(const std::vector<std::string>& names) {
  Loaded<RtcApi> l;
  std::string name, tried;
  void* handle = open_first(names, &name, &tried);
  if (!handle) {
    l.why = "hipRTC not found (" + tried + "): install libamdhip64-dev (Debian) or ROCm's hiprtc";
    return l;
  }
  RtcApi& api = l.api;
  api.library = name;
  std::string missing;
  SPMVJIT_HIPRTC_FUNCTIONS(SPMVJIT_HIP_RESOLVE)
  if (!missing.empty()) {
    l.why = "hipRTC: " + name + " lacks " + missing;
    return l;
  }
  api.runtime_version =
      reinterpret_cast<decltype(api.runtime_version)>(::dlsym(handle, "hipRuntimeGetVersion"));
  l.ok = true;
  return l;
}

const Loaded<RtcApi>& load_rtc() {
#if defined(SPMVJIT_HIP_NVIDIA)
  static const Loaded<RtcApi> loaded = [] {
    Loaded<RtcApi> l;
    RtcApi& api = l.api;
    SPMVJIT_HIPRTC_FUNCTIONS(SPMVJIT_HIP_WRAPPER)
    api.library = "hipRTC over NVRTC (HIP's NVIDIA platform)";
    api.runtime_version = &::hipRuntimeGetVersion;
    l.ok = true;
    return l;
  }();
#else
  static const Loaded<RtcApi> loaded = load_rtc_from(rtc_candidates());
#endif
  return loaded;
}

}  // namespace

std::string probe_runtime(const std::vector<std::string>& names) { return load_runtime_from(names).why; }
std::string probe_rtc(const std::vector<std::string>& names) { return load_rtc_from(names).why; }

std::vector<std::string> runtime_candidates() {
  return with_override("SPMVJIT_HIP_RUNTIME", {"libamdhip64.so." + kMajor});
}

// ROCm 5.3 and later ship hipRTC as its own library; ROCm 5.2 (Debian 12) has it inside
// libamdhip64, whose loading needs no device.
std::vector<std::string> rtc_candidates() {
  return with_override("SPMVJIT_HIPRTC", {"libhiprtc.so." + kMajor, "libamdhip64.so." + kMajor});
}

const RuntimeApi* runtime(std::string* why) {
  const auto& l = load_runtime();
  if (!l.ok && why) *why = l.why;
  return l.ok ? &l.api : nullptr;
}

const RtcApi* rtc(std::string* why) {
  const auto& l = load_rtc();
  if (!l.ok && why) *why = l.why;
  return l.ok ? &l.api : nullptr;
}

std::string error_text(hipError_t r) {
  const auto& l = load_runtime();
  // The names and strings need the library, not a device.
  const bool named = l.api.hipGetErrorName && l.api.hipGetErrorString;
  const char* name = named ? l.api.hipGetErrorName(r) : nullptr;
  const char* text = named ? l.api.hipGetErrorString(r) : nullptr;
  return std::string(name ? name : "hipError_t " + std::to_string(int(r))) + " (" + (text ? text : "?") + ")";
}

void check(hipError_t r, const char* what, spmv_status_t status) {
  if (r != hipSuccess) fail(status, std::string(what) + " failed: " + error_text(r));
}

const std::vector<std::string>& comgr_processors(std::string* version) {
  struct Comgr {
    std::vector<std::string> processors;
    std::string version;
  };
  static const Comgr comgr = [] {
    Comgr c;
    void* h = ::dlopen("libamd_comgr.so.2", RTLD_NOW | RTLD_LOCAL);
    if (!h) return c;
    // amd_comgr.h's signatures (status enums are ints); the header is not needed for three calls.
    auto count = reinterpret_cast<int (*)(size_t*)>(::dlsym(h, "amd_comgr_get_isa_count"));
    auto name = reinterpret_cast<int (*)(size_t, const char**)>(::dlsym(h, "amd_comgr_get_isa_name"));
    auto get_version = reinterpret_cast<void (*)(size_t*, size_t*)>(::dlsym(h, "amd_comgr_get_version"));
    size_t n = 0;
    if (!count || !name || count(&n) != 0) return c;
    if (get_version) {
      size_t major = 0, minor = 0;
      get_version(&major, &minor);
      c.version = "comgr " + std::to_string(major) + "." + std::to_string(minor);
    }
    for (size_t i = 0; i < n; ++i) {
      const char* isa = nullptr;
      if (name(i, &isa) != 0 || !isa) continue;
      // "amdgcn-amd-amdhsa--gfx90a" (newer comgr also lists ":xnack-" variants): the processor.
      std::string s = isa;
      if (const size_t dash = s.rfind("--"); dash != std::string::npos) s = s.substr(dash + 2);
      s = s.substr(0, s.find(':'));
      if (!s.empty() && (c.processors.empty() || c.processors.back() != s)) c.processors.push_back(s);
    }
    return c;
  }();
  if (version) *version = comgr.version;
  return comgr.processors;
}

}  // namespace spmvjit::hip
