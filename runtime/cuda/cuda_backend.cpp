// CUDA backend: NVRTC compiles a cubin for the exact sm_XY, the driver API loads and launches it.
// Both libraries are dlopen'ed (runtime/cuda/cuda_api.cpp), so no device means NO_DEVICE, not a
// failure to start.
#include "runtime/cuda/cuda_backend.hpp"

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <sstream>

#include "core/log.hpp"
#include "core/parallel.hpp"
#include "runtime/block_cache.hpp"
#include "runtime/cuda/cuda_api.hpp"

namespace spmvjit {
namespace {

using cuda::check;

// NVRTC for one architecture: a cubin for sm_XY, or PTX for the newest virtual architecture
// NVRTC knows when the device is newer than this NVRTC (the driver JIT-compiles it at load).
class NvrtcCompiler {
 public:
  explicit NvrtcCompiler(int sm) : sm_(sm) {
    std::string why;
    api_ = cuda::nvrtc(&why);
    if (!api_) fail(SPMV_STATUS_UNSUPPORTED, "cuda: " + why);
    int major = 0, minor = 0;
    api_->nvrtcVersion(&major, &minor);
    int n = 0;
    api_->nvrtcGetNumSupportedArchs(&n);
    std::vector<int> archs(size_t(std::max(n, 0)));
    if (n > 0) api_->nvrtcGetSupportedArchs(archs.data());
    const bool known = std::find(archs.begin(), archs.end(), sm) != archs.end();
    int virt = sm;
    if (!known) {
      // Newest architecture not above the device's; PTX of it runs on the newer device.
      virt = -1;
      for (int a : archs)
        if (a <= sm) virt = std::max(virt, a);
      if (virt < 0)
        fail(SPMV_STATUS_UNSUPPORTED, "cuda: NVRTC " + std::to_string(major) + "." + std::to_string(minor) +
                                          " cannot compile for sm_" + std::to_string(sm) +
                                          " (too old for this NVRTC)");
    }
    ptx_ = !known;
    arch_option_ = ptx_ ? "--gpu-architecture=compute_" + std::to_string(virt)
                        : "--gpu-architecture=sm_" + std::to_string(sm);
    version_ = "nvrtc " + std::to_string(major) + "." + std::to_string(minor) +
               (ptx_ ? " ptx compute_" + std::to_string(virt) + " for sm_" : " cubin sm_") + std::to_string(sm);
  }

  const std::string& version() const { return version_; }

  std::vector<std::string> options() const {
    // No fast-math: NaN/Inf must propagate like the reference; FMA contraction stays on (the
    // reference tolerance allows it, and every GPU BLAS does it).
    std::vector<std::string> o = {arch_option_, "-std=c++17", "--restrict"};
    // For measuring variants (part of every cache key, as all options are): whitespace-separated
    // NVRTC options appended, e.g. -DSPMVJIT_LDG_PLAIN.
    if (const char* extra = std::getenv("SPMVJIT_CUDA_EXTRA_OPTIONS")) {
      std::istringstream in(extra);
      for (std::string token; in >> token;) o.push_back(token);
    }
    return o;
  }

  std::vector<char> compile(const KernelSource& src) const {
    // NVRTC is thread-safe for distinct programs: concurrent plans compile in parallel.
    nvrtcProgram prog = nullptr;
    nvrtcResult r = api_->nvrtcCreateProgram(&prog, src.text.c_str(), src.name.c_str(), 0, nullptr, nullptr);
    if (r != NVRTC_SUCCESS)
      fail(SPMV_STATUS_COMPILE_FAILED, "NVRTC cannot create a program for " + src.name + ": " +
                                           api_->nvrtcGetErrorString(r));
    struct Guard {
      const cuda::NvrtcApi* api;
      nvrtcProgram* p;
      ~Guard() { api->nvrtcDestroyProgram(p); }
    } guard{api_, &prog};
    std::vector<const char*> opts;
    for (const auto& o : src.options) opts.push_back(o.c_str());
    r = api_->nvrtcCompileProgram(prog, int(opts.size()), opts.data());
    size_t log_size = 0;
    api_->nvrtcGetProgramLogSize(prog, &log_size);
    std::string log(log_size, '\0');
    if (log_size) api_->nvrtcGetProgramLog(prog, log.data());
    while (!log.empty() && (log.back() == '\0' || log.back() == '\n')) log.pop_back();
    if (r != NVRTC_SUCCESS)
      fail(SPMV_STATUS_COMPILE_FAILED, "NVRTC failed to compile " + src.name + " (" + version_ + ", " +
                                           api_->nvrtcGetErrorString(r) + "):\n" + log);
    size_t size = 0;
    std::vector<char> binary;
    if (ptx_) {
      api_->nvrtcGetPTXSize(prog, &size);  // includes the terminating NUL the loader needs
      binary.resize(size);
      r = api_->nvrtcGetPTX(prog, binary.data());
    } else {
      api_->nvrtcGetCUBINSize(prog, &size);
      binary.resize(size);
      r = api_->nvrtcGetCUBIN(prog, binary.data());
    }
    if (r != NVRTC_SUCCESS || binary.empty())
      fail(SPMV_STATUS_COMPILE_FAILED, "NVRTC produced no binary for " + src.name + ":\n" + log);
    return binary;
  }

