// Array views for the Python binding: numpy arrays (host), __cuda_array_interface__ and DLPack
// (host or CUDA device) read into one plain struct, with whatever keeps the memory alive.
#pragma once

#include <pybind11/pybind11.h>

#include <cstdint>
#include <memory>
#include <string>

namespace spmvjit_py {

namespace py = pybind11;

// What an array holds, as the C API names it: float/double values, int32/int64 indices.
enum class Elem { kFloat32, kFloat64, kInt32, kInt64, kOther };
const char* elem_name(Elem e);
inline int64_t elem_size(Elem e) { return (e == Elem::kFloat32 || e == Elem::kInt32) ? 4 : 8; }

// One DLPack tensor taken from its capsule: its deleter runs when the view is done with it.
struct DlpackHold;
struct DlpackRelease {
  void operator()(DlpackHold* h) const;
};

struct ArrayView {
  void* data = nullptr;
  int ndim = 0;
  int64_t shape[2] = {0, 0};
  int64_t strides[2] = {0, 0};  // bytes
  Elem elem = Elem::kOther;
  std::string type_text;  // the producer's type, for messages
  bool device = false;    // CUDA device memory (else host)
  int device_id = -1;     // -1: not stated (__cuda_array_interface__ does not say)
  bool readonly = false;
  py::object owner;  // keeps the memory alive while the view is used
  std::unique_ptr<DlpackHold, DlpackRelease> dlpack;

  int64_t size() const { return ndim == 0 ? 1 : (ndim == 1 ? shape[0] : shape[0] * shape[1]); }
  // Elements of a 1-D view (or a 2-D one's columns) are adjacent.
  bool contiguous_1d() const { return ndim == 1 && (shape[0] <= 1 || strides[0] == elem_size(elem)); }
};

// True when obj is a numpy.ndarray; the fast path of execute reads it without Python calls.
bool is_numpy(py::handle obj);
// Any array: numpy (host), __cuda_array_interface__ (device), DLPack (kDLCPU or kDLCUDA).
// stream: the consumer's stream passed to __dlpack__ for CUDA tensors (1 = legacy default).
// Throws TypeError for objects that are none of these. `what` names it in messages.
ArrayView view_array(py::handle obj, const char* what, intptr_t stream = 1);

// The stream handle from an int, an object with .ptr (CuPy), .cuda_stream (PyTorch) or .handle
// (Numba; a ctypes pointer or an int), or None (0: the legacy default stream).
void* stream_handle(py::handle stream);

}  // namespace spmvjit_py
