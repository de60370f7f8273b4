// The rocSPARSE peer of `spmvjit bench --backend hip`: rocsparse_spmv with the stream and adaptive
// CSR algorithms on the same matrix, as tools/spmvjit/cusparse_peer.cpp does for cuSPARSE.
// rocSPARSE is dlopen'ed (librocsparse.so.0; rocsparse.h gives only types and prototypes), so the
// CLI starts without it; it runs on AMD GPUs only, so a build for HIP's NVIDIA platform says so.
#include "tools/spmvjit/gpu_bench.hpp"

#ifdef SPMVJIT_BENCH_ROCSPARSE
#include <dlfcn.h>
#include <rocsparse/rocsparse.h>

#include <algorithm>
#include <chrono>
#include <limits>
#include <vector>

#include "engine/reference.hpp"
#include "runtime/device_buffer.hpp"
#include "runtime/hip/hip_backend.hpp"
#include "tools/spmvjit/gpu_peer_arrays.hpp"
#endif

namespace spmvjit::cli {

#ifdef SPMVJIT_BENCH_ROCSPARSE
namespace {

#define SPMVJIT_ROCSPARSE_FUNCTIONS(X) \
  X(rocsparse_create_handle)           \
  X(rocsparse_destroy_handle)          \
  X(rocsparse_get_version)             \
  X(rocsparse_create_csr_descr)        \
  X(rocsparse_destroy_spmat_descr)     \
  X(rocsparse_create_dnvec_descr) X(rocsparse_destroy_dnvec_descr) X(rocsparse_spmv)

struct RocsparseApi {
#define SPMVJIT_ROCSPARSE_MEMBER(fn) decltype(&::fn) fn = nullptr;
  SPMVJIT_ROCSPARSE_FUNCTIONS(SPMVJIT_ROCSPARSE_MEMBER)
#undef SPMVJIT_ROCSPARSE_MEMBER
  std::string library;
};

constexpr const char* kLibrary = "librocsparse.so.0";

// Loaded once; nullptr with `why` (the file, or the entry points it lacks).
const RocsparseApi* rocsparse_api(std::string* why) {
  struct Loaded {
    RocsparseApi api;
    std::string why;
  };
  static const Loaded loaded = [] {
    Loaded l;
    void* h = ::dlopen(kLibrary, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
      const char* e = ::dlerror();
      l.why = std::string("cannot load ") + kLibrary + " (" + (e ? e : "?") + "): install librocsparse-dev";
      return l;
    }
    std::string missing;
#define SPMVJIT_ROCSPARSE_RESOLVE(fn)                               \
  l.api.fn = reinterpret_cast<decltype(l.api.fn)>(::dlsym(h, #fn)); \
  if (!l.api.fn) missing += std::string(missing.empty() ? "" : ", ") + #fn;
    SPMVJIT_ROCSPARSE_FUNCTIONS(SPMVJIT_ROCSPARSE_RESOLVE)
#undef SPMVJIT_ROCSPARSE_RESOLVE
    if (!missing.empty()) {
      l.why = std::string(kLibrary) + " lacks " + missing;
      return l;
    }
    l.api.library = kLibrary;
    return l;
  }();
  if (!loaded.why.empty()) {
    if (why) *why = loaded.why;
    return nullptr;
  }
  return &loaded.api;
}

void rs_check(rocsparse_status s, const char* what) {
  if (s != rocsparse_status_success)
    fail(SPMV_STATUS_EXECUTION_FAILED,
         std::string("rocSPARSE ") + what + " failed: rocsparse_status " + std::to_string(int(s)));
}

template <class I, class V>
CusparseResult run(const RocsparseApi& rs, int device, const HostCsr<I, V>& a, int min_iters,
                   double min_seconds, TimingModes timing) {
  CusparseResult r;
  Backend& b = hip_backend(device);
  const rocsparse_indextype it = sizeof(I) == 4 ? rocsparse_indextype_i32 : rocsparse_indextype_i64;
  const rocsparse_datatype vt = sizeof(V) == 4 ? rocsparse_datatype_f32_r : rocsparse_datatype_f64_r;
  using Clock = std::chrono::steady_clock;
  auto since = [](Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); };
  const auto x = random_vector<V>(a.cols, 21);
  const DeviceBuffer dx = peer_device_copy(b, x), dy = peer_device_array(b, size_t(a.rows) * sizeof(V));
  b.synchronize(nullptr);
  rocsparse_handle h = nullptr;
  rs_check(rs.rocsparse_create_handle(&h), "create_handle");  // once per process: not charged
  rocsparse_spmat_descr A = nullptr;
  rocsparse_dnvec_descr X = nullptr, Y = nullptr;
  struct Cleanup {
    const RocsparseApi& rs;
    rocsparse_handle& h;
    rocsparse_spmat_descr& A;
    rocsparse_dnvec_descr &X, &Y;
    ~Cleanup() {
      if (A) rs.rocsparse_destroy_spmat_descr(A);
      if (X) rs.rocsparse_destroy_dnvec_descr(X);
      if (Y) rs.rocsparse_destroy_dnvec_descr(Y);
      if (h) rs.rocsparse_destroy_handle(h);
    }
  } cleanup{rs, h, A, X, Y};
  // Setup as a user with the CSR in host memory pays it: upload, descriptors, buffer, and for the
  // adaptive algorithm its analysis (done by the first rocsparse_spmv with a buffer).
  auto t0 = Clock::now();
  const DeviceBuffer rp = peer_device_copy(b, a.row_ptr), ci = peer_device_copy(b, a.col_idx),
                     va = peer_device_copy(b, a.val);
  b.synchronize(nullptr);
  r.upload_s = since(t0);
  rs_check(rs.rocsparse_create_csr_descr(&A, a.rows, a.cols, a.nnz(), rp.get(), ci.get(), va.get(), it, it,
                                         rocsparse_index_base_zero, vt),
           "create_csr_descr");
  rs_check(rs.rocsparse_create_dnvec_descr(&X, a.cols, dx.get(), vt), "create_dnvec_descr");
  rs_check(rs.rocsparse_create_dnvec_descr(&Y, a.rows, dy.get(), vt), "create_dnvec_descr");
  const V alpha = 1, beta = 0;
  const double common_setup_s = since(t0);
  const rocsparse_spmv_alg algs[2] = {rocsparse_spmv_alg_csr_stream, rocsparse_spmv_alg_csr_adaptive};
  for (int k = 0; k < 2; ++k) {
    const char* name = k ? "adaptive" : "stream";
    auto spmv_with = [&](size_t* bytes, void* buffer) {
      return rs.rocsparse_spmv(h, rocsparse_operation_none, &alpha, A, X, &beta, Y, vt, algs[k], bytes,
                               buffer);
    };
    t0 = Clock::now();
    size_t bytes = 0;
    rs_check(spmv_with(&bytes, nullptr), "spmv buffer size");
    const DeviceBuffer buf = peer_device_array(b, bytes);
    rs_check(spmv_with(&bytes, buf.get()), "spmv (first: analysis)");
    b.synchronize(nullptr);
    r.setup_s[k] = common_setup_s + since(t0);
    // Verify once with y poisoned: a peer that computes something else is no yardstick.
    std::vector<V> y(size_t(a.rows), std::numeric_limits<V>::quiet_NaN());
    b.upload(dy.get(), y.data(), y.size() * sizeof(V));
    rs_check(spmv_with(&bytes, buf.get()), "spmv");
    b.synchronize(nullptr);
    b.download(y.data(), dy.get(), y.size() * sizeof(V));
    const std::string bad = check_spmv(a, reference_spmv(a, 1.0, x.data(), 0.0, y.data()), y.data());
    if (!bad.empty()) {
      r.error = std::string("rocSPARSE ") + name + " WRONG RESULT: " + bad;
      return r;
    }
    auto spmv = [&] { rs_check(spmv_with(&bytes, buf.get()), "spmv"); };
    for (int i = 0; i < 3; ++i) spmv();
    r.s[k] = gpu_median_seconds(BackendKind::hip, device, spmv, min_iters, min_seconds);
    if (timing.cold)
      r.cold_s[k] =
          gpu_median_seconds(BackendKind::hip, device, spmv, min_iters, min_seconds / 2, GpuTiming::cold);
    if (timing.sync)
      r.sync_s[k] =
          gpu_median_seconds(BackendKind::hip, device, spmv, min_iters, min_seconds, GpuTiming::synchronized);
  }
  r.ok = true;
  return r;
}

}  // namespace

std::string rocsparse_peer(std::string* why) {
  const RocsparseApi* rs = rocsparse_api(why);
  if (!rs) return "";
  if (!hip_available(0)) {  // the version needs a handle, which needs a device
    if (why) *why = "no HIP device for rocSPARSE";
    return "";
  }
  std::string version = "?";
  rocsparse_handle h = nullptr;
  int v = 0;
  if (rs->rocsparse_create_handle(&h) == rocsparse_status_success) {
    if (rs->rocsparse_get_version(h, &v) == rocsparse_status_success)  // major * 100000 + minor * 100 + patch
      version =
          std::to_string(v / 100000) + "." + std::to_string(v / 100 % 1000) + "." + std::to_string(v % 100);
    rs->rocsparse_destroy_handle(h);
  }
  return "rocSPARSE " + version + " (" + rs->library + ")";
}

CusparseResult rocsparse_spmv(int device, const HostCsr<int64_t, double>& a, IndexType index, ValueType value,
                              int min_iters, double min_seconds, TimingModes timing) {
  try {
    std::string why;
    const RocsparseApi* rs = rocsparse_api(&why);
    if (!rs) return CusparseResult::failed(why);
    if (!hip_available(device)) return CusparseResult::failed("no HIP device");
    return dispatch_types(index, value, [&]<class I, class V>() {
      return run<I, V>(*rs, device, a.cast<I, V>(), min_iters, min_seconds, timing);
    });
  } catch (const std::exception& e) {
    return CusparseResult::failed(e.what());
  }
}

#else

namespace {
#ifdef SPMVJIT_HIP_NVIDIA
const char* kWithout = "rocSPARSE runs on AMD GPUs only (this build is HIP's NVIDIA platform)";
#else
const char* kWithout =
    "this spmvjit was built without the rocSPARSE peer (needs the HIP backend and rocsparse.h: "
    "librocsparse-dev)";
#endif
}  // namespace

std::string rocsparse_peer(std::string* why) {
  if (why) *why = kWithout;
  return "";
}
CusparseResult rocsparse_spmv(int, const HostCsr<int64_t, double>&, IndexType, ValueType, int, double,
                              TimingModes) {
  return CusparseResult::failed(kWithout);
}

#endif

}  // namespace spmvjit::cli
