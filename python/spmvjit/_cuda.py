"""spmvjit.DeviceArray: CUDA device memory that `plan @ x` returns for device plans.

The memory comes from the CUDA driver (libcuda.so.1), loaded with ctypes on first use: spmvjit
links no CUDA library and imports on machines without one. It is allocated in the device's
primary context (the one spmvjit's CUDA backend, CuPy and PyTorch use) and exposed through
``__cuda_array_interface__`` (v3), so ``cupy.asarray(y)``, ``torch.as_tensor(y, device="cuda")``
or ``numba.cuda.as_cuda_array(y)`` view it without a copy and keep it alive.
"""

import ctypes

import numpy as np

from ._errors import ExecutionError, NoDeviceError, OutOfMemoryError

_CUDA_ERROR_OUT_OF_MEMORY = 2
_CUDA_ERROR_NO_DEVICE = 100
_driver_lib = None
_contexts = {}


def _check(rc, what):
    if rc == 0:
        return
    name = ctypes.c_char_p()
    if _driver_lib is not None and _driver_lib.cuGetErrorName(rc, ctypes.byref(name)) == 0:
        text = f"{what}: {name.value.decode()} ({rc})"
    else:
        text = f"{what}: CUDA error {rc}"
    if rc == _CUDA_ERROR_OUT_OF_MEMORY:
        raise OutOfMemoryError(text, 6)
    if rc == _CUDA_ERROR_NO_DEVICE:
        raise NoDeviceError(text, 5)
    raise ExecutionError(text, 10)


def _driver():
    global _driver_lib
    if _driver_lib is None:
        try:
            lib = ctypes.CDLL("libcuda.so.1")
        except OSError as e:
            raise NoDeviceError(f"no CUDA driver (libcuda.so.1): {e}", 5) from None
        u64, size, vp = ctypes.c_uint64, ctypes.c_size_t, ctypes.c_void_p
        lib.cuMemAlloc_v2.argtypes = [ctypes.POINTER(u64), size]
        lib.cuMemFree_v2.argtypes = [u64]
        lib.cuMemcpyDtoH_v2.argtypes = [vp, u64, size]
        lib.cuMemcpyHtoD_v2.argtypes = [u64, vp, size]
        lib.cuCtxPushCurrent_v2.argtypes = [vp]
        lib.cuGetErrorName.argtypes = [ctypes.c_int, ctypes.POINTER(ctypes.c_char_p)]
        _driver_lib = lib
        _check(lib.cuInit(0), "cuInit")
    return _driver_lib


def device_count():
    """CUDA devices the driver sees (0 without a driver or a device)."""
    try:
        lib = _driver()
    except Exception:
        return 0
    n = ctypes.c_int(0)
    return n.value if lib.cuDeviceGetCount(ctypes.byref(n)) == 0 else 0


class _Current:
    """The device's primary context made current for a block (retained once per process)."""

    def __init__(self, device):
        self.lib = _driver()
        ctx = _contexts.get(device)
        if ctx is None:
            dev = ctypes.c_int()
            _check(self.lib.cuDeviceGet(ctypes.byref(dev), int(device)), "cuDeviceGet")
            ctx = ctypes.c_void_p()
            _check(self.lib.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev), "cuDevicePrimaryCtxRetain")
            _contexts[device] = ctx
        self.ctx = ctx

    def __enter__(self):
        _check(self.lib.cuCtxPushCurrent_v2(self.ctx), "cuCtxPushCurrent")
        return self.lib

    def __exit__(self, *exc):
        self.lib.cuCtxPopCurrent_v2(ctypes.byref(ctypes.c_void_p()))
        return False


class DeviceArray:
    """A 1-D or 2-D array in CUDA device memory, owned by this object (freed with it).

    ``order="F"`` lays a 2-D array out column by column (what ``plan @ X`` writes). ``stream``: the
    CUDA stream its contents are written on, which ``__cuda_array_interface__`` names so that
    consumers synchronize with it (1: the legacy default stream; a plan's matvec passes its own).
    """

    def __init__(self, shape, dtype, device=0, order="C", stream=1):
        self.shape = tuple(int(s) for s in (shape if isinstance(shape, (tuple, list)) else (shape,)))
        if not 1 <= len(self.shape) <= 2 or min(self.shape) < 0:
            raise ValueError(f"DeviceArray shape must be 1-D or 2-D and non-negative, got {self.shape}")
        self.dtype = np.dtype(dtype)
        self.device = int(device)
        self.order = "F" if order == "F" and len(self.shape) == 2 else "C"
        self.stream = int(stream) or 1  # 0 is not allowed in __cuda_array_interface__ v3
        self.nbytes = int(np.prod(self.shape)) * self.dtype.itemsize
        self.ptr = 0
        if self.nbytes:
            p = ctypes.c_uint64()
            with _Current(self.device) as lib:
                _check(lib.cuMemAlloc_v2(ctypes.byref(p), self.nbytes), f"cuMemAlloc of {self.nbytes} bytes")
            self.ptr = p.value

    @classmethod
    def from_host(cls, array, device=0):
        """A device copy of a host array (C order, or F order if the array is Fortran-contiguous)."""
        a = np.asarray(array)
        order = "F" if a.ndim == 2 and a.flags.f_contiguous and not a.flags.c_contiguous else "C"
        a = np.asarray(a, order=order)
        d = cls(a.shape, a.dtype, device, order)
        if d.nbytes:
            with _Current(d.device) as lib:
                _check(lib.cuMemcpyHtoD_v2(d.ptr, a.ctypes.data, d.nbytes), "cuMemcpyHtoD")
        return d

    def copy_to_host(self):
        """A numpy copy, after the device finished its queued work."""
        out = np.empty(self.shape, self.dtype, order=self.order)
        if self.nbytes:
            with _Current(self.device) as lib:
                _check(lib.cuCtxSynchronize(), "cuCtxSynchronize")
                _check(lib.cuMemcpyDtoH_v2(out.ctypes.data, self.ptr, self.nbytes), "cuMemcpyDtoH")
        return out

    @property
    def __cuda_array_interface__(self):
        strides = None
        if self.order == "F":
            strides = (self.dtype.itemsize, self.dtype.itemsize * self.shape[0])
        return {"shape": self.shape, "typestr": self.dtype.str, "data": (self.ptr, False), "version": 3,
                "strides": strides, "stream": self.stream}

    @property
    def size(self):
        return int(np.prod(self.shape))

    def __len__(self):
        return self.shape[0]

    def __repr__(self):
        return f"<spmvjit.DeviceArray shape={self.shape} dtype={self.dtype} device={self.device}>"

    def __del__(self):
        if getattr(self, "ptr", 0) and _driver_lib is not None:
            try:
                with _Current(self.device) as lib:
                    lib.cuCtxSynchronize()  # work queued on any stream may still write it
                    lib.cuMemFree_v2(self.ptr)
            except Exception:  # interpreter shutdown: the driver frees it with the context
                pass
            self.ptr = 0