 private:
  int sm_;
  const cuda::NvrtcApi* api_ = nullptr;
  bool ptx_ = false;
  std::string arch_option_, version_;
};

class CudaModule final : public LoadedModule {
 public:
  CudaModule(const cuda::DriverApi* api, CUcontext ctx, CUmodule m) : api_(api), ctx_(ctx), module_(m) {}
  ~CudaModule() override {
    // May run at exit after the driver shut down: the error is irrelevant then.
    api_->cuCtxSetCurrent(ctx_);
    api_->cuModuleUnload(module_);
  }
  void* entry(const std::string& name) const override {
    std::lock_guard lock(mu_);
    if (auto it = functions_.find(name); it != functions_.end()) return it->second;
    CUfunction f = nullptr;
    api_->cuCtxSetCurrent(ctx_);
    const CUresult r = api_->cuModuleGetFunction(&f, module_, name.c_str());
    if (r != CUDA_SUCCESS)
      fail(SPMV_STATUS_INTERNAL_ERROR, "CUDA module has no entry " + name + ": " + cuda::driver_error(r));
    functions_[name] = f;
    return reinterpret_cast<void*>(f);
  }

 private:
  const cuda::DriverApi* api_;
  CUcontext ctx_;
  CUmodule module_;
  mutable std::mutex mu_;
  mutable std::map<std::string, void*> functions_;
};

class CudaBackend;

class CudaExecutor final : public Executor {
 public:
  explicit CudaExecutor(const CudaBackend& b) : b_(b) {}
  ~CudaExecutor() override;
  void run(void* fn, const LaunchStep& step, const SpmvArgs& args, void* stream) override;
  void begin_exclusive(void* stream) override;
  void end_exclusive(void* stream) override;

 private:
  const CudaBackend& b_;
  CUevent done_ = nullptr;  // recorded after the last bracketed call (created by the first)
  void* last_stream_ = nullptr;
};

// Shared by the device backend and the compiler-only one, so both produce identical cache keys.
class CudaBackendBase : public Backend {
 public:
  explicit CudaBackendBase(int sm) : compiler_(sm) {
    info_.backend = BackendKind::cuda;
    info_.target = "sm_" + std::to_string(sm);
    info_.warp_size = 32;
    info_.threads = 1;
    info_.simd_bytes = 0;
    info_.shared_bytes = 48 << 10;  // static shared memory per block on every sm_XY
  }
  BackendKind kind() const override { return BackendKind::cuda; }
  const TargetInfo& target() const override { return info_; }
  std::string compiler_version() const override { return compiler_.version(); }
  std::vector<std::string> compile_options(const KernelSpec&) const override { return compiler_.options(); }
  std::vector<char> compile(const KernelSource& src) override { return compiler_.compile(src); }
  bool is_host() const override { return false; }

