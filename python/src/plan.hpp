// spmvjit._spmvjit.Plan: one spmv_plan_t, its execute (host or CUDA arrays), describe and update.
#pragma once

#include <spmvjit/spmvjit.h>

#include <string>

#include "arrays.hpp"

namespace spmvjit_py {

// Raises the spmvjit exception for status (the class from spmvjit._errors) with
// spmv_last_error()'s text.
[[noreturn]] void raise_status(spmv_status_t status);

class Plan {
 public:
  // Strict: the arrays must already be 1-D, contiguous, of the C API's types and all in one
  // memory (the Python function spmvjit.plan converts friendlier inputs first).
  Plan(py::handle indptr, py::handle indices, py::handle data, int64_t rows, int64_t cols,
       const std::string& backend, py::handle format, const std::string& planning, py::handle cache_dir,
       int threads, bool deterministic, int device, bool transpose, const std::string& symmetric = "");
  ~Plan();
  Plan(const Plan&) = delete;
  Plan& operator=(const Plan&) = delete;

  // y = alpha*A*x + beta*y; y None: a new array (beta must then be 0). Returns y.
  py::object matvec(py::handle x, py::handle y, double alpha, double beta, py::handle stream);
  // A @ x for 1-D x, and column by column for 2-D x (n x k): a new array.
  py::object matmul(py::handle x);
  void update_values(py::handle data);
  py::object describe();
  // Times `iters` executes from C++ with no Python in between (the C API's own cost per call).
  int64_t execute_loop_ns(py::handle x, py::handle y, int64_t iters);

  // op(A)'s sizes (y has rows(), x cols()): A's, swapped for a plan of A^T.
  int64_t rows() const { return transposed() ? info_.cols : info_.rows; }
  int64_t cols() const { return transposed() ? info_.rows : info_.cols; }
  bool transposed() const { return info_.operation != SPMV_OPERATION_NON_TRANSPOSE; }
  int64_t nnz() const { return info_.nnz; }
  bool on_device() const { return info_.backend != SPMV_BACKEND_CPU; }
  int device() const { return device_; }
  int threads() const { return info_.threads; }
  const char* value_name() const { return info_.value_type == SPMV_VALUE_FLOAT ? "float32" : "float64"; }
  const char* index_name() const { return info_.index_type == SPMV_INDEX_INT32 ? "int32" : "int64"; }
  const char* backend_name() const;

 private:
  Elem value_elem() const { return info_.value_type == SPMV_VALUE_FLOAT ? Elem::kFloat32 : Elem::kFloat64; }
  int64_t value_size() const { return info_.value_type == SPMV_VALUE_FLOAT ? 4 : 8; }
  void check_vector(const ArrayView& v, const char* what, int64_t length, bool write) const;
  void check_memory(const ArrayView& v, const char* what) const;
  // 1-D when cols < 0, else column-major; on a GPU a DeviceArray written on `stream`.
  py::object new_output(int64_t rows, int64_t cols, void* stream);
  void execute(double alpha, const void* x, double beta, void* y, void* stream);

  spmv_plan_t plan_ = nullptr;
  spmv_plan_info_t info_ = SPMV_PLAN_INFO_INIT;
  int device_ = 0;
};

}  // namespace spmvjit_py
