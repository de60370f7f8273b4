#!/usr/bin/env python3
"""spmvjit through Python against scipy's ``A @ x`` on the CPU suite, in one process.

    PYTHONPATH=build/python python3 python/benchmarks/bench_scipy.py [--threads 2] [--json out.json]

The matrices are the CPU suite of ``spmvjit bench --suite`` (tools/spmvjit/cli.cpp,
default_suite(false); keep the two lists alike), made by ``spmvjit gen SPEC -o FILE.mtx`` once,
read with scipy.io.mmread and kept as .npz beside the .mtx. For each: plan (backend cpu, a kernel
cache in the build tree: run twice and the plan times are warm), then rounds of `iters` calls of
scipy's ``A @ x``, spmvjit's ``p @ x`` (allocates y, like scipy) and ``p.matvec(x, y)``
(preallocated y), interleaved; the median round gives the time of one call. ``--runs N`` repeats
the whole suite and reports per-matrix medians (speedup: the median of the runs' ratios). The result is checked
against scipy's. Also a tiny matrix: the Python overhead of one call against spmv_execute called
from C++ on the same plan (Plan._execute_loop_ns).
"""

import argparse
import json
import math
import os
import pathlib
import platform
import statistics
import subprocess
import sys
import time

import numpy as np
import scipy.io
import scipy.sparse as sp

import spmvjit

ROOT = pathlib.Path(__file__).resolve().parents[2]
SUITE = [("poisson2d-1M", "poisson2d:1000"), ("stencil27-216K", "stencil27:60"),
         ("random-500K", "random:500000:1:40"), ("powerlaw-500K", "powerlaw:500000"),
         ("denserows-500K", "denserows:500000:10:16"), ("short-2M", "short:2000000:2"),
         ("dense-1000", "dense:1000"), ("rmat-17", "rmat:17:16"), ("blockfem3-24K", "blockfem:20:3"),
         ("varband-30K", "varband:30000"), ("lpwide-40K", "lpwide:40000"), ("circuit-400K", "circuit:400000"),
         ("perm-2M", "perm:2000000")]


def matrices_dir():
    env = os.environ.get("SPMVJIT_MATRICES_DIR")
    return pathlib.Path(env) if env else ROOT.parent / "shared" / "matrices"


def suite():
    s = list(SUITE)
    bcs = matrices_dir() / "bcsstk13.mtx"
    if bcs.exists():
        s.append(("bcsstk13-x24", f"replicate:{bcs}:2000000"))
    return s


def load(name, spec, cli, folder):
    """The suite matrix as scipy CSR (float64, int32), generated and converted once."""
    folder.mkdir(parents=True, exist_ok=True)
    npz, mtx = folder / f"{name}.npz", folder / f"{name}.mtx"
    if npz.exists():
        return sp.load_npz(npz).tocsr()
    if not mtx.exists():
        subprocess.check_call([str(cli), "gen", spec, "-o", str(mtx)], stdout=subprocess.DEVNULL)
    A = sp.csr_matrix(scipy.io.mmread(str(mtx))).astype(np.float64)
    A.sort_indices()
    sp.save_npz(npz, A, compressed=False)
    mtx.unlink()  # the .npz is the copy kept
    return A


def per_call(fn, iters, rounds):
    """Seconds per call: the median over rounds of (one round of `iters` calls) / iters."""
    times = []
    for _ in range(rounds):
        t0 = time.perf_counter_ns()
        for _ in range(iters):
            fn()
        times.append((time.perf_counter_ns() - t0) / iters)
    return statistics.median(times) * 1e-9


def bench_matrix(A, threads, cache_dir, rounds, budget_s):
    rng = np.random.default_rng(1)
    x = rng.uniform(-1, 1, A.shape[1])
    t0 = time.perf_counter()
    p = spmvjit.plan(A, backend="cpu", threads=threads, cache_dir=cache_dir)
    plan_ms = (time.perf_counter() - t0) * 1e3
    y = np.empty(A.shape[0])
    ref = A @ x
    got = p @ x
    scale = np.abs(A) @ np.abs(x) + 1e-300
    assert np.all(np.abs(got - ref) <= 1e-12 * scale * (np.diff(A.indptr) + 3)), "spmvjit differs from scipy"
    one = per_call(lambda: A @ x, 3, 3)
    iters = max(3, min(2000, int(budget_s / rounds / max(one, 1e-7))))
    # Interleaved rounds: the machine's load shifts over seconds, so each method sees the same.
    t_scipy, t_at, t_mv = [], [], []
    for _ in range(rounds):
        t_scipy.append(per_call(lambda: A @ x, iters, 1))
        t_at.append(per_call(lambda: p @ x, iters, 1))
        t_mv.append(per_call(lambda: p.matvec(x, y), iters, 1))
    d = p.describe()
    return {"nnz": int(A.nnz), "rows": A.shape[0], "cols": A.shape[1], "scipy_ms": statistics.median(t_scipy) * 1e3,
            "spmvjit_ms": statistics.median(t_at) * 1e3, "matvec_ms": statistics.median(t_mv) * 1e3,
            "plan_ms": plan_ms, "format": d["format"], "threads": d.get("threads"),
            "tier": d["kernel"]["tier"], "cache": d["kernel"]["cache"], "iters": iters, "rounds": rounds}


