"""Results against scipy for every type pair of the C API, shapes that are easy to get wrong, and
alpha/beta variants; 2-D x; update_values; describe; threads."""

import threading

import numpy as np
import pytest
import scipy.sparse as sp

import spmvjit
from conftest import check_spmv

DTYPES = [np.float32, np.float64]
INDEX = ["int32", "int64"]


def random_csr(rng, m, n, density, empty_rows=()):
    A = sp.random(m, n, density, format="csr", random_state=rng, data_rvs=lambda k: rng.uniform(-1, 1, k))
    if len(empty_rows):
        A = A.tolil()
        for r in empty_rows:
            A[r, :] = 0
        A = A.tocsr()
        A.eliminate_zeros()
    return A


def one_huge_row(rng):
    """A 40 x 30000 matrix: row 7 holds 20000 entries, the others a few."""
    A = random_csr(rng, 40, 30000, 0.0003).tolil()
    cols = rng.choice(30000, 20000, replace=False)
    A[7, cols] = rng.uniform(-1, 1, 20000)
    return A.tocsr()


def matrices(rng):
    return {
        "random-300x170-empty-rows": random_csr(rng, 300, 170, 0.05, empty_rows=range(0, 300, 7)),
        "1x1": sp.csr_matrix(np.array([[2.5]])),
        "0x7": sp.csr_matrix((0, 7)),
        "no-nonzeros-10x10": sp.csr_matrix((10, 10)),
        "one-huge-row": one_huge_row(rng),
        "wide-5x2000": random_csr(rng, 5, 2000, 0.2),
    }


@pytest.mark.parametrize("dtype", DTYPES, ids=["float32", "float64"])
@pytest.mark.parametrize("index", INDEX)
def test_against_scipy(cpu_plan, rng, dtype, index):
    for name, A in matrices(rng).items():
        A = A.astype(dtype)
        p = cpu_plan(A, index=index)
        m, n = A.shape
        assert p.shape == (m, n) and p.nnz == A.nnz and p.dtype == dtype and p.index_dtype == np.dtype(index)
        assert p.backend == "cpu"
        for alpha, beta in [(1.0, 0.0), (1.0, 1.0), (-0.5, 0.0), (2.5, -0.75), (1.0, 0.3), (0.0, 2.0)]:
            x = rng.uniform(-1, 1, n).astype(dtype)
            y0 = rng.uniform(-1, 1, m).astype(dtype)
            y = y0.copy()
            if beta == 0:
                y[:] = np.nan  # beta == 0: y is not read
            out = p.matvec(x, y, alpha=alpha, beta=beta)
            assert out is y
            check_spmv(A, x, y0, alpha, beta, y, dtype)
        x = rng.uniform(-1, 1, n).astype(dtype)
        check_spmv(A, x, None, 1.0, 0.0, p @ x, dtype)
        check_spmv(A, x, None, 1.0, 0.0, p.matvec(x), dtype)


@pytest.mark.parametrize("dtype", DTYPES, ids=["float32", "float64"])
def test_two_d_x_column_by_column(cpu_plan, rng, dtype):
    A = random_csr(rng, 60, 45, 0.1).astype(dtype)
    p = cpu_plan(A)
    for X in (rng.uniform(-1, 1, (45, 4)), np.asfortranarray(rng.uniform(-1, 1, (45, 3))),
              rng.uniform(-1, 1, (90, 2))[::2], rng.uniform(-1, 1, (45, 1)), np.zeros((45, 0))):
        X = X.astype(dtype)
        Y = p @ X
        assert Y.shape == (60, X.shape[1]) and Y.dtype == dtype
        for j in range(X.shape[1]):
            check_spmv(A, X[:, j], None, 1.0, 0.0, Y[:, j], dtype)


def test_tuple_input_and_formats(cpu_plan, rng):
    A = random_csr(rng, 120, 80, 0.05)
    x = rng.uniform(-1, 1, 80)
    p = cpu_plan((A.indptr, A.indices, A.data, A.shape))
    check_spmv(A, x, None, 1.0, 0.0, p @ x, np.float64)
    for other in (A.tocoo(), A.tocsc(), sp.csr_array(A), A.todense().A):
        check_spmv(A, x, None, 1.0, 0.0, cpu_plan(other) @ x, np.float64)
    # index conversion keeps the values, and a forced format is honoured
    p = cpu_plan(A, index="int64", format="csr")
    assert p.index_dtype == np.int64 and p.describe()["format"] == "csr"
    check_spmv(A, x, None, 1.0, 0.0, p @ x, np.float64)


