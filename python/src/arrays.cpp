// Reads numpy arrays, __cuda_array_interface__ (v2/v3) and DLPack capsules into ArrayView.
#include "arrays.hpp"

#include <pybind11/numpy.h>

#include <cstring>

namespace spmvjit_py {

namespace {

// DLPack's ABI (dlpack.h, v0.x "dltensor" capsules), declared here: no header dependency.
struct DLDevice {
  int32_t device_type;
  int32_t device_id;
};
struct DLDataType {
  uint8_t code;
  uint8_t bits;
  uint16_t lanes;
};
struct DLTensor {
  void* data;
  DLDevice device;
  int32_t ndim;
  DLDataType dtype;
  int64_t* shape;
  int64_t* strides;  // elements; null: compact row-major
  uint64_t byte_offset;
};
struct DLManagedTensor {
  DLTensor dl_tensor;
  void* manager_ctx;
  void (*deleter)(DLManagedTensor* self);
};
enum : int32_t { kDLCPU = 1, kDLCUDA = 2, kDLCUDAHost = 3, kDLCUDAManaged = 13 };
enum : uint8_t { kDLInt = 0, kDLUInt = 1, kDLFloat = 2 };

// numpy's type numbers (stable since numpy 1.0; the descriptor's type_num keeps its offset in 2.x).
enum : int { kNpyInt = 5, kNpyLong = 7, kNpyLongLong = 9, kNpyFloat = 11, kNpyDouble = 12 };
enum : int { kNpyAligned = 0x100, kNpyWriteable = 0x400 };

[[noreturn]] void type_error(const std::string& text) { throw py::type_error(text); }
[[noreturn]] void value_error(const std::string& text) { throw py::value_error(text); }

Elem elem_from(char kind, int64_t bytes) {
  if (kind == 'f' && bytes == 4) return Elem::kFloat32;
  if (kind == 'f' && bytes == 8) return Elem::kFloat64;
  if (kind == 'i' && bytes == 4) return Elem::kInt32;
  if (kind == 'i' && bytes == 8) return Elem::kInt64;
  return Elem::kOther;
}

void set_shape(ArrayView& v, const char* what, int ndim, const int64_t* shape, const int64_t* strides_bytes) {
  if (ndim < 1 || ndim > 2)
    value_error(std::string(what) + " must be 1-D (or 2-D for @), got " + std::to_string(ndim) +
                " dimensions");
  v.ndim = ndim;
  for (int d = 0; d < ndim; ++d) v.shape[d] = shape[d];
  if (strides_bytes) {
    for (int d = 0; d < ndim; ++d) v.strides[d] = strides_bytes[d];
  } else {  // compact row-major
    const int64_t e = elem_size(v.elem);
    v.strides[ndim - 1] = e;
    if (ndim == 2) v.strides[0] = e * shape[1];
  }
}

ArrayView view_numpy(py::handle obj, const char* what) {
  auto* a = py::detail::array_proxy(obj.ptr());
  auto* d = py::detail::array_descriptor_proxy(a->descr);
  ArrayView v;
  Elem e = Elem::kOther;
  switch (d->type_num) {
    case kNpyFloat: e = Elem::kFloat32; break;
    case kNpyDouble: e = Elem::kFloat64; break;
    case kNpyInt: e = Elem::kInt32; break;
    case kNpyLong: e = sizeof(long) == 8 ? Elem::kInt64 : Elem::kInt32; break;
    case kNpyLongLong: e = Elem::kInt64; break;
  }
  if (d->byteorder == '>') e = Elem::kOther;  // not native on the little-endian hosts we run on
  v.elem = e;
  if (e == Elem::kOther) v.type_text = py::str(obj.attr("dtype"));
  if (!(a->flags & kNpyAligned)) value_error(std::string(what) + " is not aligned");
  int64_t shape[2] = {0, 0}, strides[2] = {0, 0};
  const int nd = a->nd;
  if (nd < 1 || nd > 2)
    value_error(std::string(what) + " must be 1-D (or 2-D for @), got " + std::to_string(nd) + " dimensions");
  for (int i = 0; i < nd; ++i) {
    shape[i] = a->dimensions[i];
    strides[i] = a->strides[i];
  }
  set_shape(v, what, nd, shape, strides);
  v.data = a->data;
  v.readonly = !(a->flags & kNpyWriteable);
  v.owner = py::reinterpret_borrow<py::object>(obj);
  return v;
}

Elem elem_from_typestr(const std::string& t) {
  if (t.size() < 3 || t[0] == '>') return Elem::kOther;
  try {
    return elem_from(t[1], std::stoll(t.substr(2)));
  } catch (const std::exception&) {
    return Elem::kOther;
  }
}

ArrayView view_cai(py::handle obj, const char* what) {
  py::dict d = obj.attr("__cuda_array_interface__");
  ArrayView v;
  const std::string typestr = py::str(d["typestr"]);
  v.elem = elem_from_typestr(typestr);
  v.type_text = typestr;
  if (d.contains("mask") && !d["mask"].is_none())
    type_error(std::string(what) + ": masked __cuda_array_interface__ arrays are not supported");
  py::tuple shape = d["shape"];
  py::tuple data = d["data"];
  int64_t sh[2] = {0, 0}, st[2] = {0, 0};
  const int nd = int(shape.size());
  if (nd < 1 || nd > 2)
    value_error(std::string(what) + " must be 1-D (or 2-D for @), got " + std::to_string(nd) + " dimensions");
  for (int i = 0; i < nd; ++i) sh[i] = shape[i].cast<int64_t>();
  bool has_strides = d.contains("strides") && !d["strides"].is_none();
  if (has_strides) {
    py::tuple s = d["strides"];
    for (int i = 0; i < nd; ++i) st[i] = s[i].cast<int64_t>();
  }
  set_shape(v, what, nd, sh, has_strides ? st : nullptr);
  v.data = reinterpret_cast<void*>(data[0].cast<uintptr_t>());
  v.readonly = data[1].cast<bool>();
  v.device = true;
  v.owner = py::reinterpret_borrow<py::object>(obj);
  return v;
}

}  // namespace

struct DlpackHold {
  DLManagedTensor* tensor;
};

void DlpackRelease::operator()(DlpackHold* h) const {
  if (h->tensor && h->tensor->deleter) h->tensor->deleter(h->tensor);
  delete h;
}

namespace {

ArrayView view_dlpack(py::handle obj, const char* what, intptr_t stream) {
  py::tuple dev = obj.attr("__dlpack_device__")();
  const int type = dev[0].cast<int>();
  const bool device = type == kDLCUDA || type == kDLCUDAManaged;
  if (!device && type != kDLCPU && type != kDLCUDAHost)
    type_error(std::string(what) + ": DLPack device type " + std::to_string(type) +
               " is neither CPU nor CUDA (kDLCPU = 1, kDLCUDA = 2)");
  py::object capsule;
  if (device) {
    try {
      capsule = obj.attr("__dlpack__")(py::arg("stream") = stream);
    } catch (py::error_already_set& e) {
      if (!e.matches(PyExc_TypeError)) throw;
      capsule = obj.attr("__dlpack__")();  // an older producer without the stream keyword
    }
  } else {
    capsule = obj.attr("__dlpack__")();
  }
  auto* t = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(capsule.ptr(), "dltensor"));
  if (!t) throw py::error_already_set();
  // The capsule is ours now: renamed so that its destructor leaves the tensor to our deleter call.
  if (PyCapsule_SetName(capsule.ptr(), "used_dltensor") != 0) throw py::error_already_set();
  ArrayView v;
  v.dlpack.reset(new DlpackHold{t});
  const DLTensor& x = t->dl_tensor;
  if (x.dtype.lanes == 1) {
    const char kind = x.dtype.code == kDLFloat ? 'f' : (x.dtype.code == kDLInt ? 'i' : '?');
    v.elem = elem_from(kind, x.dtype.bits / 8);
  }
  v.type_text = "DLPack code " + std::to_string(x.dtype.code) + " bits " + std::to_string(x.dtype.bits) +
                " lanes " + std::to_string(x.dtype.lanes);
  int64_t st[2] = {0, 0};
  if (x.ndim >= 1 && x.ndim <= 2 && x.strides) {
    for (int i = 0; i < x.ndim; ++i) st[i] = x.strides[i] * int64_t(x.dtype.bits / 8);
  }
  set_shape(v, what, x.ndim, x.shape, x.strides ? st : nullptr);
  v.data = static_cast<char*>(x.data) + x.byte_offset;
  v.device = device;
  v.device_id = x.device.device_id;
  v.owner = py::reinterpret_borrow<py::object>(obj);
  return v;
}

}  // namespace

