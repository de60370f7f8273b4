// HIP backend: hipRTC (or clang 19 for processors hipRTC does not know: hip_compiler.cpp) compiles
// a code object for the exact gfx target (processor and feature flags), the HIP module API loads
// and launches it. The HIP libraries are dlopen'ed (runtime/hip/hip_api.cpp), so no AMD GPU means
// NO_DEVICE, not a failure to start; compiling needs no GPU at all.
#include "runtime/hip/hip_backend.hpp"

#include <algorithm>
#include <cctype>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <type_traits>

#include "core/log.hpp"
#include "runtime/block_cache.hpp"
#include "runtime/hip/code_object.hpp"
#include "runtime/hip/hip_api.hpp"
#include "runtime/hip/hip_compiler.hpp"

namespace spmvjit {

// ---- target strings ----

std::string HipTarget::str() const {
  std::string s = processor;
  for (const std::string& f : features) s += ":" + f;
  return s;
}

HipTarget parse_hip_target(const std::string& target) {
  auto bad = [&](const std::string& why) -> HipTarget {
    fail(SPMV_STATUS_INVALID_VALUE, "hip: malformed target '" + target + "': " + why +
                                        " (expected gfxNNN[:sramecc+|-][:xnack+|-], e.g. gfx90a, "
                                        "gfx90a:sramecc+:xnack-, gfx1030; or sm_NN on HIP's NVIDIA "
                                        "platform)");
  };
  HipTarget t;
  // HIP's NVIDIA platform: an NVIDIA architecture, warps of 32, no feature settings.
  if (target.compare(0, 3, "sm_") == 0) {
    const std::string digits = target.substr(3);
    if (digits.size() < 2 || digits.size() > 3 || digits[0] == '0' ||
        !std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; }))
      return bad("an NVIDIA architecture is sm_ and 2 or 3 digits");
    t.processor = target;
    t.wavefront = 32;
    return t;
  }
  const size_t colon = target.find(':');
  t.processor = target.substr(0, colon);
  // "gfx" and 3 or 4 lower-case hex digits, the first a decimal one (gfx900, gfx90a, gfx1030).
  const std::string& p = t.processor;
  const size_t digits = p.size() - std::min<size_t>(p.size(), 3);
  if (p.compare(0, 3, "gfx") != 0 || digits < 3 || digits > 4 || p[3] < '1' || p[3] > '9')
    return bad("the processor must be gfx and 3 or 4 digits");
  for (size_t i = 3; i < p.size(); ++i)
    if (!std::isdigit(static_cast<unsigned char>(p[i])) && (p[i] < 'a' || p[i] > 'f'))
      return bad("the processor must be gfx and 3 or 4 digits");
  const int major = digits == 4 ? (p[3] - '0') * 10 + (p[4] - '0') : p[3] - '0';
  // The default wavefront of each generation (hipRTC compiles RDNA for wave32).
  t.wavefront = major >= 10 ? 32 : 64;
  for (size_t pos = colon; pos != std::string::npos;) {
    const size_t next = target.find(':', pos + 1);
    const std::string f =
        target.substr(pos + 1, next == std::string::npos ? std::string::npos : next - pos - 1);
    pos = next;
    const std::string name = f.empty() ? f : f.substr(0, f.size() - 1);
    if (f.size() < 2 || (f.back() != '+' && f.back() != '-') || (name != "sramecc" && name != "xnack"))
      return bad("unknown feature '" + f + "' (sramecc+, sramecc-, xnack+ or xnack-)");
    for (const std::string& g : t.features)
      if (g.compare(0, g.size() - 1, name) == 0) return bad("feature " + name + " given twice");
    // LLVM's AMDGPUUsage processor table; hipRTC aborts the process on a feature it rejects.
    static const char* const kXnack[] = {"gfx801", "gfx810", "gfx900",  "gfx902",  "gfx904",  "gfx906",
                                         "gfx908", "gfx909", "gfx90a",  "gfx90c",  "gfx940",  "gfx941",
                                         "gfx942", "gfx950", "gfx1010", "gfx1011", "gfx1012", "gfx1013"};
    static const char* const kSramecc[] = {"gfx906", "gfx908", "gfx90a", "gfx940",
                                           "gfx941", "gfx942", "gfx950"};
    const bool has = name == "xnack"
                         ? std::find(std::begin(kXnack), std::end(kXnack), p) != std::end(kXnack)
                         : std::find(std::begin(kSramecc), std::end(kSramecc), p) != std::end(kSramecc);
    if (!has) return bad(p + " has no " + name + " setting");
    t.features.push_back(f);
  }
  std::sort(t.features.begin(), t.features.end());
  return t;
}

