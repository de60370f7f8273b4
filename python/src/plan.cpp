// spmvjit._spmvjit.Plan: checks arrays before the C API sees them (the C API cannot check lengths),
// releases the GIL around spmv_plan / spmv_execute / update / destroy, raises spmvjit errors.
#include "plan.hpp"

#include <pybind11/numpy.h>

#include <chrono>

namespace spmvjit_py {

namespace {

[[noreturn]] void type_error(const std::string& text) { throw py::type_error(text); }
[[noreturn]] void value_error(const std::string& text) { throw py::value_error(text); }

spmv_backend_t backend_from(const std::string& s) {
  if (s == "auto") return SPMV_BACKEND_AUTO;
  if (s == "cpu") return SPMV_BACKEND_CPU;
  if (s == "cuda") return SPMV_BACKEND_CUDA;
  if (s == "hip") return SPMV_BACKEND_HIP;
  value_error("backend must be 'auto', 'cpu', 'cuda' or 'hip', got '" + s + "'");
}

std::string type_text(const ArrayView& v) {
  return v.elem == Elem::kOther ? v.type_text : std::string(elem_name(v.elem));
}

// The pure-Python helpers (spmvjit._errors, spmvjit._cuda), imported on first use.
py::object helper(const char* module, const char* name) { return py::module_::import(module).attr(name); }

}  // namespace

void raise_status(spmv_status_t status) {
  const std::string text = spmv_last_error();
  py::object cls = helper("spmvjit._errors", "error_class")(int(status));
  py::object exc = cls(text.empty() ? std::string(spmv_status_string(status)) : text, int(status));
  PyErr_SetObject(cls.ptr(), exc.ptr());
  throw py::error_already_set();
}

Plan::Plan(py::handle indptr, py::handle indices, py::handle data, int64_t rows, int64_t cols,
           const std::string& backend, py::handle format, const std::string& planning, py::handle cache_dir,
           int threads, bool deterministic, int device, bool transpose, const std::string& symmetric)
    : device_(device) {
  if (rows < 0 || cols < 0)
    value_error("negative shape (" + std::to_string(rows) + ", " + std::to_string(cols) + ")");
  if (threads < 0) value_error("threads must be >= 0 (0: all of the pool), got " + std::to_string(threads));
  spmv_options_t opt;
  spmv_options_init(&opt);
  opt.backend = backend_from(backend);
  if (planning != "estimate" && planning != "measure")
    value_error("planning must be 'estimate' or 'measure', got '" + planning + "'");
  opt.planning = planning == "measure" ? SPMV_PLANNING_MEASURE : SPMV_PLANNING_ESTIMATE;
  opt.device = device;
  opt.threads = threads;
  opt.deterministic = deterministic ? 1 : 0;
  opt.operation = transpose ? SPMV_OPERATION_TRANSPOSE : SPMV_OPERATION_NON_TRANSPOSE;
  if (!symmetric.empty() && symmetric != "lower" && symmetric != "upper")
    value_error("symmetric must be None, 'lower' or 'upper', got '" + symmetric + "'");
  opt.matrix_type = symmetric.empty() ? SPMV_MATRIX_GENERAL : SPMV_MATRIX_SYMMETRIC;
  opt.fill_mode = symmetric == "upper" ? SPMV_FILL_UPPER : SPMV_FILL_LOWER;
  std::string format_s, cache_s;
  if (!format.is_none()) {
    format_s = py::str(format);
    opt.format = format_s.c_str();
  }
  if (!cache_dir.is_none()) {
    cache_s = py::str(cache_dir);
    opt.cache_dir = cache_s.c_str();
  }

  ArrayView p = view_array(indptr, "indptr"), i = view_array(indices, "indices"),
            d = view_array(data, "data");
  if (p.device != i.device || p.device != d.device)
    type_error("indptr, indices and data must all be host arrays or all be device arrays");
  const ArrayView* all[3] = {&p, &i, &d};
  const char* names[3] = {"indptr", "indices", "data"};
  for (int k = 0; k < 3; ++k) {
    if (!all[k]->contiguous_1d()) value_error(std::string(names[k]) + " must be a contiguous 1-D array");
    if (all[k]->device && all[k]->device_id >= 0 && all[k]->device_id != device)
      value_error(std::string(names[k]) + " is on device " + std::to_string(all[k]->device_id) +
                  ", the plan asks for device " + std::to_string(device));
  }
  if (p.elem != Elem::kInt32 && p.elem != Elem::kInt64)
    type_error("indptr must be int32 or int64, got " + type_text(p));
  if (i.elem != p.elem)
    type_error("indices (" + type_text(i) + ") and indptr (" + type_text(p) + ") must have one index type");
  if (d.elem != Elem::kFloat32 && d.elem != Elem::kFloat64)
    type_error("data must be float32 or float64, got " + type_text(d));
  if (p.shape[0] != rows + 1)
    value_error("indptr has " + std::to_string(p.shape[0]) + " entries, a matrix of " + std::to_string(rows) +
                " rows needs rows + 1 = " + std::to_string(rows + 1));
  if (i.shape[0] != d.shape[0])
    value_error("indices has " + std::to_string(i.shape[0]) + " entries but data has " +
                std::to_string(d.shape[0]));
  if (p.device && opt.backend == SPMV_BACKEND_CPU)
    type_error("device arrays need a GPU backend ('auto' or 'cuda'); backend 'cpu' takes host arrays");

  spmv_csr_t a{};
  a.rows = rows;
  a.cols = cols;
  a.nnz = d.shape[0];
  a.row_ptr = p.data;
  a.col_idx = i.data;
  a.values = d.data;
  a.index_type = p.elem == Elem::kInt32 ? SPMV_INDEX_INT32 : SPMV_INDEX_INT64;
  a.value_type = d.elem == Elem::kFloat32 ? SPMV_VALUE_FLOAT : SPMV_VALUE_DOUBLE;
  a.index_base = 0;
  a.memory = p.device ? SPMV_MEMORY_DEVICE : SPMV_MEMORY_HOST;
  spmv_status_t st;
  {
    py::gil_scoped_release release;  // the views above keep the arrays alive meanwhile
    st = spmv_plan(&plan_, &a, &opt);
  }
  if (st != SPMV_STATUS_SUCCESS) raise_status(st);
  st = spmv_plan_info(plan_, &info_);
  if (st != SPMV_STATUS_SUCCESS) raise_status(st);
}

Plan::~Plan() {
  if (!plan_) return;
  py::gil_scoped_release release;  // may wait for a background compile or synchronize a device
  spmv_plan_destroy(plan_);
}

const char* Plan::backend_name() const {
  switch (info_.backend) {
    case SPMV_BACKEND_CPU: return "cpu";
    case SPMV_BACKEND_CUDA: return "cuda";
    case SPMV_BACKEND_HIP: return "hip";
    default: return "auto";
  }
}

void Plan::check_memory(const ArrayView& v, const char* what) const {
  if (on_device() && !v.device)
    type_error(std::string("this plan runs on ") + backend_name() + ": " + what +
               " must be a device array (__cuda_array_interface__ or DLPack kDLCUDA), got a host array");
  if (!on_device() && v.device)
    type_error(std::string("this plan runs on the CPU: ") + what +
               " must be a host array, got a device array");
  if (v.device && v.device_id >= 0 && v.device_id != device_)
    value_error(std::string(what) + " is on device " + std::to_string(v.device_id) + ", the plan on device " +
                std::to_string(device_));
}

void Plan::check_vector(const ArrayView& v, const char* what, int64_t length, bool write) const {
  check_memory(v, what);
  if (v.elem != value_elem())
    type_error(std::string(what) + " must be " + value_name() + " (the matrix's type), got " + type_text(v));
  if (v.ndim != 1)
    value_error(std::string(what) + " must be 1-D, got " + std::to_string(v.ndim) + " dimensions");
  if (v.shape[0] != length)
    value_error(std::string(what) + " has length " + std::to_string(v.shape[0]) + ", expected " +
                std::to_string(length) + " (matrix shape " + std::to_string(rows()) + " x " +
                std::to_string(cols()) + ")");
  if (!v.contiguous_1d()) value_error(std::string(what) + " must be contiguous");
  if (write && v.readonly) value_error(std::string(what) + " is read-only");
}

void Plan::execute(double alpha, const void* x, double beta, void* y, void* stream) {
  spmv_status_t st;
  if (info_.value_type == SPMV_VALUE_FLOAT) {
    const float a = float(alpha), b = float(beta);
    py::gil_scoped_release release;
    st = spmv_execute_typed(plan_, SPMV_VALUE_FLOAT, &a, x, &b, y, stream);
  } else {
    py::gil_scoped_release release;
    st = spmv_execute_typed(plan_, SPMV_VALUE_DOUBLE, &alpha, x, &beta, y, stream);
  }
  if (st != SPMV_STATUS_SUCCESS) raise_status(st);
}

py::object Plan::new_output(int64_t rows, int64_t cols, void* stream) {
  if (on_device()) {  // its __cuda_array_interface__ names the stream it is written on (1: legacy)
    py::tuple shape = cols < 0 ? py::make_tuple(rows) : py::make_tuple(rows, cols);
    return helper("spmvjit._cuda", "DeviceArray")(shape, value_name(), device_, "F",
                                                  stream ? uintptr_t(stream) : uintptr_t(1));
  }
  std::vector<py::ssize_t> shape{rows}, strides{value_size()};
  if (cols >= 0) {
    shape.push_back(cols);
    strides.push_back(value_size() * rows);  // column-major: each column is one contiguous y
  }
  if (info_.value_type == SPMV_VALUE_FLOAT) return py::array_t<float>(shape, strides);
  return py::array_t<double>(shape, strides);
}

py::object Plan::matvec(py::handle x, py::handle y, double alpha, double beta, py::handle stream) {
  void* s = stream_handle(stream);
  ArrayView xv = view_array(x, "x", s ? intptr_t(s) : 1);
  check_vector(xv, "x", cols(), false);
  py::object out;
  if (y.is_none()) {
    if (beta != 0.0) value_error("beta != 0 needs y (y = alpha*A@x + beta*y)");
    out = new_output(rows(), -1, s);
  } else {
    out = py::reinterpret_borrow<py::object>(y);
  }
  ArrayView yv = view_array(out, "y", s ? intptr_t(s) : 1);
  check_vector(yv, "y", rows(), true);
  const char* xb = static_cast<const char*>(xv.data);
  const char* yb = static_cast<const char*>(yv.data);
  if (rows() > 0 && cols() > 0 && xb < yb + rows() * value_size() && yb < xb + cols() * value_size())
    value_error("x and y overlap: y must be a separate array");
  execute(alpha, xv.data, beta, yv.data, s);
  return out;
}

py::object Plan::matmul(py::handle x) {
  ArrayView xv = view_array(x, "x");
  if (xv.ndim == 1) return matvec(x, py::none(), 1.0, 0.0, py::none());
  check_memory(xv, "x");
  if (xv.elem != value_elem())
    type_error(std::string("x must be ") + value_name() + " (the matrix's type), got " + type_text(xv));
  if (xv.shape[0] != cols())
    value_error("x has " + std::to_string(xv.shape[0]) + " rows, the matrix " + std::to_string(cols()) +
                " columns");
  py::object xf = py::reinterpret_borrow<py::object>(x);
  if (xv.shape[0] > 1 && xv.strides[0] != value_size()) {  // each column must be one contiguous x
    if (on_device()) value_error("a 2-D device x must have contiguous columns (Fortran order)");
    xf = py::module_::import("numpy").attr("asfortranarray")(x);
    xv = view_array(xf, "x");
  }
  const int64_t k = xv.shape[1];
  py::object out = new_output(rows(), k, nullptr);
  ArrayView yv = view_array(out, "y");
  const char* xb = static_cast<const char*>(xv.data);
  char* yb = static_cast<char*>(yv.data);
  for (int64_t j = 0; j < k; ++j) execute(1.0, xb + j * xv.strides[1], 0.0, yb + j * yv.strides[1], nullptr);
  return out;
}

void Plan::update_values(py::handle data) {
  ArrayView v = view_array(data, "data");
  if (v.elem != value_elem())
    type_error(std::string("data must be ") + value_name() + " (the matrix's type), got " + type_text(v));
  if (v.ndim != 1 || v.shape[0] != nnz())
    value_error("data must be 1-D with nnz = " + std::to_string(nnz()) + " entries, got shape (" +
                std::to_string(v.shape[0]) + (v.ndim == 2 ? ", " + std::to_string(v.shape[1]) : "") + ")");
  if (!v.contiguous_1d()) value_error("data must be contiguous");
  if (v.device && v.device_id >= 0 && v.device_id != device_)
    value_error("data is on device " + std::to_string(v.device_id) + ", the plan on device " +
                std::to_string(device_));
  spmv_status_t st;
  {
    py::gil_scoped_release release;
    st = spmv_plan_update_values(plan_, v.data, v.device ? SPMV_MEMORY_DEVICE : SPMV_MEMORY_HOST);
  }
  if (st != SPMV_STATUS_SUCCESS) raise_status(st);
}

py::object Plan::describe() {
  const char* json = nullptr;
  const spmv_status_t st = spmv_plan_describe(plan_, &json);
  if (st != SPMV_STATUS_SUCCESS) raise_status(st);
  return py::module_::import("json").attr("loads")(py::str(json));
}

int64_t Plan::execute_loop_ns(py::handle x, py::handle y, int64_t iters) {
  ArrayView xv = view_array(x, "x"), yv = view_array(y, "y");
  check_vector(xv, "x", cols(), false);
  check_vector(yv, "y", rows(), true);
  const double a = 1.0, b = 0.0;
  const float af = 1.0f, bf = 0.0f;
  const bool f = info_.value_type == SPMV_VALUE_FLOAT;
  spmv_status_t st = SPMV_STATUS_SUCCESS;
  std::chrono::steady_clock::duration took{};
  {
    py::gil_scoped_release release;
    const auto t0 = std::chrono::steady_clock::now();
    for (int64_t it = 0; it < iters && st == SPMV_STATUS_SUCCESS; ++it)
      st = f ? spmv_execute(plan_, &af, xv.data, &bf, yv.data, nullptr)
             : spmv_execute(plan_, &a, xv.data, &b, yv.data, nullptr);
    took = std::chrono::steady_clock::now() - t0;
  }
  if (st != SPMV_STATUS_SUCCESS) raise_status(st);
  return std::chrono::duration_cast<std::chrono::nanoseconds>(took).count();
}

}  // namespace spmvjit_py
