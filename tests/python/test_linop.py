"""spmvjit.aslinearoperator: scipy's CG through a plan converges like scipy's own; matmat; every
SuiteSparse matrix of the shared folder against scipy."""

import inspect

import numpy as np
import pytest
import scipy.io
import scipy.sparse as sp
import scipy.sparse.linalg as sla

import spmvjit
from conftest import check_spmv, matrices_dir


# scipy 1.12 renamed cg's tol to rtol (and 1.14 dropped tol).
RTOL = {"rtol": 1e-8} if "rtol" in inspect.signature(sla.cg).parameters else {"tol": 1e-8}


def poisson2d(n):
    T = sp.diags([-1.0, 2.0, -1.0], [-1, 0, 1], shape=(n, n))
    return (sp.kron(sp.eye(n), T) + sp.kron(T, sp.eye(n))).tocsr()


def cg_iterations(op, b, M=None, maxiter=20000):
    count = [0]

    def callback(_):
        count[0] += 1

    x, info = sla.cg(op, b, maxiter=maxiter, M=M, callback=callback, atol=0.0, **RTOL)
    return x, info, count[0]


def test_cg_poisson_like_scipy(cpu_plan):
    A = poisson2d(40)
    b = A @ np.linspace(-1, 1, A.shape[0])
    op = spmvjit.aslinearoperator(cpu_plan(A))
    assert isinstance(op, sla.LinearOperator) and op.shape == A.shape and op.dtype == np.float64
    x, info, its = cg_iterations(op, b)
    x_ref, info_ref, its_ref = cg_iterations(A, b)
    assert info == 0 and info_ref == 0
    assert abs(its - its_ref) <= 2, (its, its_ref)
    assert np.linalg.norm(A @ x - b) <= 1e-8 * np.linalg.norm(b) * 1.01
    np.testing.assert_allclose(x, x_ref, rtol=0, atol=1e-6 * np.abs(x_ref).max())


def test_cg_suitesparse_spd_like_scipy(cpu_plan):
    path = matrices_dir() / "bcsstk13.mtx"
    if not path.exists():
        pytest.skip(f"no {path}")
    A = sp.csr_matrix(scipy.io.mmread(str(path)))
    b = A @ np.ones(A.shape[0])
    d = A.diagonal()
    M = sla.LinearOperator(A.shape, matvec=lambda r: r / d)  # Jacobi: about 1,400 iterations
    x, info, its = cg_iterations(spmvjit.aslinearoperator(cpu_plan(A)), b, M)
    _, info_ref, its_ref = cg_iterations(A, b, M)
    assert info == 0 and info_ref == 0
    assert abs(its - its_ref) <= 0.05 * its_ref, (its, its_ref)
    assert np.linalg.norm(A @ x - b) <= 1.01e-8 * np.linalg.norm(b)


def test_linear_operator_shapes(cpu_plan, rng):
    A = sp.random(50, 30, 0.1, format="csr", random_state=5)
    op = spmvjit.aslinearoperator(cpu_plan(A))
    x = rng.uniform(-1, 1, 30)
    np.testing.assert_allclose(op.matvec(x), A @ x, rtol=1e-12, atol=1e-14)
    assert op.matvec(x.reshape(30, 1)).shape == (50, 1)
    X = rng.uniform(-1, 1, (30, 4))
    np.testing.assert_allclose(op.matmat(X), A @ X, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(op @ X, A @ X, rtol=1e-12, atol=1e-14)
    # other dtypes and layouts are converted, as scipy's operators do
    np.testing.assert_allclose(op.matvec(x.astype(np.float32)), A @ x.astype(np.float32), rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(op.matvec(np.repeat(x, 2)[::2]), A @ x, rtol=1e-12, atol=1e-14)


def test_suitesparse_matrices(cpu_plan, rng):
    files = sorted(matrices_dir().glob("*.mtx")) if matrices_dir().is_dir() else []
    if not files:
        pytest.skip(f"no .mtx files in {matrices_dir()}")
    for f in files:
        A = sp.csr_matrix(scipy.io.mmread(str(f))).astype(np.float64)
        for dtype in (np.float32, np.float64):
            B = A.astype(dtype)
            p = cpu_plan(B)
            x = rng.uniform(-1, 1, B.shape[1]).astype(dtype)
            y0 = rng.uniform(-1, 1, B.shape[0]).astype(dtype)
            y = y0.copy()
            p.matvec(x, y, alpha=1.5, beta=-0.5)
            check_spmv(B, x, y0, 1.5, -0.5, y, dtype)


def test_transposed_plan_and_lsqr_like_scipy(cpu_plan, rng):
    # A plan of A.T (transpose=True): its shape, matvec against scipy's A.T @ x, update_values in
    # A's order; then LSQR (matvec and rmatvec) through aslinearoperator(p, transposed=pt).
    A = sp.random(120, 70, 0.08, format="csr", random_state=7)
    A = (A + sp.eye(120, 70, format="csr")).tocsr()
    pt = cpu_plan(A, transpose=True)
    assert pt.shape == (70, 120) and pt.transposed
    x = rng.uniform(-1, 1, 120)
    y0 = rng.uniform(-1, 1, 70)
    y = y0.copy()
    pt.matvec(x, y, alpha=1.5, beta=-0.5)
    check_spmv(A.T.tocsr(), x, y0, 1.5, -0.5, y, np.float64)
    B = A.copy()
    B.data = B.data * 2.0 - 1.0
    pt.update_values(B.data)
    np.testing.assert_allclose(pt.matvec(x), B.T @ x, rtol=1e-12, atol=1e-13)
    pt.update_values(A.data)
    p = cpu_plan(A)
    assert not p.transposed
    with pytest.raises(ValueError):
        spmvjit.aslinearoperator(p, transposed=p)
    op = spmvjit.aslinearoperator(p, transposed=pt)
    np.testing.assert_allclose(op.rmatvec(x), A.T @ x, rtol=1e-12, atol=1e-13)
    b = A @ np.linspace(-1, 1, 70) + 0.01 * rng.uniform(-1, 1, 120)
    got = sla.lsqr(op, b, atol=1e-12, btol=1e-12)
    ref = sla.lsqr(A, b, atol=1e-12, btol=1e-12)
    assert abs(got[2] - ref[2]) <= 2, (got[2], ref[2])  # iterations
    np.testing.assert_allclose(got[0], ref[0], rtol=0, atol=1e-8 * np.abs(ref[0]).max())
    with pytest.raises(NotImplementedError):
        spmvjit.aslinearoperator(p).rmatvec(x)
