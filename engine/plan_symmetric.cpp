// Plans of a matrix declared symmetric (spmv_options_t::matrix_type): the triangle given is
// validated and the full matrix built on the host (engine/symmetric.cpp) before the plan proper;
// the planner may then choose sym_diag, which stores one triangle again, or any other format.
#include <chrono>

#include "engine/plan.hpp"
#include "engine/validate.hpp"

namespace spmvjit {
namespace {

using Clock = std::chrono::steady_clock;
double since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

}  // namespace

CsrRef Plan::expand_symmetric_input(const CsrRef& user, bool dev, int base, HostSymmetric& out) {
  const auto t0 = Clock::now();
  validate_sizes(user, base);
  AlignedBuffer copies[3];  // device input, downloaded
  const CsrRef a = host_view(user, dev, copies);
  validate_csr(a, base);
  out = expand_symmetric_on_host(a, base, fill_upper_, {hermitian_, conjugated_symmetric()});
  symmetric_position_ = std::move(out.position);
  timings_.symmetric = since(t0);
  return out.ref;
}

AlignedBuffer Plan::expand_symmetric_update(const void* values, spmv_memory_t memory) {
  const size_t vs = size_of(value_);
  AlignedBuffer fetched;
  if (memory == SPMV_MEMORY_DEVICE && input_nnz_) {
    if (backend_->is_host()) fail(SPMV_STATUS_INVALID_VALUE, "device values for a CPU plan");
    fetched = AlignedBuffer(vs * size_t(input_nnz_));
    backend_->download(fetched.data(), values, fetched.bytes());
    values = fetched.data();
  }
  AlignedBuffer expanded(vs * size_t(nnz_));
  if (input_nnz_)
    expand_symmetric_values(values, expanded.data(), symmetric_position_.data(), input_nnz_, index_, value_,
                            {hermitian_, conjugated_symmetric()});
  return expanded;
}

Json Plan::symmetric_json() const {
  if (!symmetric_) return nullptr;
  const bool one = choice_.format->stores_one_triangle();
  return Json::object(
      {{"kind", hermitian_ ? "hermitian" : "symmetric"},
       {"conjugated", conjugated_symmetric()},  // op(A) = conj(A): A^H of a symmetric one, A^T of a Hermitian
       {"fill", fill_upper_ ? "upper" : "lower"},
       {"input_nnz", input_nnz_},
       {"full_nnz", nnz_},
       {"storage", one ? "one triangle" : "full matrix"},
       {"why", one ? std::string("the chosen format stores the upper diagonals once and reads each twice")
                   : std::string("the chosen format stores the full matrix, built at plan time (formats "
                                 "that store one triangle: sym_diag, for banded matrices)")},
       {"seconds", timings_.symmetric},
       {"position_bytes", int64_t(symmetric_position_.bytes())}});
}

}  // namespace spmvjit
