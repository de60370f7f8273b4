"""Device arrays: __cuda_array_interface__ and DLPack with no copy to the host. The CUDA tests skip
without a CUDA device; the DLPack protocol itself is also checked on host (kDLCPU) arrays."""

import ctypes

import numpy as np
import pytest
import scipy.sparse as sp

import spmvjit
from conftest import check_spmv


class DlpackOnly:
    """Hides everything but the DLPack protocol of an array (the DLPack path, not numpy's)."""

    def __init__(self, a):
        self.a = a

    def __dlpack__(self, stream=None):
        return self.a.__dlpack__()

    def __dlpack_device__(self):
        return self.a.__dlpack_device__()


@pytest.mark.skipif(not hasattr(np.ndarray, "__dlpack__"), reason="numpy without DLPack")
def test_dlpack_host_arrays(cpu_plan, rng):
    A = sp.random(80, 60, 0.1, format="csr", random_state=7)
    p = cpu_plan((DlpackOnly(A.indptr), DlpackOnly(A.indices), DlpackOnly(A.data), A.shape))
    x = rng.uniform(-1, 1, 60)
    y0 = rng.uniform(-1, 1, 80)
    y = y0.copy()
    out = p.matvec(DlpackOnly(x), DlpackOnly(y), alpha=2.0, beta=0.5)
    assert isinstance(out, DlpackOnly)
    check_spmv(A, x, y0, 2.0, 0.5, y, np.float64)  # written in place, through the capsule's pointer
    p.update_values(DlpackOnly(A.data * 2))
    check_spmv(A * 2, x, None, 1.0, 0.0, p @ DlpackOnly(x), np.float64)


class Cai:
    """A __cuda_array_interface__ with made-up pointers: read by the binding, never dereferenced."""

    def __init__(self, **kw):
        self.__cuda_array_interface__ = dict({"version": 3, "data": (0x7F0000001000, False)}, **kw)


def test_cuda_array_interface_is_read_as_stated():
    info = spmvjit._spmvjit._array_info
    d = info(Cai(shape=(5,), typestr="<f8"))
    assert d == {"ptr": 0x7F0000001000, "shape": (5,), "strides": (8,), "dtype": "float64", "device": True,
                 "device_id": -1, "readonly": False, "contiguous": True}
    d = info(Cai(shape=(6,), typestr="<f4", strides=(8,), data=(4096, True)))
    assert d["dtype"] == "float32" and d["strides"] == (8,) and not d["contiguous"] and d["readonly"]
    d = info(Cai(shape=(3, 4), typestr="<i8", strides=None))
    assert d["shape"] == (3, 4) and d["strides"] == (32, 8) and d["dtype"] == "int64"
    assert info(Cai(shape=(3, 4), typestr="<f8", strides=(8, 24)))["strides"] == (8, 24)
    assert info(Cai(shape=(2,), typestr="|i4"))["dtype"] == "int32"
    for other in (">f8", "<f2", "<c16", "<u4", "x"):
        assert info(Cai(shape=(2,), typestr=other))["dtype"] == "other"
    with pytest.raises(TypeError, match="masked"):
        info(Cai(shape=(2,), typestr="<f8", mask=object()))
    with pytest.raises(ValueError, match="3 dimensions"):
        info(Cai(shape=(2, 2, 2), typestr="<f8"))


def test_device_arrays_refused_where_they_cannot_go(cpu_plan):
    A = sp.random(6, 5, 0.5, format="csr", random_state=2)
    p = cpu_plan(A)
    with pytest.raises(TypeError, match="runs on the CPU: x must be a host array"):
        p.matvec(Cai(shape=(5,), typestr="<f8"), np.zeros(6))
    with pytest.raises(TypeError, match="runs on the CPU: y must be a host array"):
        p.matvec(np.zeros(5), Cai(shape=(6,), typestr="<f8"))
    dev = (Cai(shape=(7,), typestr="<i4"), Cai(shape=(A.nnz,), typestr="<i4"), Cai(shape=(A.nnz,), typestr="<f8"))
    with pytest.raises(TypeError, match="device arrays need a GPU backend"):
        cpu_plan(dev + (A.shape,))
    with pytest.raises(TypeError, match="all be host arrays or all be device arrays"):
        cpu_plan((A.indptr, A.indices, dev[2], A.shape))
    with pytest.raises(TypeError, match="index conversion of device arrays"):
        cpu_plan(dev + (A.shape,), index="int64")


