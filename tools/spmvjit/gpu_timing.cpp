// CUDA-event timing and device copy bandwidth for `spmvjit bench` (driver API via the backend).
#include <algorithm>
#include <vector>

#include "tools/spmvjit/gpu_bench.hpp"

#ifdef SPMVJIT_WITH_CUDA
#include "runtime/cuda/cuda_api.hpp"
#include "runtime/cuda/cuda_backend.hpp"
#include "runtime/device_buffer.hpp"
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

#ifdef SPMVJIT_WITH_CUDA

bool gpu_timing_available(int device) { return cuda_available(device); }

std::string gpu_device_name(int device) {
  if (!cuda_available(device)) return "";
  Backend& b = cuda_backend(device);
  const cuda::DriverApi& api = *cuda::driver();
  CUdevice dev = 0;
  char name[256] = {};
  if (api.cuDeviceGet(&dev, device) == CUDA_SUCCESS) api.cuDeviceGetName(name, sizeof name, dev);
  return std::string(name) + " (" + b.target().target + ", " + std::to_string(b.target().sm_count) + " SMs, " +
         b.compiler_version() + ")";
}

namespace {

// The buffer a cold interval's flush writes: twice the L2, so nothing the SpMV read before stays
// (as nvbench flushes: a memset of the L2's size or more). One per process, grown on demand and
// left to the process's end (a static buffer would be freed after the backend it came from).
CUdeviceptr flush_buffer(int device, size_t* bytes) {
  static DeviceBuffer* buffer = nullptr;
  static size_t size = 0;
  const cuda::DriverApi& api = *cuda::driver();
  CUdevice dev = 0;
  int l2 = 0;
  cuda::check(api.cuDeviceGet(&dev, device), "cuDeviceGet");
  cuda::check(api.cuDeviceGetAttribute(&l2, CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, dev), "cuDeviceGetAttribute");
  const size_t want = std::max<size_t>(2 * size_t(std::max(l2, 1 << 20)), size_t(64) << 20);
  if (size < want) {
    delete buffer;
    buffer = new DeviceBuffer(cuda_backend(device), want);
    size = want;
  }
  *bytes = size;
  return reinterpret_cast<CUdeviceptr>(buffer->get());
}

}  // namespace

double gpu_median_seconds(int device, const std::function<void()>& fn, int min_iters, double min_seconds,
                          GpuTiming mode) {
  Backend& b = cuda_backend(device);  // makes the primary context exist
  b.synchronize(nullptr);
  const cuda::DriverApi& api = *cuda::driver();
  size_t flush_bytes = 0;
  const CUdeviceptr flush = mode == GpuTiming::cold ? flush_buffer(device, &flush_bytes) : 0;
  // Warm: one event between each pair of back-to-back calls. Cold and synchronized: a start and
  // an end event per call, with the flush (cold) or a host synchronization (synchronized)
  // outside the interval.
  const bool paired = mode != GpuTiming::warm;
  constexpr int kBatch = 50;
  std::vector<CUevent> ev(paired ? 2 * kBatch : kBatch + 1);
  for (auto& e : ev) cuda::check(api.cuEventCreate(&e, CU_EVENT_DEFAULT), "cuEventCreate");
  auto record = [&](size_t i) { cuda::check(api.cuEventRecord(ev[i], nullptr), "cuEventRecord"); };
  std::vector<double> t;
  double total = 0;
  for (int round = 0; round < 2000; ++round) {
    const int count = int(t.size()) < min_iters ? std::min(kBatch, min_iters - int(t.size())) : kBatch;
    if (!paired) record(0);
    for (int i = 0; i < count; ++i) {
      const size_t s = paired ? 2 * size_t(i) : size_t(i);
      if (mode == GpuTiming::cold)
        cuda::check(api.cuMemsetD8(flush, (unsigned char)(round + i), flush_bytes), "cuMemsetD8");
      if (paired) record(s);
      fn();
      record(s + 1);
      if (mode == GpuTiming::synchronized)
        cuda::check(api.cuEventSynchronize(ev[s + 1]), "cuEventSynchronize");
    }
    cuda::check(api.cuEventSynchronize(ev[paired ? 2 * size_t(count) - 1 : size_t(count)]),
                "cuEventSynchronize");
    for (int i = 0; i < count; ++i) {
      const size_t s = paired ? 2 * size_t(i) : size_t(i);
      float ms = 0;
      cuda::check(api.cuEventElapsedTime(&ms, ev[s], ev[s + 1]), "cuEventElapsedTime");
      t.push_back(ms * 1e-3);
      total += ms * 1e-3;
    }
    if (int(t.size()) >= min_iters && total >= min_seconds) break;
  }
  for (auto& e : ev) api.cuEventDestroy(e);
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

double gpu_copy_bandwidth_gbs(int device, size_t bytes) {
  if (!cuda_available(device)) return 0;
  Backend& b = cuda_backend(device);
  const cuda::DriverApi& api = *cuda::driver();
  const DeviceBuffer src(b, bytes), dst(b, bytes);
  const auto s_ptr = reinterpret_cast<CUdeviceptr>(src.get());
  const auto d_ptr = reinterpret_cast<CUdeviceptr>(dst.get());
  // Nonzero bytes: never time on memory nothing wrote.
  cuda::check(api.cuMemsetD8(s_ptr, 0x5a, bytes), "cuMemsetD8");
  const double s = gpu_median_seconds(
      device, [&] { cuda::check(api.cuMemcpyDtoD(d_ptr, s_ptr, bytes), "cuMemcpyDtoD"); }, 10, 0.05);
  return s > 0 ? 2.0 * double(bytes) / s * 1e-9 : 0;
}

#else

bool gpu_timing_available(int) { return false; }
std::string gpu_device_name(int) { return ""; }
double gpu_median_seconds(int, const std::function<void()>&, int, double, GpuTiming) { return 0; }
double gpu_copy_bandwidth_gbs(int, size_t) { return 0; }

#endif

}  // namespace spmvjit::cli
