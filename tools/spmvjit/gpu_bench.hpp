// GPU timing for `spmvjit bench`: CUDA events, copy bandwidth, and the cuSPARSE peer.
#pragma once

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "engine/csr.hpp"
#include "spmvjit/spmvjit.h"

namespace spmvjit::cli {

// "NVIDIA H100 80GB HBM3 (sm_90, 132 SMs)", or "" without a device.
std::string gpu_device_name(int device);
// True when this build can time on a CUDA device (and one is present).
bool gpu_timing_available(int device);
// Median seconds of one fn() call: calls are enqueued back to back on the default stream with
// a CUDA event between each pair (launch overhead hidden as in a real solver loop), at least
// `min_iters` of them and `min_seconds` of device time. fn must enqueue work and not block.
double gpu_median_seconds(int device, const std::function<void()>& fn, int min_iters, double min_seconds);
// Device-to-device copy bandwidth in GB/s counting bytes read plus written (cuMemcpyDtoD of
// `bytes`, median of several). 0 when there is no device.
double gpu_copy_bandwidth_gbs(int device, size_t bytes);

struct CusparseResult {
  bool ok = false;
  std::string error;
  double alg1_s = 0, alg2_s = 0;  // median seconds of one SpMV (beta = 0)
  // A host CSR to the first SpMV: upload, descriptors, workspace (+ preprocess for ALG2).
  double alg1_setup_s = 0, alg2_setup_s = 0;
  double upload_s = 0;  // the CSR arrays' part of the above
};

// cusparseSpMV on the same CSR (same index/value types), CUSPARSE_SPMV_CSR_ALG1 and ALG2 (with
// cusparseSpMV_preprocess), y = 1*A*x + 0*y, verified against the reference first.
CusparseResult cusparse_spmv(int device, const HostCsr<int64_t, double>& a, IndexType index, ValueType value,
                         int min_iters, double min_seconds);
bool cusparse_available();

// `spmvjit bench` on a CUDA device: our formats (CUDA-event medians), cuSPARSE ALG1/ALG2 and
// the device copy bandwidth, as a table and optionally JSON. Returns the exit code.
int bench_gpu(const std::vector<std::pair<std::string, HostCsr<int64_t, double>>>& matrices,
              const std::vector<std::string>& formats, const spmv_options_t& options, IndexType index,
              ValueType value, int iters, bool peers, const std::string& json_path);

}  // namespace spmvjit::cli