 protected:
  NvrtcCompiler compiler_;
  TargetInfo info_;
};

class CudaBackend final : public CudaBackendBase {
 public:
  CudaBackend(const cuda::DriverApi* api, int device, CUdevice dev, int sm)
      : CudaBackendBase(sm), api_(api), device_(device), dev_(dev) {
    check(api_->cuDevicePrimaryCtxRetain(&ctx_, dev_), "cuDevicePrimaryCtxRetain", SPMV_STATUS_NO_DEVICE);
    int v = 0;
    api_->cuDeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_WARP_SIZE, dev_);
    info_.warp_size = v ? v : 32;
    api_->cuDeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev_);
    info_.sm_count = v;
    v = 0;
    api_->cuDeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK, dev_);
    if (v > 0) info_.shared_bytes = v;
    int clock_khz = 0, bus_bits = 0;
    api_->cuDeviceGetAttribute(&clock_khz, CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE, dev_);
    api_->cuDeviceGetAttribute(&bus_bits, CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH, dev_);
    // Nominal DDR bandwidth; the benchmark measures the real copy bandwidth.
    info_.bandwidth_gbs = 2.0 * clock_khz * 1e3 * (bus_bits / 8.0) * 1e-9;
    // Programmatic dependent launch: sm_90 and later, a driver with cuLaunchKernelEx, and not
    // turned off with SPMVJIT_CUDA_PDL=0 (for measuring).
    int major = 0;
    api_->cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev_);
    const char* pdl = std::getenv("SPMVJIT_CUDA_PDL");
    pdl_ = major >= 9 && api_->cuLaunchKernelEx && !(pdl && std::string(pdl) == "0");
    char name[256] = {};
    api_->cuDeviceGetName(name, sizeof name, dev_);
    log_info("cuda: device " + std::to_string(device) + " " + name + " " + info_.target + ", " +
             std::to_string(info_.sm_count) + " SMs, " + compiler_.version() +
             (pdl_ ? ", early launches" : ""));
  }

  // Every entry point may run on a thread that never touched CUDA or holds another context.
  void make_current() const {
    CUcontext cur = nullptr;
    if (api_->cuCtxGetCurrent(&cur) != CUDA_SUCCESS || cur != ctx_)
      check(api_->cuCtxSetCurrent(ctx_), "cuCtxSetCurrent");
  }
  const cuda::DriverApi& api() const { return *api_; }
  bool pdl() const { return pdl_; }

  std::shared_ptr<LoadedModule> load(const std::vector<char>& binary, const std::string& key) override {
    make_current();
    CUmodule m = nullptr;
    const CUresult r = api_->cuModuleLoadData(&m, binary.data());
    if (r != CUDA_SUCCESS)  // COMPILE_FAILED: the cache drops the entry and recompiles
      fail(SPMV_STATUS_COMPILE_FAILED, "cuModuleLoadData rejected kernel " + key + " (" +
                                           compiler_.version() + "): " + cuda::driver_error(r));
    return std::make_shared<CudaModule>(api_, ctx_, m);
  }
  std::unique_ptr<Executor> make_executor(int) override { return std::make_unique<CudaExecutor>(*this); }

  void* alloc(size_t bytes) override {
    if (!bytes) return nullptr;
    make_current();
    void* p = blocks_.alloc(bytes);
    if (!p)
      fail(SPMV_STATUS_OUT_OF_MEMORY, "cuda: cannot allocate " + std::to_string(bytes) + " bytes on device " +
                                          std::to_string(device_) + ": " +
                                          cuda::driver_error(CUDA_ERROR_OUT_OF_MEMORY));
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
    if (bytes >= kStageMin && staging()) return staged_upload(dst, src, bytes);
    check(api_->cuMemcpyHtoD(reinterpret_cast<CUdeviceptr>(dst), src, bytes), "cuMemcpyHtoD");
    // From pageable memory the copy may return before its DMA lands, and a kernel on a
    // non-blocking stream is not ordered after it: wait for it (a few microseconds). Seen as a
    // stale x in the 8-threads-on-8-streams test on an H100.
    check(api_->cuStreamSynchronize(nullptr), "cuStreamSynchronize");
  }
  void download(void* dst, const void* src, size_t bytes) override {
    if (!bytes) return;
    make_current();
    if (bytes <= kPinnedDownload) {
      std::lock_guard lock(pinned_mu_);
      if (pinned_download()) {
        check(api_->cuMemcpyDtoH(pinned_, reinterpret_cast<CUdeviceptr>(src), bytes), "cuMemcpyDtoH");
        std::memcpy(dst, pinned_, bytes);
        return;
      }
    }
    check(api_->cuMemcpyDtoH(dst, reinterpret_cast<CUdeviceptr>(src), bytes), "cuMemcpyDtoH");
  }
  void synchronize(void* stream) override {
    make_current();
    check(api_->cuStreamSynchronize(static_cast<CUstream>(stream)), "cuStreamSynchronize");
  }
  void synchronize_device() override {
    make_current();
    check(api_->cuCtxSynchronize(), "cuCtxSynchronize");
  }

 private:
  // Large uploads (plan arrays) go through two pinned staging buffers, allocated once per device:
  // the host copies chunk i + 1 (on the plan threads) while the DMA engine moves chunk i, instead
  // of the driver's pageable path. SPMVJIT_CUDA_STAGING=0 turns this off (for measuring).
  static constexpr size_t kStageMin = size_t(4) << 20, kStageChunk = size_t(32) << 20;
  bool staging() {
    std::lock_guard lock(stage_mu_);
    if (stage_tried_) return stage_[0] != nullptr;
    stage_tried_ = true;
    const char* env = std::getenv("SPMVJIT_CUDA_STAGING");
    if (env && std::string(env) == "0") return false;
    for (void*& b : stage_)
      if (api_->cuMemHostAlloc(&b, kStageChunk, 0) != CUDA_SUCCESS) b = nullptr;
    if (!stage_[0] || !stage_[1]) {
      for (void*& b : stage_)
        if (b) api_->cuMemFreeHost(b), b = nullptr;
      log_info("cuda: no pinned staging buffers; uploads take the pageable path");
    }
    return stage_[0] != nullptr;
  }
  // Downloads of up to kPinnedDownload bytes (a device plan's statistics and row sample) land in
  // one pinned buffer, allocated by the first, and are copied out: through the driver's pageable
  // path 123 KB took 35 us on an H200. 4 MB: a sample of long rows copies back two arrays of
  // 1 MB or so (dense:2000's), which a 1 MB buffer sent the pageable way. SPMVJIT_CUDA_STAGING=0
  // turns this off too.
  static constexpr size_t kPinnedDownload = size_t(4) << 20;
  bool pinned_download() {  // under pinned_mu_
    if (pinned_tried_) return pinned_ != nullptr;
    pinned_tried_ = true;
    const char* env = std::getenv("SPMVJIT_CUDA_STAGING");
    if (env && std::string(env) == "0") return false;
    if (api_->cuMemHostAlloc(&pinned_, kPinnedDownload, 0) != CUDA_SUCCESS) pinned_ = nullptr;
    return pinned_ != nullptr;
  }
  void staged_upload(void* dst, const void* src, size_t bytes) {
    std::lock_guard lock(upload_mu_);  // one plan upload at a time owns the two buffers
    CUevent done[2] = {};
    for (CUevent& e : done) check(api_->cuEventCreate(&e, CU_EVENT_DISABLE_TIMING), "cuEventCreate");
    struct Events {
      const cuda::DriverApi* api;
      CUevent* e;
      ~Events() { for (int i = 0; i < 2; ++i) if (e[i]) api->cuEventDestroy(e[i]); }
    } guard{api_, done};
    bool pending[2] = {false, false};
    for (size_t off = 0, i = 0; off < bytes; off += kStageChunk, ++i) {
      const size_t n = std::min(kStageChunk, bytes - off), b = i & 1;
      // The DMA that last read this buffer must be done before the host overwrites it.
      if (pending[b]) check(api_->cuEventSynchronize(done[b]), "cuEventSynchronize");
      parallel_copy(stage_[b], static_cast<const char*>(src) + off, n);
      check(api_->cuMemcpyHtoDAsync(reinterpret_cast<CUdeviceptr>(dst) + off, stage_[b], n, nullptr),
            "cuMemcpyHtoDAsync");
      check(api_->cuEventRecord(done[b], nullptr), "cuEventRecord");
      pending[b] = true;
    }
    for (int b = 0; b < 2; ++b)
      if (pending[b]) check(api_->cuEventSynchronize(done[b]), "cuEventSynchronize");
  }

  // Device memory through a BlockCache (runtime/block_cache.hpp): SPMVJIT_CUDA_MEMORY_CACHE_MB
  // bytes of freed blocks are kept for reuse (default 2048; 0 turns the cache off).
  static size_t memory_cache_limit() {
    size_t mb = 2048;
    if (const char* e = std::getenv("SPMVJIT_CUDA_MEMORY_CACHE_MB"); e && *e) {
      char* end = nullptr;
      const unsigned long long v = std::strtoull(e, &end, 10);
      if (*end || e[0] == '-' || v > (1ull << 30))
        log_warn("SPMVJIT_CUDA_MEMORY_CACHE_MB='" + std::string(e) + "' is not a size in MB; using 2048");
      else
        mb = size_t(v);
    }
    return mb << 20;
  }
  BlockCache::Driver driver() {
    BlockCache::Driver d;
    d.alloc = [this](size_t bytes) -> void* {
      CUdeviceptr p = 0;
      const CUresult r = api_->cuMemAlloc(&p, bytes);
      if (r == CUDA_ERROR_OUT_OF_MEMORY) return nullptr;
      check(r, ("cuMemAlloc of " + std::to_string(bytes) + " bytes").c_str());
      return reinterpret_cast<void*>(p);
    };
    d.free = [this](void* p) {
      const CUresult r = api_->cuMemFree(reinterpret_cast<CUdeviceptr>(p));
      if (r != CUDA_SUCCESS) log_warn("cuda: cuMemFree failed: " + cuda::driver_error(r));
    };
    return d;
  }

  const cuda::DriverApi* api_;
  int device_;
  CUdevice dev_;
  CUcontext ctx_ = nullptr;
  BlockCache blocks_{driver(), memory_cache_limit()};
  std::mutex stage_mu_, upload_mu_, pinned_mu_;
  bool stage_tried_ = false, pinned_tried_ = false;
  void* pinned_ = nullptr;  // pinned_download's; kept for the process, as stage_ is
  bool pdl_ = false;
  void* stage_[2] = {nullptr, nullptr};  // pinned; kept for the process (the backend is never freed)
};

