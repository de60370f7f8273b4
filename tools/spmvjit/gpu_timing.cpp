// Event timing and device copy bandwidth for `spmvjit bench` on a GPU backend: CUDA (the driver
// API through the library's table) or HIP (the HIP runtime through its table), behind one small
// set of device operations, so both backends are timed by the same loop.
#include <algorithm>
#include <map>
#include <memory>
#include <vector>

#include "core/error.hpp"
#include "runtime/device_buffer.hpp"
#include "tools/spmvjit/gpu_bench.hpp"

#ifdef SPMVJIT_WITH_CUDA
#include "runtime/cuda/cuda_api.hpp"
#include "runtime/cuda/cuda_backend.hpp"
#endif
#ifdef SPMVJIT_WITH_HIP
#include "runtime/hip/hip_api.hpp"
#include "runtime/hip/hip_backend.hpp"
#endif

namespace spmvjit::cli {

const char* to_string(GpuTiming mode) {
  switch (mode) {
    case GpuTiming::warm: return "warm";
    case GpuTiming::cold: return "cold";
    case GpuTiming::synchronized: return "sync";
  }
  return "?";
}

namespace {

// What timing needs of a device, on the default stream.
class GpuOps {
 public:
  virtual ~GpuOps() = default;
  virtual Backend& backend() = 0;
  virtual std::string device_name() = 0;
  virtual size_t l2_bytes() = 0;
  virtual void memset8(void* p, unsigned char v, size_t bytes) = 0;
  virtual void copy(void* dst, const void* src, size_t bytes) = 0;
  virtual void* event_create() = 0;
  virtual void event_record(void* e) = 0;
  virtual void event_synchronize(void* e) = 0;
  virtual float elapsed_ms(void* from, void* to) = 0;
  virtual void event_destroy(void* e) = 0;
};

#ifdef SPMVJIT_WITH_CUDA
class CudaOps final : public GpuOps {
 public:
  explicit CudaOps(int device) : b_(cuda_backend(device)), api_(*cuda::driver()) {
    cuda::check(api_.cuDeviceGet(&dev_, device), "cuDeviceGet");
  }
  Backend& backend() override { return b_; }
  std::string device_name() override {
    char name[256] = {};
    api_.cuDeviceGetName(name, sizeof name, dev_);
    return name;
  }
  size_t l2_bytes() override {
    int l2 = 0;
    cuda::check(api_.cuDeviceGetAttribute(&l2, CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, dev_),
                "cuDeviceGetAttribute");
    return size_t(std::max(l2, 0));
  }
  void memset8(void* p, unsigned char v, size_t bytes) override {
    cuda::check(api_.cuMemsetD8(reinterpret_cast<CUdeviceptr>(p), v, bytes), "cuMemsetD8");
  }
  void copy(void* dst, const void* src, size_t bytes) override {
    cuda::check(
        api_.cuMemcpyDtoD(reinterpret_cast<CUdeviceptr>(dst), reinterpret_cast<CUdeviceptr>(src), bytes),
        "cuMemcpyDtoD");
  }
  void* event_create() override {
    CUevent e = nullptr;
    cuda::check(api_.cuEventCreate(&e, CU_EVENT_DEFAULT), "cuEventCreate");
    return e;
  }
  void event_record(void* e) override {
    cuda::check(api_.cuEventRecord(CUevent(e), nullptr), "cuEventRecord");
  }
  void event_synchronize(void* e) override {
    cuda::check(api_.cuEventSynchronize(CUevent(e)), "cuEventSynchronize");
  }
  float elapsed_ms(void* from, void* to) override {
    float ms = 0;
    cuda::check(api_.cuEventElapsedTime(&ms, CUevent(from), CUevent(to)), "cuEventElapsedTime");
    return ms;
  }
  void event_destroy(void* e) override { api_.cuEventDestroy(CUevent(e)); }

 private:
  Backend& b_;
  const cuda::DriverApi& api_;
  CUdevice dev_ = 0;
};
#endif

#ifdef SPMVJIT_WITH_HIP
class HipOps final : public GpuOps {
 public:
  explicit HipOps(int device) : b_(hip_backend(device)), api_(*hip::runtime()), device_(device) {}
  Backend& backend() override { return b_; }
  std::string device_name() override {
    hipDeviceProp_t prop{};
    hip::check(api_.hipGetDeviceProperties(&prop, device_), "hipGetDeviceProperties");
    return prop.name;
  }
  size_t l2_bytes() override {
    int l2 = 0;
    hip::check(api_.hipDeviceGetAttribute(&l2, hipDeviceAttributeL2CacheSize, device_),
               "hipDeviceGetAttribute");
    return size_t(std::max(l2, 0));
  }
  void memset8(void* p, unsigned char v, size_t bytes) override {
    hip::check(api_.hipMemset(p, v, bytes), "hipMemset");
  }
  void copy(void* dst, const void* src, size_t bytes) override {
    hip::check(api_.hipMemcpy(dst, src, bytes, hipMemcpyDeviceToDevice), "hipMemcpy");
  }
  void* event_create() override {
    hipEvent_t e = nullptr;
    hip::check(api_.hipEventCreateWithFlags(&e, hipEventDefault), "hipEventCreateWithFlags");
    return e;
  }
  void event_record(void* e) override {
    hip::check(api_.hipEventRecord(hipEvent_t(e), nullptr), "hipEventRecord");
  }
  void event_synchronize(void* e) override {
    hip::check(api_.hipEventSynchronize(hipEvent_t(e)), "hipEventSynchronize");
  }
  float elapsed_ms(void* from, void* to) override {
    float ms = 0;
    hip::check(api_.hipEventElapsedTime(&ms, hipEvent_t(from), hipEvent_t(to)), "hipEventElapsedTime");
    return ms;
  }
  void event_destroy(void* e) override { (void)api_.hipEventDestroy(hipEvent_t(e)); }

