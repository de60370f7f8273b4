// measure(): plan -> verify twice (beta = 0 with poisoned y, beta != 0) -> time.
#include "tools/spmvjit/measure.hpp"

#include <chrono>
#include <cmath>
#include <limits>

#include "engine/plan.hpp"
#include "engine/reference.hpp"
#include "engine/reference_complex.hpp"
#include "runtime/device_buffer.hpp"
#include "spmvjit/spmvjit.hpp"
#include "tools/spmvjit/cli.hpp"
#include "tools/spmvjit/gpu_bench.hpp"

namespace spmvjit::cli {
namespace {

// x and y in the memory the plan's backend computes in.
class Vectors {
 public:
  Vectors(Backend* b, size_t xbytes, size_t ybytes) : b_(b) {
    if (!b_->is_host()) {
      x_ = DeviceBuffer(*b_, xbytes);
      y_ = DeviceBuffer(*b_, ybytes);
    }
  }
  template <class V>
  std::pair<const V*, V*> bind(const std::vector<V>& x, std::vector<V>& y) {
    if (b_->is_host()) return {x.data(), y.data()};
    if (x_) b_->upload(x_.get(), x.data(), x.size() * sizeof(V));
    if (y_) b_->upload(y_.get(), y.data(), y.size() * sizeof(V));
    return {x_.as<const V>(), y_.as<V>()};
  }
  template <class V>
  void fetch(std::vector<V>& y) {
    b_->synchronize(nullptr);
    if (!b_->is_host() && y_) b_->download(y.data(), y_.get(), y.size() * sizeof(V));
  }

