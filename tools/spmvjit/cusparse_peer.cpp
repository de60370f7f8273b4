// The cuSPARSE peer of `spmvjit bench`: cusparseSpMV CSR ALG1 and ALG2 on the same matrix.
// cuSPARSE is loaded at run time (tools/spmvjit/cusparse_api.cpp): without it bench goes on alone.
#include "tools/spmvjit/gpu_bench.hpp"

#ifdef SPMVJIT_BENCH_CUSPARSE
#include <algorithm>
#include <chrono>
#include <limits>
#include <vector>

#include "engine/reference.hpp"
#include "runtime/cuda/cuda_backend.hpp"
#include "runtime/device_buffer.hpp"
#include "tools/spmvjit/cusparse_api.hpp"
#include "tools/spmvjit/gpu_peer_arrays.hpp"
#endif

namespace spmvjit::cli {

#ifdef SPMVJIT_BENCH_CUSPARSE
namespace {

void sp_check(const CusparseApi& sp, cusparseStatus_t s, const char* what) {
  if (s != CUSPARSE_STATUS_SUCCESS)
    fail(SPMV_STATUS_EXECUTION_FAILED, std::string("cuSPARSE ") + what + ": " + sp.cusparseGetErrorString(s));
}

template <class I, class V>
CusparseResult run(const CusparseApi& sp, int device, const HostCsr<I, V>& a, int min_iters,
                   double min_seconds, TimingModes timing) {
  CusparseResult r;
  Backend& b = cuda_backend(device);
  const cusparseIndexType_t it = sizeof(I) == 4 ? CUSPARSE_INDEX_32I : CUSPARSE_INDEX_64I;
  const cudaDataType vt = sizeof(V) == 4 ? CUDA_R_32F : CUDA_R_64F;
  using Clock = std::chrono::steady_clock;
  auto since = [](Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); };
  const auto x = random_vector<V>(a.cols, 21);
  const DeviceBuffer dx = peer_device_copy(b, x), dy = peer_device_array(b, size_t(a.rows) * sizeof(V));
  b.synchronize(nullptr);  // also makes the primary context current for cuSPARSE's runtime
  cusparseHandle_t h = nullptr;
  sp_check(sp, sp.cusparseCreate(&h), "create");  // once per process in a solver: not charged as setup
  // Setup as a user with the CSR in host memory pays it: upload, descriptor, workspace, and for
  // ALG2 its preprocess (host clock, synchronized).
  auto t0 = Clock::now();
  const DeviceBuffer rp = peer_device_copy(b, a.row_ptr), ci = peer_device_copy(b, a.col_idx),
                     va = peer_device_copy(b, a.val);
  cusparseSpMatDescr_t A = nullptr;
  cusparseDnVecDescr_t X = nullptr, Y = nullptr;
  struct Cleanup {
    const CusparseApi& sp;
    cusparseHandle_t& h;
    cusparseSpMatDescr_t& A;
    cusparseDnVecDescr_t &X, &Y;
    ~Cleanup() {
      if (A) sp.cusparseDestroySpMat(A);
      if (X) sp.cusparseDestroyDnVec(X);
      if (Y) sp.cusparseDestroyDnVec(Y);
      if (h) sp.cusparseDestroy(h);
    }
  } cleanup{sp, h, A, X, Y};
  sp_check(sp,
           sp.cusparseCreateCsr(&A, a.rows, a.cols, a.nnz(), rp.get(), ci.get(), va.get(), it, it,
                                CUSPARSE_INDEX_BASE_ZERO, vt),
           "create CSR");
  sp_check(sp, sp.cusparseCreateDnVec(&X, a.cols, dx.get(), vt), "create x");
  sp_check(sp, sp.cusparseCreateDnVec(&Y, a.rows, dy.get(), vt), "create y");
  const V alpha = 1, beta = 0;
  b.synchronize(nullptr);
  const double common_setup_s = since(t0);
  for (cusparseSpMVAlg_t alg : {CUSPARSE_SPMV_CSR_ALG1, CUSPARSE_SPMV_CSR_ALG2}) {
    const char* name = alg == CUSPARSE_SPMV_CSR_ALG1 ? "ALG1" : "ALG2";
    t0 = Clock::now();
    size_t bytes = 0;
    sp_check(sp,
             sp.cusparseSpMV_bufferSize(h, CUSPARSE_OPERATION_NON_TRANSPOSE, &alpha, A, X, &beta, Y, vt, alg,
                                        &bytes),
             "SpMV_bufferSize");
    const DeviceBuffer buf =
        peer_device_array(b, bytes);  // cuSPARSE's workspace, allocated through the backend
    if (alg == CUSPARSE_SPMV_CSR_ALG2)
      sp_check(sp,
               sp.cusparseSpMV_preprocess(h, CUSPARSE_OPERATION_NON_TRANSPOSE, &alpha, A, X, &beta, Y, vt,
                                          alg, buf.get()),
               "SpMV_preprocess");
    b.synchronize(nullptr);
    r.setup_s[alg == CUSPARSE_SPMV_CSR_ALG1 ? 0 : 1] = common_setup_s + since(t0);
    // Verify once with y poisoned: a peer that computes something else is no yardstick.
    std::vector<V> y(size_t(a.rows), std::numeric_limits<V>::quiet_NaN());
    b.upload(dy.get(), y.data(), y.size() * sizeof(V));
    sp_check(sp,
             sp.cusparseSpMV(h, CUSPARSE_OPERATION_NON_TRANSPOSE, &alpha, A, X, &beta, Y, vt, alg, buf.get()),
             "SpMV");
    b.synchronize(nullptr);
    b.download(y.data(), dy.get(), y.size() * sizeof(V));
    const std::string bad = check_spmv(a, reference_spmv(a, 1.0, x.data(), 0.0, y.data()), y.data());
    if (!bad.empty()) {
      r.error = std::string("cuSPARSE ") + name + " WRONG RESULT: " + bad;
      return r;
    }
    auto spmv = [&] {
      sp_check(
          sp,
          sp.cusparseSpMV(h, CUSPARSE_OPERATION_NON_TRANSPOSE, &alpha, A, X, &beta, Y, vt, alg, buf.get()),
          "SpMV");
    };
    for (int i = 0; i < 3; ++i) spmv();
    const int k = alg == CUSPARSE_SPMV_CSR_ALG1 ? 0 : 1;
    r.s[k] = gpu_median_seconds(BackendKind::cuda, device, spmv, min_iters, min_seconds);
    if (timing.cold)
      r.cold_s[k] =
          gpu_median_seconds(BackendKind::cuda, device, spmv, min_iters, min_seconds / 2, GpuTiming::cold);
    if (timing.sync)
      r.sync_s[k] = gpu_median_seconds(BackendKind::cuda, device, spmv, min_iters, min_seconds,
                                       GpuTiming::synchronized);
  }
  r.ok = true;
  return r;
}

}  // namespace