def overhead(cache_dir, rounds, calls):
    """Per-call times on a tiny matrix (10 x 10 tridiagonal): Python vs spmv_execute from C++."""
    n = 10
    A = sp.diags([-1.0, 2.0, -1.0], [-1, 0, 1], shape=(n, n), format="csr")
    p = spmvjit.plan(A, backend="cpu", cache_dir=cache_dir)
    x, y = np.ones(n), np.empty(n)
    out = {"n": n, "nnz": int(A.nnz), "calls": calls, "rounds": rounds}
    res = {"c_execute": [], "matvec_xy": [], "matmul": [], "scipy": []}
    for _ in range(rounds):
        res["c_execute"].append(p._execute_loop_ns(x, y, calls) / calls)
        res["matvec_xy"].append(per_call(lambda: p.matvec(x, y), calls, 1) * 1e9)
        res["matmul"].append(per_call(lambda: p @ x, calls, 1) * 1e9)
        res["scipy"].append(per_call(lambda: A @ x, calls, 1) * 1e9)
    for k, v in res.items():
        out[k + "_ns"] = statistics.median(v)
    out["matvec_overhead_ns"] = out["matvec_xy_ns"] - out["c_execute_ns"]
    out["matmul_overhead_ns"] = out["matmul_ns"] - out["c_execute_ns"]
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--threads", type=int, default=2, help="spmvjit threads (scipy uses one)")
    ap.add_argument("--build", default=str(ROOT / "build"), help="build folder (the CLI, caches)")
    ap.add_argument("--rounds", type=int, default=7, help="interleaved rounds per method and matrix")
    ap.add_argument("--runs", type=int, default=1, help="whole-suite repeats (medians over them)")
    ap.add_argument("--budget", type=float, default=1.5, help="seconds per method and matrix")
    ap.add_argument("--only", default="", help="comma-separated matrix names")
    ap.add_argument("--json", help="write the results here")
    args = ap.parse_args()
    build = pathlib.Path(args.build)
    cache_dir = str(build / "bench-cache")
    os.makedirs(cache_dir, mode=0o700, exist_ok=True)

    ov = overhead(cache_dir, args.rounds, 20000)
    print(f"tiny matrix ({ov['n']}x{ov['n']}, {ov['nnz']} nonzeros), ns per call (median of {args.rounds} rounds "
          f"of {ov['calls']}): spmv_execute from C++ {ov['c_execute_ns']:.0f}, p.matvec(x, y) {ov['matvec_xy_ns']:.0f}, "
          f"p @ x {ov['matmul_ns']:.0f}, scipy A @ x {ov['scipy_ns']:.0f}; Python overhead: matvec "
          f"{ov['matvec_overhead_ns']:.0f}, @ {ov['matmul_overhead_ns']:.0f}")

    only = set(filter(None, args.only.split(",")))
    names = [(n, spec) for n, spec in suite() if not only or n in only]
    mats = {n: load(n, spec, build / "tools" / "spmvjit", build / "bench-matrices") for n, spec in names}
    runs = {n: [] for n, _ in names}
    for run in range(args.runs):  # whole-suite repeats: the load of a shared machine drifts over minutes
        for n, _ in names:
            r = bench_matrix(mats[n], args.threads, cache_dir, args.rounds, args.budget)
            r["speedup"] = r["scipy_ms"] / r["spmvjit_ms"]
            runs[n].append(r)
            print(f"run {run + 1}/{args.runs} {n}: scipy {r['scipy_ms']:.3f} ms, spmvjit {r['spmvjit_ms']:.3f} ms "
                  f"(matvec {r['matvec_ms']:.3f}), x{r['speedup']:.2f}", file=sys.stderr, flush=True)
    rows = []
    print(f"{'matrix':16} {'nnz':>9} {'scipy ms':>9} {'spmvjit ms':>10} {'matvec ms':>9} {'speedup':>7} "
          f"{'plan ms':>8}  format")
    for n, _ in names:
        rs = runs[n]
        r = dict(rs[0])  # plan time, format, tier, cache: the first (a fresh process's) plan
        for k in ("scipy_ms", "spmvjit_ms", "matvec_ms", "speedup"):
            r[k] = statistics.median(x[k] for x in rs)
        r["speedup_matvec"] = statistics.median(x["scipy_ms"] / x["matvec_ms"] for x in rs)
        r["speedups"] = [x["speedup"] for x in rs]
        r["matrix"] = n
        rows.append(r)
        print(f"{n:16} {r['nnz']:>9} {r['scipy_ms']:>9.3f} {r['spmvjit_ms']:>10.3f} {r['matvec_ms']:>9.3f} "
              f"{r['speedup']:>7.2f} {r['plan_ms']:>8.1f}  {r['format']} ({r['tier']}, {r['cache']})")
    geo = math.exp(statistics.mean(math.log(r["speedup"]) for r in rows)) if rows else float("nan")
    geo_mv = math.exp(statistics.mean(math.log(r["speedup_matvec"]) for r in rows)) if rows else float("nan")
    print(f"geomean speedup over scipy: {geo:.2f} (p @ x), {geo_mv:.2f} (p.matvec(x, y))")
    if args.json:
        meta = {"python": platform.python_version(), "numpy": np.__version__, "scipy": scipy.__version__,
                "spmvjit": spmvjit.__version__, "threads": args.threads, "cpus": os.cpu_count(), "runs": args.runs,
                "rounds": args.rounds,
                "date": time.strftime("%Y-%m-%d %H:%M:%S")}
        with open(args.json, "w") as f:
            json.dump({"meta": meta, "overhead": ov, "suite": rows, "geomean_speedup": geo,
                       "geomean_speedup_matvec": geo_mv}, f, indent=1)


if __name__ == "__main__":
    sys.exit(main())