 private:
  Backend* b_;
  DeviceBuffer x_, y_;
};

// NaN in every part of V (y poisoned where beta == 0 must not be read).
template <class V>
V quiet_nan() {
  if constexpr (is_complex_v<V>) {
    const auto n = std::numeric_limits<typename V::value_type>::quiet_NaN();
    return V(n, n);
  } else {
    return std::numeric_limits<V>::quiet_NaN();
  }
}

// The checks' scalars: complex ones with imaginary parts, so a kernel that drops them fails.
template <class V>
V scalar(double re, double im) {
  if constexpr (is_complex_v<V>)
    return V(typename V::value_type(re), typename V::value_type(im));
  else
    return V(re);
}

template <class I, class V>
MeasureResult run_typed(const HostCsr<I, V>& a, const spmv_options_t& options, const std::string& format,
                        int min_iters, double min_seconds, TimingModes timing) {
  MeasureResult r;
  r.format = format.empty() ? "auto" : format;
  spmv_options_t o = options;
  // "measure" is the planner in measure mode; "" the planner's estimate; "device" the planner's
  // estimate for the CSR already in device memory (planned on the device; the plan time is the
  // second, warm-cache plan).
  // "general": the planner's estimate for the matrix planned as a general one (full storage).
  const bool measured = format == "measure", device_input = format == "device", general = format == "general";
  if (measured) o.planning = SPMV_PLANNING_MEASURE;
  if (general) o.matrix_type = SPMV_MATRIX_GENERAL;
  o.format = format.empty() || measured || device_input || general ? nullptr : format.c_str();
  spmv_csr_t desc = csr_view<I, V>(a.rows, a.cols, a.nnz(), a.row_ptr.data(), a.col_idx.data(), a.val.data());
  DeviceBuffer device_csr[3];  // declared before the plan: outlives it
  if (device_input) {
    Backend& b = get_backend(options.backend == SPMV_BACKEND_HIP ? BackendKind::hip : BackendKind::cuda,
                             options.device);
    const void* host[3] = {a.row_ptr.data(), a.col_idx.data(), a.val.data()};
    const size_t bytes[3] = {a.row_ptr.size() * sizeof(I), a.col_idx.size() * sizeof(I),
                             a.val.size() * sizeof(V)};
    for (int i = 0; i < 3; ++i) {
      device_csr[i] = DeviceBuffer(b, bytes[i]);
      if (bytes[i]) b.upload(device_csr[i].get(), host[i], bytes[i]);
    }
    desc.row_ptr = device_csr[0].get(), desc.col_idx = device_csr[1].get(), desc.values = device_csr[2].get();
    desc.memory = SPMV_MEMORY_DEVICE;
  }
  // The planner's choices are timed on a second plan of the matrix (timing.second_plan), from host
  // and device memory alike: the first may also load kernels from the disk cache (and on a GPU the
  // planning modules) unless an earlier plan of the process did; its time is kept apart
  // (plan_first_s). Device input always was timed so.
  if ((format.empty() && timing.second_plan) || device_input) {
    spmv_plan_t warm = nullptr;
    if (spmv_plan(&warm, &desc, &o) == SPMV_STATUS_SUCCESS) {
      r.plan_first_s = plan_impl(warm).timings().total;
      spmv_plan_destroy(warm);
    }
  }
  spmv_plan_t plan = nullptr;
  if (spmv_plan(&plan, &desc, &o) != SPMV_STATUS_SUCCESS) {
    r.error = spmv_last_error();
    return r;
  }
  const std::unique_ptr<spmv_plan_s, decltype(&spmv_plan_destroy)> guard(plan, &spmv_plan_destroy);
  Plan& p = plan_impl(plan);
  r.format = p.data().format;
  r.params = params_json(p.data().params);
  const auto& t = p.timings();
  r.plan_s = t.total;
  r.validate_s = t.validate;
  r.stats_s = t.stats;
  r.estimate_s = t.plan;
  r.upload_s = t.upload;
  r.convert_s = t.convert;
  r.compile_s = t.compile;
  r.load_s = t.load;
  Backend& backend = get_backend(p.backend_kind(), options.device);
  // op(A), what the plan computes and is judged by (A's transpose built apart, engine/reference.hpp).
  // (A symmetric or Hermitian plan builds no transpose, but may compute conj(A).)
  const bool transposed = p.transposed() || p.conjugated_symmetric();
  // A itself when not transposed (no copy of a matrix that may be gigabytes).
  // A^H from what was asked, not from the plan under test (the real transpose for real values).
  const bool conjugate = is_complex_v<V> && options.operation == SPMV_OPERATION_CONJUGATE_TRANSPOSE;
  const HostCsr<I, V> a_t = transposed ? reference_transpose(a, conjugate) : HostCsr<I, V>{};
  const HostCsr<I, V>& op_a = transposed ? a_t : a;
  // k vectors (spmm_execute), dense with the minimal leading dimensions; one: spmv_execute.
  const int64_t k = p.vectors();
  const bool row_major = p.row_major();
  const int64_t ldx = row_major ? k : op_a.cols, ldy = row_major ? k : op_a.rows;
  Vectors vec(&backend, size_t(op_a.cols * k) * sizeof(V), size_t(op_a.rows * k) * sizeof(V));
  auto execute = [&](const V* al, const V* dx, const V* be, V* dy) {
    return k == 1 ? spmv_execute(plan, al, dx, be, dy, nullptr)
                  : spmm_execute(plan, al, dx, ldx, be, dy, ldy, nullptr);
  };
  // Each vector of y against the reference of its vector of x and y0.
  auto check = [&](const HostCsr<I, V>& a, const std::vector<V>& x, V alpha, V beta, const std::vector<V>& y0,
                   const std::vector<V>& y) -> std::string {
    std::string bad;
    if constexpr (is_complex_v<V>) {  // both parts, complex alpha and beta
      const std::complex<double> al(alpha.real(), alpha.imag()), be(beta.real(), beta.imag());
      bad = check_vectors_complex(a, k, row_major, al, x.data(), ldx, be, y0.data(), y.data(), ldy,
                                  k > 1 ? kSpmmCheckWork : 0);
    } else {
      bad = check_vectors(a, k, row_major, alpha, x.data(), ldx, beta, y0.data(), y.data(), ldy,
                          k > 1 ? kSpmmCheckWork : 0);
    }
    return bad.empty() ? "" : "WRONG RESULT: " + bad;
  };

  // Both checks run on the kernel the plan starts with and again on the specialized one when it
  // was still compiling in the background (timing uses the specialized one).
  auto x = random_vector<V>(op_a.cols * k, 11);
  std::vector<V> y(size_t(op_a.rows * k));
  V alpha = V(1), beta = V(0);
  auto verify = [&](const HostCsr<I, V>& a) -> std::string {
    // Check 1: beta = 0 must not read y (poisoned with NaN); alpha != 1.
    x = random_vector<V>(a.cols * k, 11);
    y.assign(size_t(a.rows * k), quiet_nan<V>());
    const auto poisoned = y;
    auto [dx, dy] = vec.bind(x, y);
    alpha = scalar<V>(1.5, -0.5), beta = V(0);
    if (execute(&alpha, dx, &beta, dy) != SPMV_STATUS_SUCCESS) return spmv_last_error();
    vec.fetch(y);
    std::string bad = check(a, x, alpha, beta, poisoned, y);
    if (!bad.empty()) return bad;
    // Check 2: beta != 0 with fresh x and y, alpha == 1 (the alpha-one variant).
    x = random_vector<V>(a.cols * k, 12);
    y = random_vector<V>(a.rows * k, 13);
    const auto y0 = y;
    auto [dx2, dy2] = vec.bind(x, y);
    alpha = V(1);
    beta = scalar<V>(-0.75, 0.25);
    if (execute(&alpha, dx2, &beta, dy2) != SPMV_STATUS_SUCCESS) return spmv_last_error();
    vec.fetch(y);
    return check(a, x, alpha, beta, y0, y);
  };
  r.error = verify(op_a);
  if (r.error.empty() && p.tiered()) {
    p.wait_for_kernels();
    r.error = verify(op_a);
  }
  r.describe = p.describe_json();
  r.cache = p.cache().where;
  if (!r.error.empty()) return r;
  auto [dx3, dy3] = vec.bind(x, y);
  alpha = V(1);
  beta = V(0);
  for (int i = 0; i < 3; ++i) execute(&alpha, dx3, &beta, dy3);  // warm up
  if (backend.is_host()) {
    r.exec_s = median_seconds([&] { execute(&alpha, dx3, &beta, dy3); }, min_iters, min_seconds);
  } else {
    // Device time between events of back-to-back SpMVs: host clocks would add launch and
    // synchronization latency that a solver loop never pays.
    auto spmv = [&] { execute(&alpha, dx3, &beta, dy3); };
    r.exec_s = gpu_median_seconds(p.backend_kind(), options.device, spmv, min_iters, min_seconds);
    if (timing.cold)
      r.exec_cold_s = gpu_median_seconds(p.backend_kind(), options.device, spmv, min_iters, min_seconds / 2,
                                         GpuTiming::cold);
    if (timing.sync)
      r.exec_sync_s = gpu_median_seconds(p.backend_kind(), options.device, spmv, min_iters, min_seconds,
                                         GpuTiming::synchronized);
  }
  // The planner's own plans: spmv_plan_update_values with new values in the input's memory. The
  // first update finds the value map; later ones are timed (host clock, through the synchronize
  // the update ends with), then the plan is checked against the new values.
  if (format.empty() || device_input || general) {
    HostCsr<I, V> b = a;
    for (V& v : b.val) v = v * V(0.5) + V(0.25);
    DeviceBuffer staged;
    const void* values = b.val.data();
    if (device_input && !b.val.empty()) {
      staged = DeviceBuffer(backend, b.val.size() * sizeof(V));
      backend.upload(staged.get(), b.val.data(), b.val.size() * sizeof(V));
      values = staged.get();
    }
    const spmv_memory_t memory = device_input ? SPMV_MEMORY_DEVICE : SPMV_MEMORY_HOST;
    auto update = [&] {
      if (spmv_plan_update_values(plan, values, memory) != SPMV_STATUS_SUCCESS)
        fail(SPMV_STATUS_EXECUTION_FAILED, std::string("update_values: ") + spmv_last_error());
      backend.synchronize(nullptr);
    };
    const auto t0 = std::chrono::steady_clock::now();
    update();
    r.update_first_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    r.update_s = median_seconds(update, 5, 0.02);
    r.error = transposed ? verify(reference_transpose(b, conjugate)) : verify(b);
    if (!r.error.empty()) {
      r.error = "after update_values: " + r.error;
      return r;
    }
  }
  r.bytes = double(p.bytes_per_spmv(true));
  r.csr_bytes = double(p.csr_equivalent_bytes(true));
  r.ok = true;
  return r;
}

}  // namespace

MeasureResult measure(const HostCsr<int64_t, std::complex<double>>& a, IndexType index, ValueType value,
                      const spmv_options_t& options, const std::string& format, int min_iters,
                      double min_seconds, TimingModes timing) {
  try {
    SPMVJIT_ASSERT(is_complex(value), "complex measure with real values");
    return dispatch_types_complex(index, value, [&]<class I, class V>() -> MeasureResult {
      if constexpr (is_complex_v<V>)
        return run_typed<I, V>(a.cast<I, V>(), options, format, min_iters, min_seconds, timing);
      else
        SPMVJIT_ASSERT(false, "unreachable");
      return {};
    });
  } catch (const std::exception& e) {
    MeasureResult r;
    r.format = format.empty() ? "auto" : format;
    r.error = e.what();
    return r;
  }
}

MeasureResult measure(const HostCsr<int64_t, double>& a, IndexType index, ValueType value,
                      const spmv_options_t& options, const std::string& format, int min_iters,
                      double min_seconds, TimingModes timing) {
  try {
    return dispatch_types(index, value, [&]<class I, class V>() {
      return run_typed<I, V>(a.cast<I, V>(), options, format, min_iters, min_seconds, timing);
    });
  } catch (const std::exception& e) {
    MeasureResult r;
    r.format = format.empty() ? "auto" : format;
    r.error = e.what();
    return r;
  }
}

}  // namespace spmvjit::cli
