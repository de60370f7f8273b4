// GPU timing for `spmvjit bench` on CUDA and HIP: device events, copy bandwidth, and the
// vendor peers (cuSPARSE; rocSPARSE).
#pragma once

#include <complex>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "core/target.hpp"
#include "engine/csr.hpp"
#include "spmvjit/spmvjit.h"
#include "tools/spmvjit/measure.hpp"

namespace spmvjit::cli {

// "NVIDIA H100 80GB HBM3 (sm_90, 132 SMs, ...)", or "" without a device. kind: cuda or hip.
std::string gpu_device_name(BackendKind kind, int device);
// True when this build can time on a device of that backend (and one is present).
bool gpu_timing_available(BackendKind kind, int device);
// How an SpMV is timed on the device; spmvjit and cuSPARSE are always timed alike.
enum class GpuTiming {
  // Calls enqueued back to back on the default stream with a CUDA event between each pair
  // (launch overhead hidden as in a real solver loop; the matrix may partly stay in the L2).
  warm,
  // Before each call a memset of twice the L2 size (outside the timed interval) evicts what the
  // last call left, as other kernels of a solver would between SpMVs.
  cold,
  // One call between two events, the host waiting for the second before the next call: the
  // plainest timing there is (includes the launch's latency on an idle device), kept as the
  // yardstick the other two are checked against.
  synchronized,
};
const char* to_string(GpuTiming mode);

// Median seconds of one fn() call under `mode`: at least `min_iters` calls and `min_seconds` of
// device time. fn must enqueue work and not block.
double gpu_median_seconds(BackendKind kind, int device, const std::function<void()>& fn, int min_iters,
                          double min_seconds, GpuTiming mode = GpuTiming::warm);
// Device-to-device copy bandwidth in GB/s counting bytes read plus written (a device-to-device
// copy of `bytes`, median of several). 0 when there is no device.
double gpu_copy_bandwidth_gbs(BackendKind kind, int device, size_t bytes);

// Per algorithm: SpMV [0] CUSPARSE_SPMV_CSR_ALG1, [1] ALG2; SpMM [0] CUSPARSE_SPMM_CSR_ALG1, [1]
// ALG2, [2] ALG3 (one the library refuses for the layout keeps s = 0 and says why in skipped).
struct CusparseResult {
  bool ok = false;
  std::string error;
  int count = 2;                          // algorithms in the arrays
  std::string skipped[3];                 // why an algorithm did not run ("" when it ran)
  double s[3] = {};                       // median seconds of one SpMV (beta = 0), warm
  double cold_s[3] = {}, sync_s[3] = {};  // the other timing modes, 0 when not run
  // A host CSR to the first SpMV: upload, descriptors, workspace (+ preprocess for ALG2).
  double setup_s[3] = {};
  double upload_s = 0;  // the CSR arrays' part of the above
  static CusparseResult failed(std::string why) {
    CusparseResult r;
    r.error = std::move(why);
    return r;
  }
  // The algorithm that ran fastest (warm), or -1.
  int fastest() const {
    int f = -1;
    for (int i = 0; i < count; ++i)
      if (s[i] > 0 && (f < 0 || s[i] < s[f])) f = i;
    return f;
  }
};

// cusparseSpMV on the same CSR (same index/value types), CUSPARSE_SPMV_CSR_ALG1 and ALG2 (with
// cusparseSpMV_preprocess), y = 1*A*x + 0*y, verified against the reference first; timed warm
// and in the requested modes. vectors > 1: cusparseSpMM with CSR ALG1, ALG2 and ALG3 (each with
// its preprocess) on k dense vectors of that layout (minimal leading dimensions). transpose:
// op(A) = A^T through CUSPARSE_OPERATION_TRANSPOSE on A (an algorithm that refuses it is skipped).
CusparseResult cusparse_spmv(int device, const HostCsr<int64_t, double>& a, IndexType index, ValueType value,
                             int min_iters, double min_seconds, TimingModes timing, int64_t vectors = 1,
                             bool row_major = false, bool transpose = false);
// The same for complex values (value c32 or c64: CUDA_C_32F / CUDA_C_64F), checked against the
// complex reference.
CusparseResult cusparse_spmv(int device, const HostCsr<int64_t, std::complex<double>>& a, IndexType index,
                             ValueType value, int min_iters, double min_seconds, TimingModes timing,
                             int64_t vectors = 1, bool row_major = false, bool transpose = false);
// "cuSPARSE 12.6.3 (libcusparse.so.12)" when the peer can run (the library loads: it is dlopen'ed,
// tools/spmvjit/cusparse_api.hpp), else "" with `why` (the files looked for, or a build without it).
std::string cusparse_peer(std::string* why);

// rocsparse_spmv on the same CSR: [0] rocsparse_spmv_alg_csr_stream, [1] csr_adaptive (its
// analysis in the setup), as cusparse_spmv does for cuSPARSE. rocSPARSE is dlopen'ed
// (tools/spmvjit/rocsparse_peer.cpp); it runs on AMD GPUs only.
CusparseResult rocsparse_spmv(int device, const HostCsr<int64_t, double>& a, IndexType index, ValueType value,
                              int min_iters, double min_seconds, TimingModes timing);
// "rocSPARSE 2.3.2 (librocsparse.so.0)" when the peer can run, else "" with `why`.
std::string rocsparse_peer(std::string* why);

// `spmvjit bench` on a CUDA or HIP device: our formats (device-event medians), the vendor peer
// (cuSPARSE ALG1/ALG2 on CUDA; rocSPARSE on HIP where it exists) and the device copy bandwidth,
// as a table and optionally JSON. Returns the exit code. M: double, or std::complex<double> for
// complex values (cuSPARSE's complex types the peer; rocSPARSE's are not wired).
template <class M>
int bench_gpu(BackendKind kind, const std::vector<std::pair<std::string, HostCsr<int64_t, M>>>& matrices,
              const std::vector<std::string>& formats, const spmv_options_t& options, IndexType index,
              ValueType value, int iters, TimingModes timing, bool peers, const std::string& json_path);

}  // namespace spmvjit::cli