std::string cusparse_peer(std::string* why) {
  const CusparseApi* sp = cusparse_api(why);
  return sp ? "cuSPARSE " + sp->version + " (" + sp->library + ")" : "";
}

CusparseResult cusparse_spmv(int device, const HostCsr<int64_t, double>& a, IndexType index, ValueType value,
                             int min_iters, double min_seconds, TimingModes timing) {
  try {
    std::string why;
    const CusparseApi* sp = cusparse_api(&why);
    if (!sp) return CusparseResult{false, why};
    if (!cuda_available(device)) return CusparseResult{false, "no CUDA device"};
    return dispatch_types(index, value, [&]<class I, class V>() {
      return run<I, V>(*sp, device, a.cast<I, V>(), min_iters, min_seconds, timing);
    });
  } catch (const std::exception& e) {
    return CusparseResult{false, e.what()};
  }
}

#else

namespace {
const char* kWithout = "this spmvjit was built without the cuSPARSE peer (SPMVJIT_BENCH_CUSPARSE=OFF)";
}

std::string cusparse_peer(std::string* why) {
  if (why) *why = kWithout;
  return "";
}
CusparseResult cusparse_spmv(int, const HostCsr<int64_t, double>&, IndexType, ValueType, int, double,
                             TimingModes) {
  return CusparseResult{false, kWithout};
}

#endif

}  // namespace spmvjit::cli