void CudaExecutor::run(void* fn, const LaunchStep& step, const SpmvArgs& args, void* stream) {
  if (step.grid <= 0) return;  // empty matrix: nothing to launch
  if (step.grid > INT_MAX)
    fail(SPMV_STATUS_SIZE_OVERFLOW, "cuda: launch of " + std::to_string(step.grid) + " blocks exceeds the grid limit");
  b_.make_current();
  void* params[] = {const_cast<SpmvArgs*>(&args)};
  const auto f = static_cast<CUfunction>(fn);
  const auto st = static_cast<CUstream>(stream);
  CUresult r;
  if (step.early && b_.pdl()) {
    CUlaunchAttribute attr = {};
    attr.id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
    attr.value.programmaticStreamSerializationAllowed = 1;
    CUlaunchConfig cfg = {};
    cfg.gridDimX = unsigned(step.grid), cfg.gridDimY = cfg.gridDimZ = 1;
    cfg.blockDimX = unsigned(step.block), cfg.blockDimY = cfg.blockDimZ = 1;
    cfg.sharedMemBytes = unsigned(step.shmem);
    cfg.hStream = st;
    cfg.attrs = &attr;
    cfg.numAttrs = 1;
    r = b_.api().cuLaunchKernelEx(&cfg, f, params, nullptr);
  } else {
    r = b_.api().cuLaunchKernel(f, unsigned(step.grid), 1, 1, unsigned(step.block), 1, 1,
                                unsigned(step.shmem), st, params, nullptr);
  }
  if (r != CUDA_SUCCESS)
    fail(SPMV_STATUS_EXECUTION_FAILED, "cuLaunchKernel(" + step.entry + ", grid " + std::to_string(step.grid) +
                                           ", block " + std::to_string(step.block) + ") failed: " +
                                           cuda::driver_error(r));
}

