// The extension module spmvjit._spmvjit: Plan over the public C API (spmvjit.h) and the version.
// The friendlier entry points (spmvjit.plan, aslinearoperator, errors) are in python/spmvjit/.
#include <pybind11/pybind11.h>
#include <spmvjit/spmvjit.h>

#include "plan.hpp"

namespace py = pybind11;
using spmvjit_py::Plan;

PYBIND11_MODULE(_spmvjit, m) {
  m.doc() = "spmvjit's C API for Python: the class Plan (use spmvjit.plan to make one)";
  m.attr("__version__") = spmv_version();
  m.attr("header_version") = SPMVJIT_VERSION_STRING;
  m.def(
      "status_string", [](int status) { return std::string(spmv_status_string(spmv_status_t(status))); },
      "The C API's name of a status code");

  m.def(
      "_array_info",
      [](py::handle obj) {
        spmvjit_py::ArrayView v = spmvjit_py::view_array(obj, "array");
        py::tuple shape = v.ndim == 1 ? py::make_tuple(v.shape[0]) : py::make_tuple(v.shape[0], v.shape[1]);
        py::tuple strides =
            v.ndim == 1 ? py::make_tuple(v.strides[0]) : py::make_tuple(v.strides[0], v.strides[1]);
        py::dict d;
        d["ptr"] = reinterpret_cast<uintptr_t>(v.data);
        d["shape"] = shape;
        d["strides"] = strides;
        d["dtype"] = spmvjit_py::elem_name(v.elem);
        d["device"] = v.device;
        d["device_id"] = v.device_id;
        d["readonly"] = v.readonly;
        d["contiguous"] = v.contiguous_1d();
        return d;
      },
      py::arg("array"),
      "How the binding reads an array (numpy, __cuda_array_interface__, DLPack): for tests");
  m.def(
      "_stream_handle",
      [](py::handle s) { return reinterpret_cast<uintptr_t>(spmvjit_py::stream_handle(s)); },
      py::arg("stream"), "The CUDA stream handle the binding takes from a stream argument: for tests");

  py::class_<Plan>(m, "Plan", R"(A planned sparse matrix: y = alpha*A@x + beta*y, many times.

Make one with spmvjit.plan(A, ...). Host plans (backend 'cpu') take numpy arrays; GPU plans take
device arrays (__cuda_array_interface__ or DLPack).)")
      .def(py::init<py::handle, py::handle, py::handle, int64_t, int64_t, const std::string&, py::handle,
                    const std::string&, py::handle, int, bool, int, bool, const std::string&>(),
           py::arg("indptr"), py::arg("indices"), py::arg("data"), py::arg("rows"), py::arg("cols"),
           py::arg("backend") = "auto", py::arg("format") = py::none(), py::arg("planning") = "estimate",
           py::arg("cache_dir") = py::none(), py::arg("threads") = 0, py::arg("deterministic") = false,
           py::arg("device") = 0, py::arg("transpose") = false, py::arg("symmetric") = "")
      .def("matvec", &Plan::matvec, py::arg("x"), py::arg("y") = py::none(), py::arg("alpha") = 1.0,
           py::arg("beta") = 0.0, py::arg("stream") = py::none(),
           R"(y = alpha*A@x + beta*y; returns y.

x: cols values of the plan's dtype, contiguous, where the plan runs (host or device).
y: rows values, contiguous and writable, updated in place; None: a new array (beta must be 0;
a device plan then returns a spmvjit.DeviceArray). With beta == 0, y is not read.
stream: CUDA stream (int handle, or an object with .ptr / .cuda_stream / .handle); ignored on CPU.)")
      .def("__matmul__", &Plan::matmul, py::arg("x"), "A @ x (1-D x), or column by column for 2-D x")
      .def("dot", &Plan::matmul, py::arg("x"), "A @ x")
      .def("update_values", &Plan::update_values, py::arg("data"),
           "New values (nnz, the plan's dtype; host or device) for the same sparsity pattern")
      .def("describe", &Plan::describe, "The plan as a dict: format, parameters, statistics, timings")
      .def("_execute_loop_ns", &Plan::execute_loop_ns, py::arg("x"), py::arg("y"), py::arg("iters"),
           "Nanoseconds of `iters` spmv_execute calls made from C++ (no Python in between)")
      .def_property_readonly("shape", [](const Plan& p) { return py::make_tuple(p.rows(), p.cols()); })
      .def_property_readonly("transposed", &Plan::transposed,
                             "True for a plan of A^T (plan(..., transpose=True))")
      .def_property_readonly("nnz", &Plan::nnz)
      .def_property_readonly(
          "dtype", [](const Plan& p) { return py::module_::import("numpy").attr("dtype")(p.value_name()); })
      .def_property_readonly(
          "index_dtype",
          [](const Plan& p) { return py::module_::import("numpy").attr("dtype")(p.index_name()); })
      .def_property_readonly("backend", &Plan::backend_name)
      .def_property_readonly("device", &Plan::device)
      .def_property_readonly("threads", &Plan::threads)
      .def_property_readonly("ndim", [](const Plan&) { return 2; })
      .def("__repr__", [](const Plan& p) {
        return "<spmvjit.Plan " + std::to_string(p.rows()) + "x" + std::to_string(p.cols()) + ", nnz " +
               std::to_string(p.nnz()) + ", " + p.value_name() + "/" + p.index_name() + " on " +
               p.backend_name() + ">";
      });
}
