// Plans of op(A) = A^T (spmv_options_t::operation): A^T built before the plan proper, on the
// host (engine/transpose.cpp) or on the device (engine/transpose_device.cpp), and what describe
// says of it. update_values' scatter of A's values is in plan_update.cpp.
#include <chrono>

#include "engine/device_plan.hpp"
#include "engine/plan.hpp"
#include "engine/validate.hpp"

namespace spmvjit {
namespace {

using Clock = std::chrono::steady_clock;
double since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

}  // namespace

CsrRef Plan::host_view(const CsrRef& user, bool dev, AlignedBuffer (&copies)[3]) const {
  if (!dev) return user;
  const size_t is = size_of(index_), vs = size_of(value_);
  const size_t bytes[3] = {is * size_t(user.rows + 1), is * size_t(user.nnz), vs * size_t(user.nnz)};
  const void* src[3] = {user.row_ptr, user.col_idx, user.val};
  for (int i = 0; i < 3; ++i) {
    copies[i] = AlignedBuffer(bytes[i]);
    if (bytes[i]) backend_->download(copies[i].data(), src[i], bytes[i]);
  }
  CsrRef a = user;
  a.row_ptr = copies[0].data(), a.col_idx = copies[1].data(), a.val = copies[2].data();
  return a;
}

CsrRef Plan::transpose_on_host_input(const CsrRef& user, bool dev, int base, HostTranspose& out) {
  const auto t0 = Clock::now();
  validate_sizes(user, base);
  AlignedBuffer copies[3];  // device input, downloaded
  const CsrRef a = host_view(user, dev, copies);
  validate_csr(a, base);
  out = transpose_on_host(a, base, conjugated());
  transpose_position_ = std::move(out.position);
  timings_.transpose = since(t0);
  return out.ref;
}

void Plan::plan_on_device(const CsrRef& user, int base, const Format* forced) {
  if (!transposed()) return plan_device_csr(user, base, forced);
  SPMVJIT_ASSERT(!conjugated(), "A^H built on the device (complex plans are built on the host)");
  const auto t0 = Clock::now();
  validate_sizes(user, base);
  DevicePlanner dp(*backend_, user, base, cache_dir_);
  dp.analyze();  // validates A before the transpose reads its columns
  DeviceTranspose t = transpose_on_device(dp);
  backend_->synchronize(nullptr);
  device_transpose_position_ = std::move(t.position.device);
  device_bytes_ += int64_t(device_transpose_position_.bytes());
  transposed_on_device_ = true;
  timings_.transpose = since(t0) - (dp.compile_seconds() + dp.load_seconds());
  timings_.compile += dp.compile_seconds();
  timings_.load += dp.load_seconds();
  plan_device_csr(t.ref, 0, forced);  // A^T's arrays are freed on return: the plan copied its pattern
}

Json Plan::transpose_json() const {
  if (!transposed()) return nullptr;
  const int64_t bytes =
      int64_t(transposed_on_device_ ? device_transpose_position_.bytes() : transpose_position_.bytes());
  return Json::object(
      {{"built", transposed_on_device_ ? "device" : "host"},
       {"why", std::string(conjugated() ? "A^H's layout (A^T's, values conjugated)" : "A^T's layout") +
                   " built at plan time (a stable counting sort by column): every format and "
                   "deterministic sums apply to it; a scatter kernel over A would add into y with atomics"},
       {"seconds", timings_.transpose},
       {"position_bytes", bytes}});
}

}  // namespace spmvjit