HipLaunchArgs::HipLaunchArgs(const SpmvArgs& args) {
  std::memcpy(bytes, &args, sizeof(SpmvArgs));
  config[0] = HIP_LAUNCH_PARAM_BUFFER_POINTER;
  config[1] = bytes;
  config[2] = HIP_LAUNCH_PARAM_BUFFER_SIZE;
  config[3] = &size;
  config[4] = HIP_LAUNCH_PARAM_END;
}

namespace {

using hip::check;

// hipDeviceptr_t is void* on AMD GPUs and CUdeviceptr (an integer) on HIP's NVIDIA platform.
template <class P = hipDeviceptr_t>
P device_ptr(void* p) {
  if constexpr (std::is_pointer_v<P>)
    return p;
  else
    return P(reinterpret_cast<uintptr_t>(p));
}

class HipBackend;

class HipModule final : public LoadedModule {
 public:
  HipModule(const HipBackend& b, hipModule_t m) : b_(b), module_(m) {}
  ~HipModule() override;
  void* entry(const std::string& name) const override;

 private:
  const HipBackend& b_;
  hipModule_t module_;
  mutable std::mutex mu_;
  mutable std::map<std::string, void*> functions_;
};

class HipExecutor final : public Executor {
 public:
  explicit HipExecutor(const HipBackend& b) : b_(b) {}
  ~HipExecutor() override;
  void run(void* fn, const LaunchStep& step, const SpmvArgs& args, void* stream) override;
  void begin_exclusive(void* stream) override;
  void end_exclusive(void* stream) override;

 private:
  const HipBackend& b_;
  hipEvent_t done_ = nullptr;  // recorded after the last bracketed call (created by the first)
  void* last_stream_ = nullptr;
};

// Shared by the device backend and the compiler-only one, so both produce identical cache keys.
class HipBackendBase : public Backend {
 public:
  explicit HipBackendBase(const HipTarget& t, HipCompilerKind which = HipCompilerKind::automatic)
      : compiler_(make_hip_compiler(t, which)) {
    info_.backend = BackendKind::hip;
    info_.target = t.str();
    info_.warp_size = t.wavefront;
    info_.threads = 1;
    info_.simd_bytes = 0;
    info_.shared_bytes = 64 << 10;  // LDS per work-group on every gfx9-gfx11 processor
  }
  BackendKind kind() const override { return BackendKind::hip; }
  const TargetInfo& target() const override { return info_; }
  std::string compiler_version() const override { return compiler_->version(); }
  std::vector<std::string> compile_options(const KernelSpec&) const override { return compiler_->options(); }
  std::vector<char> compile(const KernelSource& src) override { return compiler_->compile(src); }
  bool is_host() const override { return false; }

 protected:
  std::unique_ptr<HipCompiler> compiler_;
  TargetInfo info_;
};

size_t memory_cache_limit() {
  size_t mb = 2048;
  if (const char* e = std::getenv("SPMVJIT_HIP_MEMORY_CACHE_MB"); e && *e) {
    char* end = nullptr;
    const unsigned long long v = std::strtoull(e, &end, 10);
    if (*end || e[0] == '-' || v > (1ull << 30))
      log_warn("SPMVJIT_HIP_MEMORY_CACHE_MB='" + std::string(e) + "' is not a size in MB; using 2048");
    else
      mb = size_t(v);
  }
  return mb << 20;
}

class HipBackend final : public HipBackendBase {
 public:
  HipBackend(const hip::RuntimeApi* api, int device, const HipTarget& t, const hipDeviceProp_t& prop)
      : HipBackendBase(t), api_(api), device_(device) {
    info_.warp_size = prop.warpSize > 0 ? prop.warpSize : t.wavefront;
    info_.sm_count = prop.multiProcessorCount;
    if (prop.sharedMemPerBlock) info_.shared_bytes = int(std::min<size_t>(prop.sharedMemPerBlock, INT_MAX));
    // Nominal DDR bandwidth; the benchmark measures the real copy bandwidth.
    info_.bandwidth_gbs = 2.0 * prop.memoryClockRate * 1e3 * (prop.memoryBusWidth / 8.0) * 1e-9;
    log_info("hip: device " + std::to_string(device) + " " + prop.name + " " + info_.target + ", " +
             std::to_string(info_.sm_count) + " CUs, wavefront " + std::to_string(info_.warp_size) + ", " +
             std::to_string(info_.shared_bytes >> 10) + " KiB LDS, " + compiler_->version());
  }