def test_stream_arguments():
    class CupyLike:
        ptr = 1234

    class TorchLike:
        cuda_stream = 5678

    class NumbaLike:
        handle = ctypes.c_void_p(91011)

    h = spmvjit._spmvjit._stream_handle
    assert h(None) == 0 and h(42) == 42 and h(CupyLike()) == 1234 and h(TorchLike()) == 5678
    assert h(NumbaLike()) == 91011
    with pytest.raises(TypeError, match="stream must be"):
        h(1.5)


def test_dlpack_is_read_as_stated():
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    d = spmvjit._spmvjit._array_info(DlpackOnly(a))
    assert d["ptr"] == a.ctypes.data and d["shape"] == (3, 4) and d["strides"] == (16, 4)
    assert d["dtype"] == "float32" and not d["device"] and d["device_id"] == 0
    b = np.arange(10, dtype=np.int64)[::2]
    d = spmvjit._spmvjit._array_info(DlpackOnly(b))
    assert d["dtype"] == "int64" and d["strides"] == (16,) and not d["contiguous"]
    assert spmvjit._spmvjit._array_info(DlpackOnly(np.zeros(3, np.uint8)))["dtype"] == "other"


def test_device_array_without_cuda():
    """Without a CUDA driver, DeviceArray fails with NoDeviceError; with one, it round-trips."""
    if spmvjit.device_count() == 0:
        with pytest.raises(spmvjit.NoDeviceError):
            spmvjit.DeviceArray((4,), np.float64)
        return
    a = spmvjit.DeviceArray.from_host(np.arange(6.0).reshape(2, 3))
    assert np.array_equal(a.copy_to_host(), np.arange(6.0).reshape(2, 3))


# ---- CUDA ----

def _cuda_plan_or_skip(A, **kw):
    if spmvjit.device_count() == 0:
        pytest.skip("no CUDA device")
    try:
        return spmvjit.plan(A, backend="cuda", cache_dir="", **kw)
    except (spmvjit.NoDeviceError, spmvjit.UnsupportedError) as e:
        pytest.skip(f"no CUDA backend here: {e}")


class CudaBuffer:
    """Device memory from the CUDA driver through ctypes, exposing __cuda_array_interface__ (no
    array library involved)."""

    lib = None

    @classmethod
    def driver(cls):
        if cls.lib is None:
            lib = ctypes.CDLL("libcuda.so.1")
            lib.cuMemAlloc_v2.argtypes = [ctypes.POINTER(ctypes.c_uint64), ctypes.c_size_t]
            lib.cuMemFree_v2.argtypes = [ctypes.c_uint64]
            lib.cuMemcpyHtoD_v2.argtypes = [ctypes.c_uint64, ctypes.c_void_p, ctypes.c_size_t]
            lib.cuMemcpyDtoH_v2.argtypes = [ctypes.c_void_p, ctypes.c_uint64, ctypes.c_size_t]
            lib.cuCtxSetCurrent.argtypes = [ctypes.c_void_p]
            assert lib.cuInit(0) == 0
            dev, ctx = ctypes.c_int(), ctypes.c_void_p()
            assert lib.cuDeviceGet(ctypes.byref(dev), 0) == 0
            assert lib.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev) == 0
            cls.ctx = ctx
            cls.lib = lib
        assert cls.lib.cuCtxSetCurrent(cls.ctx) == 0
        return cls.lib

    def __init__(self, host):
        self.host = np.ascontiguousarray(host)
        lib = self.driver()
        p = ctypes.c_uint64()
        assert lib.cuMemAlloc_v2(ctypes.byref(p), max(self.host.nbytes, 1)) == 0
        self.ptr = p.value
        assert lib.cuMemcpyHtoD_v2(self.ptr, self.host.ctypes.data, self.host.nbytes) == 0
        self.__cuda_array_interface__ = {"shape": self.host.shape, "typestr": self.host.dtype.str,
                                         "data": (self.ptr, False), "version": 3, "strides": None}

    def get(self):
        lib = self.driver()
        assert lib.cuCtxSynchronize() == 0
        out = np.empty_like(self.host)
        assert lib.cuMemcpyDtoH_v2(out.ctypes.data, self.ptr, out.nbytes) == 0
        return out

    def __del__(self):
        if self.lib is not None and getattr(self, "ptr", 0):
            self.driver().cuMemFree_v2(self.ptr)