const char* elem_name(Elem e) {
  switch (e) {
    case Elem::kFloat32: return "float32";
    case Elem::kFloat64: return "float64";
    case Elem::kInt32: return "int32";
    case Elem::kInt64: return "int64";
    default: return "other";
  }
}

bool is_numpy(py::handle obj) { return py::isinstance<py::array>(obj); }

ArrayView view_array(py::handle obj, const char* what, intptr_t stream) {
  if (is_numpy(obj)) return view_numpy(obj, what);
  if (py::hasattr(obj, "__cuda_array_interface__")) return view_cai(obj, what);
  if (py::hasattr(obj, "__dlpack__") && py::hasattr(obj, "__dlpack_device__"))
    return view_dlpack(obj, what, stream);
  type_error(std::string(what) +
             " must be a numpy.ndarray, or an array exposing __cuda_array_interface__ "
             "or DLPack; got " +
             std::string(py::str(py::type::of(obj))));
}

void* stream_handle(py::handle s) {
  if (s.is_none()) return nullptr;
  py::object h = py::reinterpret_borrow<py::object>(s);
  if (!py::isinstance<py::int_>(h)) {
    if (py::hasattr(h, "ptr")) {
      h = h.attr("ptr");
    } else if (py::hasattr(h, "cuda_stream")) {
      h = h.attr("cuda_stream");
    } else if (py::hasattr(h, "handle")) {
      h = h.attr("handle");
      if (py::hasattr(h, "value")) h = h.attr("value");  // a ctypes c_void_p
      if (h.is_none()) return nullptr;
    } else {
      type_error("stream must be an int handle, None, or an object with .ptr, .cuda_stream or .handle; got " +
                 std::string(py::str(py::type::of(s))));
    }
  }
  return reinterpret_cast<void*>(h.cast<uintptr_t>());
}

}  // namespace spmvjit_py