  // Every entry point may run on a thread whose current device is another one.
  void make_current() const {
    if (!try_make_current()) check(api_->hipSetDevice(device_), "hipSetDevice");
  }
  // For destructors: never throws; false when the device could not be made current.
  bool try_make_current() const noexcept {
    int cur = -1;
#if defined(SPMVJIT_HIP_NVIDIA)
    // On HIP's NVIDIA platform the module API is the CUDA driver's, which needs a context
    // current on this thread; the runtime's device number says 0 on a thread that has none
    // (a library thread, a background compile), and hipSetDevice makes the primary one current.
    hipCtx_t context = nullptr;
    if (hipCtxGetCurrent(&context) != hipSuccess || !context)
      return api_->hipSetDevice(device_) == hipSuccess;
#endif
    if (api_->hipGetDevice(&cur) == hipSuccess && cur == device_) return true;
    return api_->hipSetDevice(device_) == hipSuccess;
  }
  const hip::RuntimeApi& api() const { return *api_; }

  std::shared_ptr<LoadedModule> load(const std::vector<char>& binary, const std::string& key) override {
    // COMPILE_FAILED: the cache drops the entry and recompiles.
    std::string why;
    if (hip::kNvidiaPlatform) {
      if (!hip::is_ptx_module(binary, target().target, &why))
        fail(SPMV_STATUS_COMPILE_FAILED, "hip: kernel " + key + " is no PTX module: " + why);
    } else {
      hip::CodeObject co;
      if (!hip::parse_code_object(binary, &co, &why))
        fail(SPMV_STATUS_COMPILE_FAILED, "hip: kernel " + key + " is no AMDGPU code object: " + why);
    }
    make_current();
    hipModule_t m = nullptr;
    const hipError_t r = api_->hipModuleLoadData(&m, binary.data());
    if (r != hipSuccess)
      fail(SPMV_STATUS_COMPILE_FAILED, "hipModuleLoadData rejected kernel " + key + " (" +
                                           compiler_->version() + "): " + hip::error_text(r));
    return std::make_shared<HipModule>(*this, m);
  }
  std::unique_ptr<Executor> make_executor(int) override { return std::make_unique<HipExecutor>(*this); }

  void* alloc(size_t bytes) override {
    if (!bytes) return nullptr;
    make_current();
    void* p = blocks_.alloc(bytes);
    if (!p)
      fail(SPMV_STATUS_OUT_OF_MEMORY, "hip: cannot allocate " + std::to_string(bytes) + " bytes on device " +
                                          std::to_string(device_) + ": " +
                                          hip::error_text(hipErrorOutOfMemory));
    return p;
  }
  void free(void* p) override {
    if (!p) return;
    make_current();
    blocks_.free(p);
  }
  void upload(void* dst, const void* src, size_t bytes) override {
    if (!bytes) return;
    make_current();
    check(api_->hipMemcpyHtoD(device_ptr(dst), const_cast<void*>(src), bytes), "hipMemcpyHtoD");
    // As on CUDA: a pageable copy may return before its DMA lands; non-blocking streams would
    // not wait for it.
    check(api_->hipStreamSynchronize(nullptr), "hipStreamSynchronize");
  }
  void download(void* dst, const void* src, size_t bytes) override {
    if (!bytes) return;
    make_current();
    check(api_->hipMemcpyDtoH(dst, device_ptr(const_cast<void*>(src)), bytes), "hipMemcpyDtoH");
  }
  void synchronize(void* stream) override {
    make_current();
    check(api_->hipStreamSynchronize(static_cast<hipStream_t>(stream)), "hipStreamSynchronize");
  }
  void synchronize_device() override {
    make_current();
    check(api_->hipDeviceSynchronize(), "hipDeviceSynchronize");
  }

