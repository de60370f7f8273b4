"""spmvjit: runtime-JIT sparse matrix-vector products, y = alpha*A@x + beta*y.

    import spmvjit, scipy.sparse as sp
    p = spmvjit.plan(sp.random(1000, 1000, 0.01, format="csr"), backend="cpu")
    y = p @ x                        # a new array
    p.matvec(x, y, alpha=2, beta=1)  # in place: y = 2*A@x + y (the fast path: no allocation)
    scipy.sparse.linalg.cg(spmvjit.aslinearoperator(p), b)

The planning (statistics, format choice, JIT compile) happens once in plan(); every product then
runs the specialized kernel. The extension (spmvjit._spmvjit) uses spmvjit's public C API only.
"""

import os

import numpy as np

from . import _spmvjit
from ._cuda import DeviceArray, device_count
from ._errors import (CompileError, Error, ExecutionError, InternalError, InvalidMatrixError,
                      InvalidValueError, IOFailedError, NoDeviceError, OutOfMemoryError, ParseError,
                      SizeOverflowError, UnsupportedError)
from ._spmvjit import Plan

__version__ = _spmvjit.__version__

__all__ = ["plan", "Plan", "aslinearoperator", "DeviceArray", "device_count", "Error",
           "InvalidValueError", "InvalidMatrixError", "SizeOverflowError", "UnsupportedError",
           "NoDeviceError", "OutOfMemoryError", "CompileError", "IOFailedError", "ParseError",
           "ExecutionError", "InternalError", "__version__"]

_INT32_MAX = np.iinfo(np.int32).max


def _is_device_array(a):
    if isinstance(a, np.ndarray):
        return False
    if hasattr(a, "__cuda_array_interface__"):
        return True
    dev = getattr(a, "__dlpack_device__", None)
    return dev is not None and dev()[0] in (2, 13)  # kDLCUDA, kDLCUDAManaged


def _csr_parts(A):
    """(indptr, indices, data, shape) of anything with a CSR view."""
    if isinstance(A, (tuple, list)):
        if len(A) != 4:
            raise TypeError("a CSR tuple is (indptr, indices, data, shape), got %d items" % len(A))
        return tuple(A)
    if isinstance(A, np.ndarray) and A.ndim == 2:  # dense: through scipy
        import scipy.sparse
        A = scipy.sparse.csr_matrix(A)
    if hasattr(A, "tocsr") and getattr(A, "format", "csr") != "csr":
        A = A.tocsr()
    if all(hasattr(A, n) for n in ("indptr", "indices", "data", "shape")):
        return A.indptr, A.indices, A.data, A.shape
    raise TypeError("A must be a scipy.sparse matrix or array, or an (indptr, indices, data, shape) "
                    f"tuple; got {type(A).__name__}")


def _index_dtype(index, indptr, indices):
    if index is not None:
        dt = np.dtype(index)
        if dt not in (np.dtype(np.int32), np.dtype(np.int64)):
            raise ValueError(f"index must be None, 'int32' or 'int64', got {index!r}")
        return dt
    if indptr.dtype == indices.dtype and indptr.dtype in (np.int32, np.int64):
        return indptr.dtype
    wide = max(indptr.dtype.itemsize, indices.dtype.itemsize) > 4 or "u" in indptr.dtype.kind + indices.dtype.kind
    return np.dtype(np.int64) if wide else np.dtype(np.int32)


def _as_numpy(a):
    """A host array as numpy: DLPack (kDLCPU) producers without a copy, else np.asarray."""
    if not isinstance(a, np.ndarray) and hasattr(a, "__dlpack__") and hasattr(np, "from_dlpack"):
        return np.from_dlpack(a)
    return np.asarray(a)


def _host_arrays(indptr, indices, data, index, cols):
    data = _as_numpy(data)
    if data.dtype not in (np.float32, np.float64):
        raise TypeError(f"data must be float32 or float64, got {data.dtype} (convert it, e.g. A.astype(np.float64))")
    indptr, indices = _as_numpy(indptr), _as_numpy(indices)
    for name, a in (("indptr", indptr), ("indices", indices), ("data", data)):
        if a.ndim != 1:
            raise ValueError(f"{name} must be 1-D, got shape {a.shape}")
    for name, a in (("indptr", indptr), ("indices", indices)):
        if a.dtype.kind not in "iu":
            raise TypeError(f"{name} must hold integers, got {a.dtype}")
    idx = _index_dtype(index, indptr, indices)
    if idx == np.int32:  # narrowing must not wrap a value into range
        if len(indptr) - 1 > _INT32_MAX or cols > _INT32_MAX or len(data) > _INT32_MAX:
            raise SizeOverflowError(f"a matrix of {len(indptr) - 1} rows, {cols} columns and {len(data)} "
                                    "nonzeros does not fit int32 indices (use index='int64')", 3)
        for name, a in (("indptr", indptr), ("indices", indices)):
            if a.dtype != np.int32 and a.size and (a.min() < 0 or a.max() > _INT32_MAX):
                raise ValueError(f"{name} holds values outside [0, {_INT32_MAX}] (min {a.min()}, max {a.max()})")
    return (np.ascontiguousarray(indptr, dtype=idx), np.ascontiguousarray(indices, dtype=idx),
            np.ascontiguousarray(data))


