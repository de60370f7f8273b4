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

double gpu_median_seconds(int device, const std::function<void()>& fn, int min_iters, double min_seconds) {
  Backend& b = cuda_backend(device);  // makes the primary context exist
  b.synchronize(nullptr);
  const cuda::DriverApi& api = *cuda::driver();
  constexpr int kBatch = 50;
  std::vector<CUevent> ev(kBatch + 1);
  for (auto& e : ev) cuda::check(api.cuEventCreate(&e, CU_EVENT_DEFAULT), "cuEventCreate");
  std::vector<double> t;
  double total = 0;
  for (int round = 0; round < 2000; ++round) {
    const int count = int(t.size()) < min_iters ? std::min(kBatch, min_iters - int(t.size())) : kBatch;
    cuda::check(api.cuEventRecord(ev[0], nullptr), "cuEventRecord");
    for (int i = 0; i < count; ++i) {
      fn();
      cuda::check(api.cuEventRecord(ev[size_t(i) + 1], nullptr), "cuEventRecord");
    }
    cuda::check(api.cuEventSynchronize(ev[size_t(count)]), "cuEventSynchronize");
    for (int i = 0; i < count; ++i) {
      float ms = 0;
      cuda::check(api.cuEventElapsedTime(&ms, ev[size_t(i)], ev[size_t(i) + 1]), "cuEventElapsedTime");
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
double gpu_median_seconds(int, const std::function<void()>&, int, double) { return 0; }
double gpu_copy_bandwidth_gbs(int, size_t) { return 0; }

#endif

}  // namespace spmvjit::cli
