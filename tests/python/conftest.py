"""Shared fixtures of the Python tests: a private kernel cache, the SuiteSparse folder, references.

Run from the build tree: PYTHONPATH=<build>/python python3 -m pytest -q tests/python (ctest's
python_tests does this). Plans use backend="cpu" and a kernel cache of this test session's own.
"""

import os
import pathlib

import numpy as np
import pytest

import spmvjit


def pytest_configure(config):
    config.addinivalue_line("markers", "device: needs a CUDA device (skipped without one)")


@pytest.fixture(scope="session")
def cache_dir(tmp_path_factory):
    """A kernel cache folder for this session (tests do not read or fill the user's cache)."""
    d = tmp_path_factory.mktemp("spmvjit-cache")
    os.chmod(d, 0o700)
    return str(d)


@pytest.fixture(scope="session")
def cpu_plan(cache_dir):
    def make(A, **kw):
        kw.setdefault("backend", "cpu")
        kw.setdefault("cache_dir", cache_dir)
        try:
            return spmvjit.plan(A, **kw)
        except spmvjit.UnsupportedError as e:
            # A GPU machine's build may lack the CPU backend (no LLVM there): the test cannot run.
            if "no CPU backend" in str(e):
                pytest.skip(str(e))
            raise

    return make


def matrices_dir():
    """$SPMVJIT_MATRICES_DIR (ctest sets it from the CMake variable), else ../shared/matrices."""
    env = os.environ.get("SPMVJIT_MATRICES_DIR")
    if env:
        return pathlib.Path(env)
    return pathlib.Path(__file__).resolve().parents[3] / "shared" / "matrices"


def check_spmv(A, x, y0, alpha, beta, y, dtype):
    """y against alpha*A@x + beta*y0 computed in float64, with a bound on the rounding error.

    A sum of k products in the working precision differs from the exact one by at most about
    k * eps * sum |a_ij x_j| (any order of summation), plus the beta term's rounding.
    """
    A64 = A.astype(np.float64)
    x64 = x.astype(np.float64)
    ref = alpha * (A64 @ x64)
    bound = abs(alpha) * (abs(A64) @ np.abs(x64))
    if beta != 0:
        ref = ref + beta * y0.astype(np.float64)
        bound = bound + abs(beta) * np.abs(y0.astype(np.float64))
    row_len = np.diff(A.tocsr().indptr).astype(np.float64)
    eps = np.finfo(dtype).eps
    tol = 2 * eps * (row_len + 3) * bound + np.finfo(dtype).tiny
    err = np.abs(y.astype(np.float64) - ref)
    assert y.dtype == dtype
    assert np.all(np.isfinite(y)), "non-finite results"
    worst = int(np.argmax(err - tol)) if len(err) else 0
    assert np.all(err <= tol), f"row {worst}: got {y[worst]!r}, expected {ref[worst]!r} (tolerance {tol[worst]:.3g})"


@pytest.fixture
def rng():
    return np.random.default_rng(12345)