def plan(A, backend="auto", format=None, planning="estimate", index=None, cache_dir=None, threads=0,
         deterministic=False, device=0, transpose=False, symmetric=None):
    """Plan y = alpha*A@x + beta*y (or A.T with transpose=True) for the sparse matrix A; returns a Plan.

    A: a scipy.sparse matrix/array (other formats go through .tocsr()), a dense 2-D numpy array, or
    an (indptr, indices, data, shape) tuple of numpy arrays or of CUDA device arrays
    (__cuda_array_interface__ or DLPack; then planned from device memory, nothing copied to the
    host). Values float32/float64, indices int32/int64, base 0.
    backend: 'auto' (a GPU when present, else the CPU), 'cpu', 'cuda' or 'hip'. With 'auto' and host
    input, check p.backend: a GPU plan takes device arrays only.
    format: None/'auto' (the planner decides) or a format name ('csr', 'sell', ...).
    planning: 'estimate' (cost model) or 'measure' (times the best few; remembered in cache_dir).
    index: None keeps A's index type; 'int32' or 'int64' converts (host arrays only).
    cache_dir: None = $SPMVJIT_CACHE_DIR or ~/.cache/spmvjit; '' = memory only.
    threads: CPU threads of the shared pool this plan may use (0 = all).
    deterministic: bitwise-identical results on every run (no atomics in the sums).
    device: GPU ordinal.
    transpose: plan y = alpha*A.T@x + beta*y: the plan builds A.T's layout once (p.shape is A.T's,
    p.update_values still takes A's data in A's order). For A and A.T, make two plans.
    symmetric: None, or 'lower' / 'upper': A is symmetric and read from that triangle only (the
    other triangle's entries are ignored; A may hold both). The plan may then store one triangle
    (format sym_diag on banded matrices); p.update_values takes data in A's order.
    """
    indptr, indices, data, shape = _csr_parts(A)
    try:
        rows, cols = (int(s) for s in shape)
    except (TypeError, ValueError):
        raise ValueError(f"shape must be (rows, cols), got {shape!r}") from None
    if rows < 0 or cols < 0:
        raise ValueError(f"negative shape ({rows}, {cols})")
    if any(_is_device_array(a) for a in (indptr, indices, data)):
        if index is not None:
            want = np.dtype(index)
            got = getattr(indptr, "dtype", None)
            if got is None or np.dtype(str(got).replace("torch.", "")) != want:
                raise TypeError("index conversion of device arrays is not done here: convert indptr and "
                                "indices with your array library, or pass index=None")
    else:
        indptr, indices, data = _host_arrays(indptr, indices, data, index, cols)
    if format == "auto":
        format = None
    if cache_dir is not None:
        cache_dir = os.fspath(cache_dir)
    return Plan(indptr, indices, data, rows, cols, backend, format, planning, cache_dir, int(threads),
                bool(deterministic), int(device), bool(transpose), symmetric or "")


_operator_class = None


def aslinearoperator(p, transposed=None):
    """A scipy.sparse.linalg.LinearOperator over a host plan: matvec and matmat through p, and
    rmatvec and rmatmat (LSQR, LSMR, BiCG) through `transposed`, a plan of the same matrix made
    with transpose=True (without it, rmatvec raises as scipy's own operators do).

    Inputs of another dtype or layout are converted to the plan's, as scipy's own operators do.
    """
    global _operator_class
    for q in (p,) if transposed is None else (p, transposed):
        if q.backend != "cpu":
            raise TypeError(f"scipy's LinearOperator works on host arrays; this plan runs on {q.backend} "
                            "(use p.matvec with device arrays, e.g. in cupyx.scipy.sparse.linalg)")
    if transposed is not None and (transposed.shape != p.shape[::-1] or transposed.dtype != p.dtype
                                   or not transposed.transposed or p.transposed):
        raise ValueError(f"transposed must be a plan of the same matrix with transpose=True: shape "
                         f"{transposed.shape} for {p.shape}")
    if _operator_class is None:
        from scipy.sparse.linalg import LinearOperator

        class PlanOperator(LinearOperator):
            """y = A @ x through an spmvjit Plan."""

            def __init__(self, plan_, transposed_):
                self.plan = plan_
                self.transposed = transposed_
                super().__init__(dtype=plan_.dtype, shape=plan_.shape)

            def _matvec(self, x):
                return self.plan.matvec(np.ascontiguousarray(x, dtype=self.dtype).reshape(-1))

            def _matmat(self, X):
                return self.plan @ np.asarray(X, dtype=self.dtype)

            def _rmatvec(self, x):
                if self.transposed is None:
                    raise NotImplementedError("rmatvec needs aslinearoperator(p, transposed=plan(A, transpose=True))")
                return self.transposed.matvec(np.ascontiguousarray(np.conj(x), dtype=self.dtype).reshape(-1))

            def _rmatmat(self, X):
                if self.transposed is None:
                    raise NotImplementedError("rmatmat needs aslinearoperator(p, transposed=plan(A, transpose=True))")
                return self.transposed @ np.asarray(np.conj(X), dtype=self.dtype)

        _operator_class = PlanOperator
    return _operator_class(p, transposed)