 private:
  BlockCache::Driver driver() {
    BlockCache::Driver d;
    d.alloc = [this](size_t bytes) -> void* {
      void* p = nullptr;
      const hipError_t r = api_->hipMalloc(&p, bytes);
      if (r == hipErrorOutOfMemory) return nullptr;
      check(r, ("hipMalloc of " + std::to_string(bytes) + " bytes").c_str());
      return p;
    };
    d.free = [this](void* p) {
      const hipError_t r = api_->hipFree(p);
      if (r != hipSuccess) log_warn("hip: hipFree failed: " + hip::error_text(r));
    };
    return d;
  }

  const hip::RuntimeApi* api_;
  int device_;
  BlockCache blocks_{driver(), memory_cache_limit()};
};

HipModule::~HipModule() {
  // May run at exit after the runtime shut down: the error is irrelevant then.
  b_.try_make_current();
  (void)b_.api().hipModuleUnload(module_);
}

void* HipModule::entry(const std::string& name) const {
  std::lock_guard lock(mu_);
  if (auto it = functions_.find(name); it != functions_.end()) return it->second;
  hipFunction_t f = nullptr;
  b_.make_current();
  const hipError_t r = b_.api().hipModuleGetFunction(&f, module_, name.c_str());
  if (r != hipSuccess)
    fail(SPMV_STATUS_INTERNAL_ERROR, "HIP module has no entry " + name + ": " + hip::error_text(r));
  functions_[name] = f;
  return reinterpret_cast<void*>(f);
}

void HipExecutor::run(void* fn, const LaunchStep& step, const SpmvArgs& args, void* stream) {
  if (step.grid <= 0) return;  // empty matrix: nothing to launch
  // AMD GPUs count work-items, not blocks, in 32 bits per dimension.
  if (step.grid > INT_MAX || uint64_t(step.grid) * uint64_t(std::max(step.block, 1)) > UINT32_MAX)
    fail(SPMV_STATUS_SIZE_OVERFLOW, "hip: launch of " + std::to_string(step.grid) + " blocks of " +
                                        std::to_string(step.block) +
                                        " exceeds the grid limit (2^32 work-items)");
  b_.make_current();
  // LaunchStep::early (programmatic dependent launch) has no HIP counterpart: stream order.
  HipLaunchArgs packed(args);
  const hipError_t r = b_.api().hipModuleLaunchKernel(
      static_cast<hipFunction_t>(fn), unsigned(step.grid), 1, 1, unsigned(step.block), 1, 1,
      unsigned(step.shmem), static_cast<hipStream_t>(stream), nullptr, packed.config);
  if (r != hipSuccess)
    fail(SPMV_STATUS_EXECUTION_FAILED, "hipModuleLaunchKernel(" + step.entry + ", grid " +
                                           std::to_string(step.grid) + ", block " +
                                           std::to_string(step.block) + ") failed: " + hip::error_text(r));
}

HipExecutor::~HipExecutor() {
  if (done_ && b_.try_make_current()) (void)b_.api().hipEventDestroy(done_);
}

void HipExecutor::begin_exclusive(void* stream) {
  b_.make_current();
  if (!done_) {
    check(b_.api().hipEventCreateWithFlags(&done_, hipEventDisableTiming), "hipEventCreateWithFlags");
    return;  // no earlier call to wait for
  }
  // The same stream orders calls by itself; another waits for the event (a device-side wait).
  if (stream != last_stream_)
    check(b_.api().hipStreamWaitEvent(static_cast<hipStream_t>(stream), done_, 0), "hipStreamWaitEvent");
}

void HipExecutor::end_exclusive(void* stream) {
  check(b_.api().hipEventRecord(done_, static_cast<hipStream_t>(stream)), "hipEventRecord");
  last_stream_ = stream;
}

class HipCompilerOnly final : public HipBackendBase {
 public:
  explicit HipCompilerOnly(const HipTarget& t, HipCompilerKind which = HipCompilerKind::automatic)
      : HipBackendBase(t, which) {}
  std::shared_ptr<LoadedModule> load(const std::vector<char>&, const std::string&) override {
    refuse("load");
  }
  std::unique_ptr<Executor> make_executor(int) override { refuse("execute"); }
  void* alloc(size_t) override { refuse("allocate"); }
  void free(void*) override {}
  void upload(void*, const void*, size_t) override { refuse("upload"); }
  void download(void*, const void*, size_t) override { refuse("download"); }