 private:
  Backend& b_;
  const hip::RuntimeApi& api_;
  int device_;
};
#endif

// One per backend and device, for the process (never destroyed: buffers outlive static teardown).
GpuOps* ops(BackendKind kind, int device) {
  static std::map<std::pair<BackendKind, int>, GpuOps*> made;
  GpuOps*& o = made[{kind, device}];
  if (!o) {
#ifdef SPMVJIT_WITH_CUDA
    if (kind == BackendKind::cuda) o = new CudaOps(device);
#endif
#ifdef SPMVJIT_WITH_HIP
    if (kind == BackendKind::hip) o = new HipOps(device);
#endif
    if (!o)
      fail(SPMV_STATUS_UNSUPPORTED, std::string("no GPU timing for the ") + to_string(kind) + " backend");
  }
  return o;
}

// The buffer a cold interval's flush writes: twice the L2, so nothing the SpMV read before stays
// (as nvbench flushes: a memset of the L2's size or more). One per device, grown on demand and
// left to the process's end (a static buffer would be freed after the backend it came from).
void* flush_buffer(GpuOps& g, size_t* bytes) {
  static std::map<GpuOps*, std::pair<DeviceBuffer*, size_t>> buffers;
  auto& [buffer, size] = buffers[&g];
  const size_t want = std::max<size_t>(2 * std::max<size_t>(g.l2_bytes(), 1 << 20), size_t(64) << 20);
  if (size < want) {
    delete buffer;
    buffer = new DeviceBuffer(g.backend(), want);
    size = want;
  }
  *bytes = size;
  return buffer->get();
}

}  // namespace

bool gpu_timing_available(BackendKind kind, int device) {
#ifdef SPMVJIT_WITH_CUDA
  if (kind == BackendKind::cuda) return cuda_available(device);
#endif
#ifdef SPMVJIT_WITH_HIP
  if (kind == BackendKind::hip) return hip_available(device);
#endif
  return false;
}

std::string gpu_device_name(BackendKind kind, int device) {
  if (!gpu_timing_available(kind, device)) return "";
  GpuOps& g = *ops(kind, device);
  const TargetInfo& t = g.backend().target();
  return g.device_name() + " (" + t.target + ", " + std::to_string(t.sm_count) +
         (kind == BackendKind::hip ? " CUs, " : " SMs, ") + g.backend().compiler_version() + ")";
}

double gpu_median_seconds(BackendKind kind, int device, const std::function<void()>& fn, int min_iters,
                          double min_seconds, GpuTiming mode) {
  GpuOps& g = *ops(kind, device);
  g.backend().synchronize(nullptr);
  size_t flush_bytes = 0;
  void* const flush = mode == GpuTiming::cold ? flush_buffer(g, &flush_bytes) : nullptr;
  // Warm: one event between each pair of back-to-back calls. Cold and synchronized: a start and
  // an end event per call, with the flush (cold) or a host synchronization (synchronized)
  // outside the interval.
  const bool paired = mode != GpuTiming::warm;
  constexpr int kBatch = 50;
  std::vector<void*> ev(paired ? 2 * kBatch : kBatch + 1);
  for (auto& e : ev) e = g.event_create();
  std::vector<double> t;
  double total = 0;
  for (int round = 0; round < 2000; ++round) {
    const int count = int(t.size()) < min_iters ? std::min(kBatch, min_iters - int(t.size())) : kBatch;
    if (!paired) g.event_record(ev[0]);
    for (int i = 0; i < count; ++i) {
      const size_t s = paired ? 2 * size_t(i) : size_t(i);
      if (mode == GpuTiming::cold) g.memset8(flush, (unsigned char)(round + i), flush_bytes);
      if (paired) g.event_record(ev[s]);
      fn();
      g.event_record(ev[s + 1]);
      if (mode == GpuTiming::synchronized) g.event_synchronize(ev[s + 1]);
    }
    g.event_synchronize(ev[paired ? 2 * size_t(count) - 1 : size_t(count)]);
    for (int i = 0; i < count; ++i) {
      const size_t s = paired ? 2 * size_t(i) : size_t(i);
      const double sec = g.elapsed_ms(ev[s], ev[s + 1]) * 1e-3;
      t.push_back(sec);
      total += sec;
    }
    if (int(t.size()) >= min_iters && total >= min_seconds) break;
  }
  for (auto& e : ev) g.event_destroy(e);
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

double gpu_copy_bandwidth_gbs(BackendKind kind, int device, size_t bytes) {
  if (!gpu_timing_available(kind, device)) return 0;
  GpuOps& g = *ops(kind, device);
  const DeviceBuffer src(g.backend(), bytes), dst(g.backend(), bytes);
  // Nonzero bytes: never time on memory nothing wrote.
  g.memset8(src.get(), 0x5a, bytes);
  const double s = gpu_median_seconds(
      kind, device, [&] { g.copy(dst.get(), src.get(), bytes); }, 10, 0.05);
  return s > 0 ? 2.0 * double(bytes) / s * 1e-9 : 0;
}

}  // namespace spmvjit::cli