@pytest.mark.device
@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["float32", "float64"])
def test_cuda_ctypes_buffers(rng, dtype):
    """No array library: device memory allocated through ctypes, wrapped in a tiny class."""
    A = sp.random(500, 300, 0.02, format="csr", random_state=11).astype(dtype)
    p = _cuda_plan_or_skip(A)
    assert p.backend == "cuda" and p.shape == (500, 300)
    x = rng.uniform(-1, 1, 300).astype(dtype)
    y0 = rng.uniform(-1, 1, 500).astype(dtype)
    dx, dy = CudaBuffer(x), CudaBuffer(y0)
    assert p.matvec(dx, dy, alpha=1.5, beta=-1.0, stream=0) is dy
    check_spmv(A, x, y0, 1.5, -1.0, dy.get(), dtype)
    out = p @ dx  # a spmvjit.DeviceArray from the driver
    assert isinstance(out, spmvjit.DeviceArray) and out.shape == (500,) and out.dtype == dtype
    check_spmv(A, x, None, 1.0, 0.0, out.copy_to_host(), dtype)
    Y = p @ spmvjit.DeviceArray.from_host(np.asfortranarray(np.stack([x, 2 * x], axis=1)))
    Yh = Y.copy_to_host()
    check_spmv(A, x, None, 1.0, 0.0, np.ascontiguousarray(Yh[:, 0]), dtype)
    check_spmv(A, 2 * x, None, 1.0, 0.0, np.ascontiguousarray(Yh[:, 1]), dtype)
    with pytest.raises(TypeError, match="must be a device array"):
        p @ x
    with pytest.raises(TypeError, match="host arrays"):
        spmvjit.aslinearoperator(p)
    # planned from device memory: nothing goes through the host
    q = _cuda_plan_or_skip((CudaBuffer(A.indptr), CudaBuffer(A.indices), CudaBuffer(A.data), A.shape))
    check_spmv(A, x, None, 1.0, 0.0, (q @ dx).copy_to_host(), dtype)
    q.update_values(CudaBuffer(A.data * 2))
    check_spmv(A * 2, x, None, 1.0, 0.0, (q @ dx).copy_to_host(), dtype)


@pytest.mark.device
def test_cupy_arrays_and_streams(rng):
    cupy = pytest.importorskip("cupy")
    A = sp.random(400, 400, 0.02, format="csr", random_state=13)
    p = _cuda_plan_or_skip(A)
    x = rng.uniform(-1, 1, 400)
    dx, dy = cupy.asarray(x), cupy.zeros(400)
    s = cupy.cuda.Stream(non_blocking=True)
    p.matvec(dx, dy, stream=s)
    s.synchronize()
    check_spmv(A, x, None, 1.0, 0.0, cupy.asnumpy(dy), np.float64)
    check_spmv(A, x, None, 1.0, 0.0, cupy.asnumpy(cupy.asarray(p @ dx)), np.float64)
    q = _cuda_plan_or_skip(cupyx_csr(cupy, A))
    check_spmv(A, x, None, 1.0, 0.0, cupy.asnumpy(cupy.asarray(q @ dx)), np.float64)


def cupyx_csr(cupy, A):
    import cupyx.scipy.sparse as csp
    return csp.csr_matrix((cupy.asarray(A.data), cupy.asarray(A.indices), cupy.asarray(A.indptr)), shape=A.shape)


@pytest.mark.device
def test_torch_dlpack_and_cai(rng):
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("torch without CUDA")
    A = sp.random(300, 200, 0.05, format="csr", random_state=17)
    p = _cuda_plan_or_skip(A)
    x = rng.uniform(-1, 1, 200)
    tx, ty = torch.tensor(x, device="cuda"), torch.zeros(300, dtype=torch.float64, device="cuda")
    p.matvec(DlpackOnly(tx), DlpackOnly(ty), stream=torch.cuda.current_stream())  # DLPack kDLCUDA
    check_spmv(A, x, None, 1.0, 0.0, ty.cpu().numpy(), np.float64)
    ty.zero_()
    p.matvec(tx, ty)  # torch's __cuda_array_interface__
    torch.cuda.synchronize()
    check_spmv(A, x, None, 1.0, 0.0, ty.cpu().numpy(), np.float64)
