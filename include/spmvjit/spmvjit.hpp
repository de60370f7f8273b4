// Thin C++ layer over the C API: RAII plan, exceptions instead of status codes. C++14 or later.
#pragma once

#include <complex>
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

// The C API's code for a value type: float, double, std::complex<float>, std::complex<double>
// (layout-compatible with C99's float _Complex and double _Complex); anything else does not compile.
template <class V>
struct ValueTypeOf;
template <>
struct ValueTypeOf<float> : std::integral_constant<spmv_value_type_t, SPMV_VALUE_FLOAT> {};
template <>
struct ValueTypeOf<double> : std::integral_constant<spmv_value_type_t, SPMV_VALUE_DOUBLE> {};
template <>
struct ValueTypeOf<std::complex<float>>
    : std::integral_constant<spmv_value_type_t, SPMV_VALUE_COMPLEX_FLOAT> {};
template <>
struct ValueTypeOf<std::complex<double>>
    : std::integral_constant<spmv_value_type_t, SPMV_VALUE_COMPLEX_DOUBLE> {};

// Describes caller-owned CSR arrays; I = int32_t/int64_t, V = float, double, std::complex<float>
// or std::complex<double>.
template <class I, class V>
spmv_csr_t csr_view(int64_t rows, int64_t cols, int64_t nnz, const I* row_ptr, const I* col_idx,
                    const V* values, int index_base = 0, spmv_memory_t memory = SPMV_MEMORY_HOST) {
  static_assert(std::is_same<I, int32_t>::value || std::is_same<I, int64_t>::value,
                "int32_t or int64_t indices");
  spmv_csr_t a{};
  a.rows = rows;
  a.cols = cols;
  a.nnz = nnz;
  a.row_ptr = row_ptr;
  a.col_idx = col_idx;
  a.values = values;
  a.index_type = std::is_same<I, int32_t>::value ? SPMV_INDEX_INT32 : SPMV_INDEX_INT64;
  a.value_type = ValueTypeOf<V>::value;
  a.index_base = index_base;
  a.memory = memory;
  return a;
}

inline const char* value_type_name(spmv_value_type_t t) {
  switch (t) {
    case SPMV_VALUE_FLOAT: return "float";
    case SPMV_VALUE_DOUBLE: return "double";
    case SPMV_VALUE_COMPLEX_FLOAT: return "complex float";
    case SPMV_VALUE_COMPLEX_DOUBLE: return "complex double";
  }
  return "unknown";
}

class SpmvPlan {
 public:
  // The plan's value type is kept: execute<V> with another V throws before calling the library.
  explicit SpmvPlan(const spmv_csr_t& a, const Options& o = Options()) {
    check(spmv_plan(&plan_, &a, &o));
    value_type_ = a.value_type;  // read once spmv_plan has checked it is a valid enum value
  }
  SpmvPlan(SpmvPlan&& o) noexcept : plan_(std::exchange(o.plan_, nullptr)), value_type_(o.value_type_) {}
  SpmvPlan& operator=(SpmvPlan&& o) noexcept {
    std::swap(plan_, o.plan_);
    std::swap(value_type_, o.value_type_);
    return *this;
  }
  SpmvPlan(const SpmvPlan&) = delete;
  SpmvPlan& operator=(const SpmvPlan&) = delete;
  ~SpmvPlan() {
    if (plan_) spmv_plan_destroy(plan_);
  }

  // y = alpha*A*x + beta*y; V must be the plan's value type (the matrix's; std::complex<float> or
  // <double> for complex plans, alpha and beta complex too): another throws
  // ApiError(SPMV_STATUS_INVALID_VALUE) and writes nothing (checked here and by the library).
  template <class V>
  void execute(V alpha, const V* x, V beta, V* y, void* stream = nullptr) const {
    const spmv_value_type_t t = ValueTypeOf<V>::value;
    if (plan_ && t != value_type_)
      throw ApiError(SPMV_STATUS_INVALID_VALUE, std::string("spmvjit::SpmvPlan::execute<") +
                                                    value_type_name(t) + ">: the plan's values are " +
                                                    value_type_name(value_type_) +
                                                    "; alpha, x, beta and y must be too");
    check(spmv_execute_typed(plan_, t, &alpha, x, &beta, y, stream));
  }
  // Y = alpha*A*X + beta*Y for the plan's k vectors (Options::vectors) in its layout, with leading
  // dimensions ldx and ldy (spmm_execute); V as in execute.
  template <class V>
  void execute_many(V alpha, const V* x, int64_t ldx, V beta, V* y, int64_t ldy,
                    void* stream = nullptr) const {
    const spmv_value_type_t t = ValueTypeOf<V>::value;
    if (plan_ && t != value_type_)
      throw ApiError(SPMV_STATUS_INVALID_VALUE, std::string("spmvjit::SpmvPlan::execute_many<") +
                                                    value_type_name(t) + ">: the plan's values are " +
                                                    value_type_name(value_type_) +
                                                    "; alpha, X, beta and Y must be too");
    check(spmm_execute(plan_, &alpha, x, ldx, &beta, y, ldy, stream));
  }
  spmv_value_type_t value_type() const { return value_type_; }
  // Sizes, types, backend and threads (spmv_plan_info).
  spmv_plan_info_t info() const {
    spmv_plan_info_t i = SPMV_PLAN_INFO_INIT;
    check(spmv_plan_info(plan_, &i));
    return i;
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
  spmv_value_type_t value_type_ = SPMV_VALUE_DOUBLE;
};

}  // namespace spmvjit
