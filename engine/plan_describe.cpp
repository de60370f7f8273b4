// What a plan reports: describe()'s JSON (format, kernel, cache, bytes, planner, timings), the
// bytes per SpMV it is judged by, and a host copy of its format arrays.
#include <algorithm>
#include <cstring>
#include <string>

#include "engine/plan.hpp"

namespace spmvjit {

FormatData Plan::host_data() const {
  FormatData d;
  d.format = data_.format;
  d.params = data_.params;
  d.index = data_.index;
  d.value = data_.value;
  for (const HostArray& h : data_.arrays) {
    HostArray c;
    c.name = h.name;
    c.count = h.count;
    c.elem = h.elem;
    c.kind = h.kind;
    c.buf = AlignedBuffer(size_t(h.count) * h.elem);
    if (h.device)
      backend_->download(c.buf.data(), h.device.get(), c.buf.bytes());
    else if (h.buf.bytes())
      std::memcpy(c.buf.data(), h.buf.data(), c.buf.bytes());
    d.arrays.push_back(std::move(c));
  }
  std::copy(std::begin(data_.ints), std::end(data_.ints), std::begin(d.ints));
  d.stored_entries = data_.stored_entries;
  d.matrix_bytes = data_.matrix_bytes;
  d.scratch_bytes = data_.scratch_bytes;
  d.steps = data_.steps;
  d.facts = data_.facts;
  return d;
}

int64_t Plan::bytes_per_spmv(bool beta_zero) const {
  const int64_t vs = int64_t(size_of(value_));
  return data_.matrix_bytes + vectors_ * (cols_ * vs + rows_ * vs * (beta_zero ? 1 : 2));
}

int64_t Plan::csr_equivalent_bytes(bool beta_zero) const {
  const int64_t is = int64_t(size_of(index_)), vs = int64_t(size_of(value_));
  return (rows_ + 1) * is + nnz_ * (is + vs) + vectors_ * (cols_ * vs + rows_ * vs * (beta_zero ? 1 : 2));
}

Json Plan::describe_json() const {
  const PlanTimings& t = timings_;
  const CacheOutcome k = cache();  // once: the background compile may finish meanwhile
  Json j = Json::object({{"format", data_.format},
                         {"params", params_json(data_.params)},
                         {"backend", to_string(backend_->kind())},
                         {"target", target_.target},
                         {"conversion", converted_on_device_ ? "device" : "host"},
                         {"vectors", vectors_},
                         {"layout", row_major_ ? "row-major" : "column-major"},
                         {"operation", operation_ == SPMV_OPERATION_NON_TRANSPOSE ? "A"
                                       : operation_ == SPMV_OPERATION_TRANSPOSE   ? "A^T"
                                                                                  : "A^H"},
                         {"threads", worker_threads_},
                         {"parts", target_.threads},
                         {"deterministic", deterministic_},
                         {"index", to_string(index_)},
                         {"value", to_string(value_)},
                         {"kernel", Json::object({{"spec", spec_.serialize()},
                                                  {"key", k.key},
                                                  {"cache", k.where},
                                                  {"tier", kernel_tier()},
                                                  {"note", k.note}})},
                         {"update_values", values_update()},
                         {"pattern", pattern_source()},
                         {"values", Json::object({{"codec", to_string(value_codec())},
                                                  {"table", value_codec() == ValueCodec::plain
                                                                ? int64_t(0)
                                                                : int64_t(value_table_.bits.size())}})},
                         {"bytes", Json::object({{"matrix", data_.matrix_bytes},
                                                 {"per_spmv", bytes_per_spmv(false)},
                                                 {"csr_equivalent", csr_equivalent_bytes(false)},
                                                 {"stored_entries", data_.stored_entries},
                                                 {"device", device_bytes_}})},
                         {"facts", data_.facts},
                         {"transpose", transpose_json()},
                         {"symmetric", symmetric_json()},
                         {"planner", Json::object({{"why", choice_.why},
                                                   {"candidates", choice_.considered_json()},
                                                   {"measured", measured_}})},
                         {"stats", stats_.to_json()},
                         {"timings", Json::object({{"backend_init", t.backend_init},
                                                   {"input_upload", t.input_upload},
                                                   {"transpose", t.transpose},
                                                   {"symmetric", t.symmetric},
                                                   {"validate", t.validate},
                                                   {"stats", t.stats},
                                                   {"plan", t.plan},
                                                   {"convert", t.convert},
                                                   {"codegen", t.codegen},
                                                   {"compile", t.compile},
                                                   {"load", t.load},
                                                   {"upload", t.upload},
                                                   {"total", t.total}})}});
  j["threads_requested"] = threads_requested_;  // options.threads; 0: the pool's size
  if (backend_->kind() == BackendKind::cpu) {
    const int pool = backend_->target().threads;
    j["pool_threads"] = pool;
    if (threads_requested_ > pool)
      j["threads_note"] = std::to_string(threads_requested_) +
                          " threads requested; the process's shared pool has " + std::to_string(pool) +
                          " ($SPMVJIT_NUM_THREADS, $OMP_NUM_THREADS or the affinity mask)";
  }
  return j;
}

const std::string& Plan::describe() {
  describe_ = describe_json().dump();
  return describe_;
}

}  // namespace spmvjit
