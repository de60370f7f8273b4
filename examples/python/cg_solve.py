#!/usr/bin/env python3
"""Conjugate gradients on a SuiteSparse SPD matrix through spmvjit, compared with scipy.

    PYTHONPATH=build/python python3 examples/python/cg_solve.py ../shared/matrices/bcsstk13.mtx

Reads the Matrix Market file, plans it once (backend cpu), and solves A x = b (b = A @ ones) with
scipy.sparse.linalg.cg and a Jacobi preconditioner twice: with scipy's own matrix and with
spmvjit.aslinearoperator(plan). Prints iterations, time, relative residual and the difference of
the two solutions. bcsstk13 (2003 x 2003, a stiffness matrix) is symmetric positive definite.
"""

import argparse
import inspect
import time

import numpy as np
import scipy.io
import scipy.sparse as sp
import scipy.sparse.linalg as sla

import spmvjit


def solve(op, b, M, tol, maxiter):
    its = [0]

    def count(_):
        its[0] += 1

    # scipy 1.12 renamed cg's tol to rtol
    key = "rtol" if "rtol" in inspect.signature(sla.cg).parameters else "tol"
    t0 = time.perf_counter()
    x, info = sla.cg(op, b, M=M, maxiter=maxiter, callback=count, atol=0.0, **{key: tol})
    return x, info, its[0], time.perf_counter() - t0


def main():
    ap = argparse.ArgumentParser(description="CG through spmvjit vs scipy")
    ap.add_argument("matrix", help="a symmetric positive definite Matrix Market file")
    ap.add_argument("--tol", type=float, default=1e-8)
    ap.add_argument("--maxiter", type=int, default=20000)
    ap.add_argument("--threads", type=int, default=0, help="spmvjit CPU threads (0: all)")
    ap.add_argument("--cache-dir", default=None, help="kernel cache (default: spmvjit's; '' = memory)")
    args = ap.parse_args()

    A = sp.csr_matrix(scipy.io.mmread(args.matrix)).astype(np.float64)
    if A.shape[0] != A.shape[1] or abs(A - A.T).max() > 1e-12 * abs(A).max():
        raise SystemExit(f"{args.matrix}: not a symmetric matrix")
    n = A.shape[0]
    b = A @ np.ones(n)
    d = A.diagonal()
    M = sla.LinearOperator(A.shape, matvec=lambda r: r / d, dtype=np.float64)  # Jacobi

    t0 = time.perf_counter()
    p = spmvjit.plan(A, backend="cpu", threads=args.threads, cache_dir=args.cache_dir)
    plan_ms = (time.perf_counter() - t0) * 1e3
    print(f"{args.matrix}: {n} x {n}, {A.nnz} nonzeros; spmvjit {spmvjit.__version__} planned "
          f"{p.describe()['format']} in {plan_ms:.1f} ms ({p.threads} threads)")

    results = {}
    for name, op in (("scipy", A), ("spmvjit", spmvjit.aslinearoperator(p))):
        x, info, its, secs = solve(op, b, M, args.tol, args.maxiter)
        res = np.linalg.norm(b - A @ x) / np.linalg.norm(b)
        results[name] = x
        state = "converged" if info == 0 else f"not converged (info {info})"
        print(f"{name:8} {state}: {its} iterations, {secs * 1e3:.1f} ms, relative residual {res:.2e}, "
              f"max |x - 1| {np.abs(x - 1).max():.2e}")
    diff = np.abs(results["spmvjit"] - results["scipy"]).max() / np.abs(results["scipy"]).max()
    print(f"solutions differ by {diff:.2e} (relative, max norm)")


if __name__ == "__main__":
    main()