def test_unsorted_and_duplicate_columns(cpu_plan, rng):
    indptr = np.array([0, 3, 5], np.int32)
    indices = np.array([4, 0, 4, 2, 1], np.int32)  # row 0: unsorted, column 4 twice
    data = np.array([1.0, 2.0, 3.0, 4.0, 5.0])
    A = sp.csr_matrix((data, indices, indptr), shape=(2, 5))
    x = rng.uniform(-1, 1, 5)
    check_spmv(A, x, None, 1.0, 0.0, cpu_plan((indptr, indices, data, (2, 5))) @ x, np.float64)


@pytest.mark.parametrize("dtype", DTYPES, ids=["float32", "float64"])
def test_update_values(cpu_plan, rng, dtype):
    A = random_csr(rng, 200, 200, 0.03).astype(dtype)
    p = cpu_plan(A)
    x = rng.uniform(-1, 1, 200).astype(dtype)
    B = A.copy()
    B.data = rng.uniform(-3, 3, A.nnz).astype(dtype)
    p.update_values(B.data)
    check_spmv(B, x, None, 1.0, 0.0, p @ x, dtype)
    assert p.describe()["update_values"] != "not yet updated"


@pytest.mark.parametrize("fill", ["lower", "upper"])
def test_symmetric(cpu_plan, rng, fill):
    # A banded matrix whose other triangle is junk: only `fill`'s triangle may count.
    n = 900
    A = sp.diags([rng.uniform(-1, 1, n - 30), rng.uniform(-1, 1, n - 1), rng.uniform(1, 2, n),
                  rng.uniform(-1, 1, n - 1), rng.uniform(-1, 1, n - 30)], [-30, -1, 0, 1, 30], format="csr")
    T = sp.tril(A) if fill == "lower" else sp.triu(A)
    S = (T + sp.tril(T, -1).T + sp.triu(T, 1).T).tocsr()
    x = rng.uniform(-1, 1, n)
    p = cpu_plan(A, symmetric=fill)
    d = p.describe()
    assert d["format"] == "sym_diag" and d["symmetric"]["fill"] == fill
    check_spmv(S, x, None, 1.0, 0.0, p @ x, np.float64)
    B = A.copy()
    B.data = rng.uniform(-3, 3, A.nnz)
    p.update_values(B.data)
    T = sp.tril(B) if fill == "lower" else sp.triu(B)
    check_spmv((T + sp.tril(T, -1).T + sp.triu(T, 1).T).tocsr(), x, None, 1.0, 0.0, p @ x, np.float64)
    with pytest.raises(ValueError, match="symmetric must be"):
        cpu_plan(A, symmetric="both")
    with pytest.raises(spmvjit.InvalidValueError, match="square"):
        cpu_plan(random_csr(rng, 20, 30, 0.2), symmetric="lower")


def test_describe_and_properties(cpu_plan, rng):
    A = random_csr(rng, 500, 400, 0.02)
    p = cpu_plan(A, threads=1)
    d = p.describe()
    assert isinstance(d, dict)
    assert d["backend"] == "cpu" and d["index"] == "int32" and d["value"] == "double"
    assert d["stats"]["rows"] == 500 and d["stats"]["cols"] == 400 and d["stats"]["nnz"] == A.nnz
    assert isinstance(d["format"], str) and d["timings"]["total"] > 0
    assert p.threads == 1 and d["threads"] == 1
    assert "500x400" in repr(p)


def test_version():
    assert spmvjit.__version__ == spmvjit._spmvjit.__version__
    assert [int(v) for v in spmvjit.__version__.split(".")] and spmvjit.__version__.count(".") == 2


def test_deterministic_and_measure(cpu_plan, rng):
    A = random_csr(rng, 300, 300, 0.02)
    x = rng.uniform(-1, 1, 300)
    p = cpu_plan(A, deterministic=True, planning="measure")
    y1, y2 = p @ x, p @ x
    assert np.array_equal(y1, y2)
    check_spmv(A, x, None, 1.0, 0.0, y1, np.float64)


def test_threads_share_a_plan(cpu_plan, rng):
    """The GIL is released during execute: several Python threads on one plan get right results."""
    A = random_csr(rng, 2000, 2000, 0.005)
    p = cpu_plan(A)
    xs = [rng.uniform(-1, 1, 2000) for _ in range(4)]
    out = [None] * 4

    def work(i):
        y = np.empty(2000)
        for _ in range(50):
            p.matvec(xs[i], y)
        out[i] = y

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for i in range(4):
        check_spmv(A, xs[i], None, 1.0, 0.0, out[i], np.float64)
