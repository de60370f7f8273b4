// The cuSPARSE peer of `spmvjit bench`: cusparseSpMV CSR ALG1 and ALG2 on the same matrix, or
// cusparseSpMM CSR ALG1-3 on the same k vectors (bench --vectors); real or complex values.
// cuSPARSE is loaded at run time (tools/spmvjit/cusparse_api.cpp): without it bench goes on alone.
#include "tools/spmvjit/gpu_bench.hpp"

#ifdef SPMVJIT_BENCH_CUSPARSE
#include <algorithm>
#include <chrono>
#include <limits>
#include <vector>

#include "engine/reference.hpp"
#include "engine/reference_complex.hpp"
#include "runtime/cuda/cuda_backend.hpp"
#include "runtime/device_buffer.hpp"
#include "tools/spmvjit/cusparse_api.hpp"
#include "tools/spmvjit/gpu_peer_arrays.hpp"
#include "tools/spmvjit/measure.hpp"
#endif

namespace spmvjit::cli {

#ifdef SPMVJIT_BENCH_CUSPARSE
namespace {

void sp_check(const CusparseApi& sp, cusparseStatus_t s, const char* what) {
  if (s != CUSPARSE_STATUS_SUCCESS)
    fail(SPMV_STATUS_EXECUTION_FAILED, std::string("cuSPARSE ") + what + ": " + sp.cusparseGetErrorString(s));
}

// NaN in every part of V (y poisoned: beta == 0 must not read it).
template <class V>
V nan_value() {
  if constexpr (is_complex_v<V>) {
    const auto n = std::numeric_limits<typename V::value_type>::quiet_NaN();
    return V(n, n);
  } else {
    return std::numeric_limits<V>::quiet_NaN();
  }
}

// `transpose`: op(A) = A^T (CUSPARSE_OPERATION_TRANSPOSE on A's CSR, as a user calls it), judged
// against the reference's own transpose; x then has A's rows entries and y its columns.
template <class I, class V>
CusparseResult run(const CusparseApi& sp, int device, const HostCsr<I, V>& matrix, int min_iters,
                   double min_seconds, TimingModes timing, int64_t k, bool row_major, bool transpose) {
  CusparseResult r;
  Backend& b = cuda_backend(device);
  const cusparseIndexType_t it = sizeof(I) == 4 ? CUSPARSE_INDEX_32I : CUSPARSE_INDEX_64I;
  // Complex values: cuSPARSE's pairs of parts (std::complex's layout; aligned as our device arrays).
  const cudaDataType vt = is_complex_v<V>  ? (sizeof(V) == 8 ? CUDA_C_32F : CUDA_C_64F)
                          : sizeof(V) == 4 ? CUDA_R_32F
                                           : CUDA_R_64F;
  const cusparseOperation_t op = transpose ? CUSPARSE_OPERATION_TRANSPOSE : CUSPARSE_OPERATION_NON_TRANSPOSE;
  const cusparseOperation_t op_b = CUSPARSE_OPERATION_NON_TRANSPOSE;
  const HostCsr<I, V> judged = transpose ? reference_transpose(matrix) : HostCsr<I, V>{};
  const HostCsr<I, V>& a = transpose ? judged : matrix;  // op(A): the sizes of x and y, the check
  using Clock = std::chrono::steady_clock;
  auto since = [](Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); };
  // k vectors, dense with the minimal leading dimensions (k == 1: one vector).
  const int64_t ldx = row_major ? k : a.cols, ldy = row_major ? k : a.rows;
  const auto x = random_vector<V>(a.cols * k, 21);
  const DeviceBuffer dx = peer_device_copy(b, x), dy = peer_device_array(b, size_t(a.rows * k) * sizeof(V));
  b.synchronize(nullptr);  // also makes the primary context current for cuSPARSE's runtime
  cusparseHandle_t h = nullptr;
  sp_check(sp, sp.cusparseCreate(&h), "create");  // once per process in a solver: not charged as setup
  // Setup as a user with the CSR in host memory pays it: upload, descriptors, workspace, and the
  // algorithm's preprocess (host clock, synchronized).
  auto t0 = Clock::now();
  const DeviceBuffer rp = peer_device_copy(b, matrix.row_ptr), ci = peer_device_copy(b, matrix.col_idx),
                     va = peer_device_copy(b, matrix.val);
  b.synchronize(nullptr);
  r.upload_s = since(t0);
  cusparseSpMatDescr_t A = nullptr;
  cusparseDnVecDescr_t X = nullptr, Y = nullptr;
  cusparseDnMatDescr_t XM = nullptr, YM = nullptr;
  struct Cleanup {
    const CusparseApi& sp;
    cusparseHandle_t& h;
    cusparseSpMatDescr_t& A;
    cusparseDnVecDescr_t &X, &Y;
    cusparseDnMatDescr_t &XM, &YM;
    ~Cleanup() {
      if (A) sp.cusparseDestroySpMat(A);
      if (X) sp.cusparseDestroyDnVec(X);
      if (Y) sp.cusparseDestroyDnVec(Y);
      if (XM) sp.cusparseDestroyDnMat(XM);
      if (YM) sp.cusparseDestroyDnMat(YM);
      if (h) sp.cusparseDestroy(h);
    }
  } cleanup{sp, h, A, X, Y, XM, YM};
  sp_check(sp,
           sp.cusparseCreateCsr(&A, matrix.rows, matrix.cols, matrix.nnz(), rp.get(), ci.get(), va.get(), it,
                                it, CUSPARSE_INDEX_BASE_ZERO, vt),
           "create CSR");
  if (k == 1) {
    sp_check(sp, sp.cusparseCreateDnVec(&X, a.cols, dx.get(), vt), "create x");
    sp_check(sp, sp.cusparseCreateDnVec(&Y, a.rows, dy.get(), vt), "create y");
  } else {
    const cusparseOrder_t order = row_major ? CUSPARSE_ORDER_ROW : CUSPARSE_ORDER_COL;
    sp_check(sp, sp.cusparseCreateDnMat(&XM, a.cols, k, ldx, dx.get(), vt, order), "create X");
    sp_check(sp, sp.cusparseCreateDnMat(&YM, a.rows, k, ldy, dy.get(), vt, order), "create Y");
  }
  const V alpha = V(1), beta = V(0);
  b.synchronize(nullptr);
  const double common_setup_s = since(t0);
  // One algorithm's three calls: workspace size, preprocess, multiply.
  struct Alg {
    const char* name;
    int spmv, spmm;
  };
  const Alg spmv_algs[] = {{"ALG1", CUSPARSE_SPMV_CSR_ALG1, 0}, {"ALG2", CUSPARSE_SPMV_CSR_ALG2, 0}};
  const Alg spmm_algs[] = {{"ALG1", 0, CUSPARSE_SPMM_CSR_ALG1},
                           {"ALG2", 0, CUSPARSE_SPMM_CSR_ALG2},
                           {"ALG3", 0, CUSPARSE_SPMM_CSR_ALG3}};
  r.count = k == 1 ? 2 : 3;
  for (int i = 0; i < r.count; ++i) {
    const Alg& alg = k == 1 ? spmv_algs[i] : spmm_algs[i];
    const auto mv = cusparseSpMVAlg_t(alg.spmv);
    const auto mm = cusparseSpMMAlg_t(alg.spmm);
    auto size = [&](size_t* bytes) {
      return k == 1 ? sp.cusparseSpMV_bufferSize(h, op, &alpha, A, X, &beta, Y, vt, mv, bytes)
                    : sp.cusparseSpMM_bufferSize(h, op, op_b, &alpha, A, XM, &beta, YM, vt, mm, bytes);
    };
    auto preprocess = [&](void* buf) {
      return k == 1 ? sp.cusparseSpMV_preprocess(h, op, &alpha, A, X, &beta, Y, vt, mv, buf)
                    : sp.cusparseSpMM_preprocess(h, op, op_b, &alpha, A, XM, &beta, YM, vt, mm, buf);
    };
    auto multiply = [&](void* buf) {
      return k == 1 ? sp.cusparseSpMV(h, op, &alpha, A, X, &beta, Y, vt, mv, buf)
                    : sp.cusparseSpMM(h, op, op_b, &alpha, A, XM, &beta, YM, vt, mm, buf);
    };
    t0 = Clock::now();
    size_t bytes = 0;
    cusparseStatus_t st = size(&bytes);
    // An algorithm the library does not offer for this operation, layout or type is skipped, said why.
    if ((k > 1 || transpose) && st == CUSPARSE_STATUS_NOT_SUPPORTED) {
      r.skipped[i] = std::string(alg.name) + ": " + sp.cusparseGetErrorString(st);
      continue;
    }
    sp_check(sp, st, k == 1 ? "SpMV_bufferSize" : "SpMM_bufferSize");
    const DeviceBuffer buf = peer_device_array(b, bytes);  // cuSPARSE's workspace, through the backend
    if (k > 1 || alg.spmv == CUSPARSE_SPMV_CSR_ALG2) {
      st = preprocess(buf.get());
      if ((k > 1 || transpose) && st == CUSPARSE_STATUS_NOT_SUPPORTED) {
        r.skipped[i] = std::string(alg.name) + ": " + sp.cusparseGetErrorString(st);
        continue;
      }
      sp_check(sp, st, k == 1 ? "SpMV_preprocess" : "SpMM_preprocess");
    }
    b.synchronize(nullptr);
    r.setup_s[i] = common_setup_s + since(t0);
    // Verify once with y poisoned: a peer that computes something else is no yardstick.
    std::vector<V> y(size_t(a.rows * k), nan_value<V>());
    const std::vector<V> poisoned = y;
    b.upload(dy.get(), y.data(), y.size() * sizeof(V));
    sp_check(sp, multiply(buf.get()), k == 1 ? "SpMV" : "SpMM");
    b.synchronize(nullptr);
    b.download(y.data(), dy.get(), y.size() * sizeof(V));
    std::string bad;
    if constexpr (is_complex_v<V>)
      bad = check_vectors_complex(a, k, row_major, 1.0, x.data(), ldx, 0.0, poisoned.data(), y.data(), ldy,
                                  k > 1 ? kSpmmCheckWork : 0);
    else
      bad = check_vectors(a, k, row_major, 1.0, x.data(), ldx, 0.0, poisoned.data(), y.data(), ldy,
                          k > 1 ? kSpmmCheckWork : 0);
    if (!bad.empty()) {
      r.error = std::string("cuSPARSE ") + alg.name + " WRONG RESULT: " + bad;
      return r;
    }
    auto call = [&] { sp_check(sp, multiply(buf.get()), k == 1 ? "SpMV" : "SpMM"); };
    for (int w = 0; w < 3; ++w) call();
    r.s[i] = gpu_median_seconds(BackendKind::cuda, device, call, min_iters, min_seconds);
    if (timing.cold)
      r.cold_s[i] =
          gpu_median_seconds(BackendKind::cuda, device, call, min_iters, min_seconds / 2, GpuTiming::cold);
    if (timing.sync)
      r.sync_s[i] = gpu_median_seconds(BackendKind::cuda, device, call, min_iters, min_seconds,
                                       GpuTiming::synchronized);
  }
  if (r.fastest() < 0) {
    r.error =
        std::string("cuSPARSE ") + (k > 1 ? "SpMM" : "SpMV") + " runs no CSR algorithm here: " + r.skipped[0];
    return r;
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
                             int min_iters, double min_seconds, TimingModes timing, int64_t vectors,
                             bool row_major, bool transpose) {
  try {
    std::string why;
    const CusparseApi* sp = cusparse_api(&why);
    if (!sp) return CusparseResult::failed(why);
    if (!cuda_available(device)) return CusparseResult::failed("no CUDA device");
    return dispatch_types(index, value, [&]<class I, class V>() {
      return run<I, V>(*sp, device, a.cast<I, V>(), min_iters, min_seconds, timing, vectors, row_major,
                       transpose);
    });
  } catch (const std::exception& e) {
    return CusparseResult::failed(e.what());
  }
}

CusparseResult cusparse_spmv(int device, const HostCsr<int64_t, std::complex<double>>& a, IndexType index,
                             ValueType value, int min_iters, double min_seconds, TimingModes timing,
                             int64_t vectors, bool row_major, bool transpose) {
  try {
    std::string why;
    const CusparseApi* sp = cusparse_api(&why);
    if (!sp) return CusparseResult::failed(why);
    if (!cuda_available(device)) return CusparseResult::failed("no CUDA device");
    SPMVJIT_ASSERT(is_complex(value), "complex cuSPARSE peer with real values");
    return dispatch_types_complex(index, value, [&]<class I, class V>() {
      if constexpr (is_complex_v<V>)
        return run<I, V>(*sp, device, a.cast<I, V>(), min_iters, min_seconds, timing, vectors, row_major,
                         transpose);
      else
        return CusparseResult::failed("unreachable: real values");
    });
  } catch (const std::exception& e) {
    return CusparseResult::failed(e.what());
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
                             TimingModes, int64_t, bool, bool) {
  return CusparseResult::failed(kWithout);
}
CusparseResult cusparse_spmv(int, const HostCsr<int64_t, std::complex<double>>&, IndexType, ValueType, int,
                             double, TimingModes, int64_t, bool, bool) {
  return CusparseResult::failed(kWithout);
}

#endif

}  // namespace spmvjit::cli
