"""Bad inputs raise clear exceptions, mostly before the C API is called; the library's own errors
arrive as spmvjit.Error subclasses carrying spmv_last_error()'s text and the status."""

import numpy as np
import pytest
import scipy.sparse as sp

import spmvjit


@pytest.fixture
def plan64(cpu_plan):
    A = sp.random(30, 20, 0.2, format="csr", random_state=3)
    return cpu_plan(A), A


def test_bad_x_and_y(plan64):
    p, _ = plan64
    x, y = np.ones(20), np.zeros(30)
    with pytest.raises(ValueError, match="x has length 3, expected 20"):
        p @ np.ones(3)
    with pytest.raises(TypeError, match="x must be float64 .* got float32"):
        p.matvec(np.ones(20, np.float32), y)
    with pytest.raises(TypeError, match="x must be float64 .* got int64"):
        p @ np.ones(20, np.int64)
    with pytest.raises(ValueError, match="x must be contiguous"):
        p.matvec(np.ones(40)[::2], y)
    with pytest.raises(TypeError, match="must be a numpy.ndarray"):
        p @ ([1.0] * 20)
    with pytest.raises(ValueError, match="dimensions"):
        p @ np.ones((20, 1, 1))
    with pytest.raises(ValueError, match="y has length 29, expected 30"):
        p.matvec(x, np.zeros(29))
    with pytest.raises(TypeError, match="y must be float64"):
        p.matvec(x, np.zeros(30, np.float32))
    with pytest.raises(ValueError, match="y must be contiguous"):
        p.matvec(x, np.zeros(60)[::2])
    ro = np.zeros(30)
    ro.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        p.matvec(x, ro)
    with pytest.raises(ValueError, match="beta != 0 needs y"):
        p.matvec(x, beta=1.0)
    with pytest.raises(ValueError, match="x must be 1-D, got 2"):
        p.matvec(np.ones((20, 2)), y)
    with pytest.raises(ValueError, match="x has 21 rows"):
        p @ np.ones((21, 2))
    with pytest.raises(TypeError, match="stream must be"):
        p.matvec(x, y, stream="default")
    big = np.zeros(40)
    with pytest.raises(ValueError, match="overlap"):
        p.matvec(big[:20], big[10:40])
    with pytest.raises(TypeError, match="host array, got a device array"):
        p @ FakeDevice(20)


class FakeDevice:
    """Looks like a device array; a host plan must refuse it before touching the pointer."""

    def __init__(self, n):
        self.__cuda_array_interface__ = {"shape": (n,), "typestr": "<f8", "data": (8, False), "version": 3}


def test_bad_matrices(cpu_plan):
    with pytest.raises(ValueError, match="negative shape"):
        cpu_plan((np.zeros(1, np.int32), np.zeros(0, np.int32), np.zeros(0), (-1, 3)))
    with pytest.raises(ValueError, match="rows \\+ 1 = 3"):
        cpu_plan((np.array([0, 1], np.int32), np.array([0], np.int32), np.ones(1), (2, 2)))
    with pytest.raises(ValueError, match="indices has 2 entries but data has 1"):
        cpu_plan((np.array([0, 1, 1], np.int32), np.array([0, 1], np.int32), np.ones(1), (2, 2)))
    with pytest.raises(TypeError, match="float32 or float64"):
        cpu_plan(sp.random(4, 4, 0.5, format="csr", dtype=np.complex128))
    with pytest.raises(TypeError, match="float32 or float64"):
        cpu_plan(sp.csr_matrix(np.eye(3, dtype=np.int64)))
    with pytest.raises(TypeError, match="scipy.sparse"):
        cpu_plan("not a matrix")
    with pytest.raises(TypeError, match="\\(indptr, indices, data, shape\\)"):
        cpu_plan((np.zeros(1), np.zeros(1)))
    with pytest.raises(ValueError, match="index must be"):
        cpu_plan(sp.eye(3, format="csr"), index="int16")
    with pytest.raises(ValueError, match="backend must be"):
        cpu_plan(sp.eye(3, format="csr"), backend="gpu")
    with pytest.raises(ValueError, match="planning must be"):
        cpu_plan(sp.eye(3, format="csr"), planning="guess")
    with pytest.raises(ValueError, match="threads must be"):
        cpu_plan(sp.eye(3, format="csr"), threads=-2)
    # narrowing int64 indices that do not fit int32 is refused, not wrapped into range
    with pytest.raises(ValueError, match="outside"):
        cpu_plan((np.array([0, 1], np.int64), np.array([2**32 + 1], np.int64), np.ones(1), (1, 3)),
                 index="int32")


def test_library_errors_carry_status_and_text(cpu_plan):
    # column 5 in a 2-column matrix: the C API's validation names it
    with pytest.raises(spmvjit.InvalidMatrixError, match="column index 5 .* outside \\[0, 2\\)") as e:
        cpu_plan((np.array([0, 1], np.int32), np.array([5], np.int32), np.ones(1), (1, 2)))
    assert e.value.status == 2 and isinstance(e.value, spmvjit.Error) and isinstance(e.value, ValueError)
    with pytest.raises(spmvjit.InvalidMatrixError, match="monotone"):
        cpu_plan((np.array([0, 2, 1], np.int32), np.array([0, 1], np.int32), np.ones(2), (2, 2)))
    with pytest.raises(spmvjit.InvalidMatrixError):
        cpu_plan((np.array([0, 1], np.int32), np.array([-1], np.int32), np.ones(1), (1, 2)))
    with pytest.raises(spmvjit.Error) as e:
        cpu_plan(sp.eye(3, format="csr"), format="no-such-format")
    assert e.value.status in (1, 4) and "no-such-format" in str(e.value)


def test_error_classes():
    assert spmvjit._errors.error_class(6) is spmvjit.OutOfMemoryError
    assert issubclass(spmvjit.OutOfMemoryError, MemoryError)
    assert issubclass(spmvjit.IOFailedError, OSError)
    assert issubclass(spmvjit.NoDeviceError, RuntimeError)
    assert spmvjit._errors.error_class(99) is spmvjit.Error
    for status in range(1, 12):
        assert spmvjit._errors.error_class(status).status == status


def test_update_values_errors(plan64):
    p, A = plan64
    with pytest.raises(ValueError, match=f"nnz = {A.nnz}"):
        p.update_values(np.ones(A.nnz + 1))
    with pytest.raises(TypeError, match="float64"):
        p.update_values(np.ones(A.nnz, np.float32))
    with pytest.raises(ValueError, match="contiguous"):
        p.update_values(np.ones(2 * A.nnz)[::2])


def test_no_cuda_device_needed_for_host_plans():
    """DeviceArray and aslinearoperator refuse clearly where they cannot work."""
    with pytest.raises(ValueError, match="shape"):
        spmvjit.DeviceArray((2, 2, 2), np.float64)