 private:
  [[noreturn]] void refuse(const char* what) const {
    fail(SPMV_STATUS_NO_DEVICE, std::string("hip: the compiler-only backend for ") + info_.target +
                                    " cannot " + what + " (no HIP device in use)");
  }
};

struct Registry {
  std::mutex mu;
  std::map<int, std::unique_ptr<HipBackend>> devices;
  std::map<std::string, std::unique_ptr<HipCompilerOnly>> compilers;
};
Registry& registry() {
  static Registry* r = new Registry;  // never destroyed: modules may outlive static teardown
  return *r;
}

// The device's properties, or throws NO_DEVICE saying why.
hipDeviceProp_t find_device(const hip::RuntimeApi*& api, int device) {
  std::string why;
  api = hip::runtime(&why);
  if (!api) fail(SPMV_STATUS_NO_DEVICE, why);
  int count = 0;
  check(api->hipGetDeviceCount(&count), "hipGetDeviceCount", SPMV_STATUS_NO_DEVICE);
  if (device < 0 || device >= count)
    fail(SPMV_STATUS_NO_DEVICE,
         "no HIP device " + std::to_string(device) + " (found " + std::to_string(count) + ")");
  hipDeviceProp_t prop{};
  check(api->hipGetDeviceProperties(&prop, device), "hipGetDeviceProperties", SPMV_STATUS_NO_DEVICE);
  return prop;
}

}  // namespace

bool hip_runtime_loaded(std::string* why) { return hip::runtime(why) != nullptr; }
bool hip_rtc_loaded(std::string* why) { return hip::rtc(why) != nullptr; }

Backend& hip_backend(int device) {
  Registry& r = registry();
  std::lock_guard lock(r.mu);
  if (auto it = r.devices.find(device); it != r.devices.end()) return *it->second;
  const hip::RuntimeApi* api = nullptr;
  const hipDeviceProp_t prop = find_device(api, device);
  // gcnArchName is the full target ID ("gfx90a:sramecc+:xnack-"): the code objects must match it.
  // On HIP's NVIDIA platform, the compute capability.
  const HipTarget t =
      parse_hip_target(hip::kNvidiaPlatform ? "sm_" + std::to_string(prop.major * 10 + prop.minor)
                                            : std::string(prop.gcnArchName));
  check(api->hipSetDevice(device), "hipSetDevice", SPMV_STATUS_NO_DEVICE);
  auto b = std::make_unique<HipBackend>(api, device, t, prop);
  return *(r.devices[device] = std::move(b));
}

bool hip_available(int device) {
  try {
    const hip::RuntimeApi* api = nullptr;
    find_device(api, device);
    return hip::rtc() != nullptr;
  } catch (const Error&) {
    return false;
  }
}

Backend& hip_compiler(const std::string& target) {
  const HipTarget t = parse_hip_target(target);
  Registry& r = registry();
  std::lock_guard lock(r.mu);
  auto& slot = r.compilers[t.str()];
  if (!slot) slot = std::make_unique<HipCompilerOnly>(t);
  return *slot;
}

std::unique_ptr<Backend> hip_compiler_with(const std::string& target, HipCompilerKind which) {
  return std::make_unique<HipCompilerOnly>(parse_hip_target(target), which);
}

namespace {

const BackendProvider kHipProvider{BackendKind::hip, hip_available, hip_backend, hip_compiler};
SPMVJIT_REGISTER_BACKEND(kHipProvider);

}  // namespace

}  // namespace spmvjit