CudaExecutor::~CudaExecutor() {
  if (done_) {
    b_.make_current();
    b_.api().cuEventDestroy(done_);
  }
}

void CudaExecutor::begin_exclusive(void* stream) {
  b_.make_current();
  if (!done_) {
    cuda::check(b_.api().cuEventCreate(&done_, CU_EVENT_DISABLE_TIMING), "cuEventCreate");
    return;  // no earlier call to wait for
  }
  // The same stream orders calls by itself; another waits for the event (a device-side wait).
  if (stream != last_stream_)
    cuda::check(b_.api().cuStreamWaitEvent(static_cast<CUstream>(stream), done_, 0), "cuStreamWaitEvent");
}

void CudaExecutor::end_exclusive(void* stream) {
  cuda::check(b_.api().cuEventRecord(done_, static_cast<CUstream>(stream)), "cuEventRecord");
  last_stream_ = stream;
}

class CudaCompilerOnly final : public CudaBackendBase {
 public:
  explicit CudaCompilerOnly(int sm) : CudaBackendBase(sm) {}
  std::shared_ptr<LoadedModule> load(const std::vector<char>&, const std::string&) override { refuse("load"); }
  std::unique_ptr<Executor> make_executor(int) override { refuse("execute"); }
  void* alloc(size_t) override { refuse("allocate"); }
  void free(void*) override {}
  void upload(void*, const void*, size_t) override { refuse("upload"); }
  void download(void*, const void*, size_t) override { refuse("download"); }

