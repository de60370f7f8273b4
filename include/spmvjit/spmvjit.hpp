// Thin C++ layer over the C API: RAII plan, exceptions instead of status codes.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>

#include "spmvjit/spmvjit.h"

namespace spmvjit {

class ApiError : public std::runtime_error {
 public:
  ApiError(spmv_status_t status, const std::string& what) : std::runtime_error(what), status_(status) {}
  spmv_status_t status() const { return status_; }

 private:
  spmv_status_t status_;
};

inline void check(spmv_status_t s) {
  if (s != SPMV_STATUS_SUCCESS)
    throw ApiError(s, std::string(spmv_status_string(s)) + ": " + spmv_last_error());
}

struct Options : spmv_options_t {
  Options() { spmv_options_init(this); }
};

// Describes caller-owned CSR arrays; I = int32_t/int64_t, V = float/double.
template <class I, class V>
spmv_csr_t csr_view(int64_t rows, int64_t cols, int64_t nnz, const I* row_ptr, const I* col_idx,
                    const V* values, int index_base = 0, spmv_memory_t memory = SPMV_MEMORY_HOST) {
  static_assert(std::is_same_v<I, int32_t> || std::is_same_v<I, int64_t>, "int32_t or int64_t indices");
  static_assert(std::is_same_v<V, float> || std::is_same_v<V, double>, "float or double values");
  spmv_csr_t a{};
  a.rows = rows;
  a.cols = cols;
  a.nnz = nnz;
  a.row_ptr = row_ptr;
  a.col_idx = col_idx;
  a.values = values;
  a.index_type = std::is_same_v<I, int32_t> ? SPMV_INDEX_INT32 : SPMV_INDEX_INT64;
  a.value_type = std::is_same_v<V, float> ? SPMV_VALUE_FLOAT : SPMV_VALUE_DOUBLE;
  a.index_base = index_base;
  a.memory = memory;
  return a;
}

class SpmvPlan {
 public:
  explicit SpmvPlan(const spmv_csr_t& a, const Options& o = Options()) { check(spmv_plan(&plan_, &a, &o)); }
  SpmvPlan(SpmvPlan&& o) noexcept : plan_(std::exchange(o.plan_, nullptr)) {}
  SpmvPlan& operator=(SpmvPlan&& o) noexcept {
    std::swap(plan_, o.plan_);
    return *this;
  }
  SpmvPlan(const SpmvPlan&) = delete;
  SpmvPlan& operator=(const SpmvPlan&) = delete;
  ~SpmvPlan() {
    if (plan_) spmv_plan_destroy(plan_);
  }

  // y = alpha*A*x + beta*y; V must be the plan's value type.
  template <class V>
  void execute(V alpha, const V* x, V beta, V* y, void* stream = nullptr) const {
    check(spmv_execute(plan_, &alpha, x, &beta, y, stream));
  }
  void update_values(const void* values, spmv_memory_t memory = SPMV_MEMORY_HOST) {
    check(spmv_plan_update_values(plan_, values, memory));
  }
  std::string describe() const {
    const char* json = nullptr;
    check(spmv_plan_describe(plan_, &json));
    return json;
  }
  spmv_plan_t get() const { return plan_; }

 private:
  spmv_plan_t plan_ = nullptr;
};

}  // namespace spmvjit