 private:
  [[noreturn]] void refuse(const char* what) const {
    fail(SPMV_STATUS_NO_DEVICE, std::string("cuda: the compiler-only backend for ") + info_.target +
                                    " cannot " + what + " (no CUDA device/driver in use)");
  }
};

struct Registry {
  std::mutex mu;
  std::map<int, std::unique_ptr<CudaBackend>> devices;
  std::map<int, std::unique_ptr<CudaCompilerOnly>> compilers;
};
Registry& registry() {
  static Registry* r = new Registry;  // never destroyed: modules may outlive static teardown
  return *r;
}

// The device's CUdevice and sm number, or throws NO_DEVICE saying why.
std::pair<CUdevice, int> find_device(const cuda::DriverApi*& api, int device) {
  std::string why;
  api = cuda::driver(&why);
  if (!api) fail(SPMV_STATUS_NO_DEVICE, why);
  int count = 0;
  check(api->cuDeviceGetCount(&count), "cuDeviceGetCount", SPMV_STATUS_NO_DEVICE);
  if (count == 0) fail(SPMV_STATUS_NO_DEVICE, "no CUDA device/driver: the driver reports no CUDA device");
  if (device < 0 || device >= count)
    fail(SPMV_STATUS_NO_DEVICE, "no CUDA device " + std::to_string(device) + " (found " + std::to_string(count) +
                                    ")");
  CUdevice dev = 0;
  check(api->cuDeviceGet(&dev, device), "cuDeviceGet", SPMV_STATUS_NO_DEVICE);
  int major = 0, minor = 0;
  api->cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev);
  api->cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev);
  return {dev, major * 10 + minor};
}

}  // namespace

int parse_cuda_arch(const std::string& arch) {
  if (arch.size() < 5 || arch.compare(0, 3, "sm_") != 0) return -1;
  int v = 0;
  for (size_t i = 3; i < arch.size(); ++i) {
    if (arch[i] < '0' || arch[i] > '9' || v > 10000) return -1;
    v = v * 10 + (arch[i] - '0');
  }
  return v >= 10 ? v : -1;
}

bool cuda_driver_loaded(std::string* why) { return cuda::driver(why) != nullptr; }
bool cuda_nvrtc_loaded(std::string* why) { return cuda::nvrtc(why) != nullptr; }

Backend& cuda_backend(int device) {
  Registry& r = registry();
  std::lock_guard lock(r.mu);
  if (auto it = r.devices.find(device); it != r.devices.end()) return *it->second;
  const cuda::DriverApi* api = nullptr;
  const auto [dev, sm] = find_device(api, device);
  auto b = std::make_unique<CudaBackend>(api, device, dev, sm);
  return *(r.devices[device] = std::move(b));
}

bool cuda_available(int device) {
  try {
    const cuda::DriverApi* api = nullptr;
    find_device(api, device);
    return cuda::nvrtc() != nullptr;
  } catch (const Error&) {
    return false;
  }
}

Backend& cuda_compiler(const std::string& arch) {
  const int sm = parse_cuda_arch(arch);
  if (sm < 0) fail(SPMV_STATUS_INVALID_VALUE, "cuda: malformed target '" + arch + "' (expected sm_XY, e.g. sm_90)");
  Registry& r = registry();
  std::lock_guard lock(r.mu);
  auto& slot = r.compilers[sm];
  if (!slot) slot = std::make_unique<CudaCompilerOnly>(sm);
  return *slot;
}

namespace {

const BackendProvider kCudaProvider{BackendKind::cuda, cuda_available, cuda_backend, cuda_compiler};
SPMVJIT_REGISTER_BACKEND(kCudaProvider);

}  // namespace

}  // namespace spmvjit
