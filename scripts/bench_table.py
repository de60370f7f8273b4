#!/usr/bin/env python3
"""Markdown tables from `spmvjit bench --json` files, for docs/PERFORMANCE.md.

usage: scripts/bench_table.py BENCH.json [--formats auto,device,...] [--ab OTHER.json]
  one row per result: matrix, format, ms, CSR-eq GB/s, % copy, vs ALG1, plan ms, plan/SpMV,
  break-even (SpMVs after which plan + N SpMVs beats cuSPARSE's setup + N SpMVs).
  --ab OTHER.json adds the other run's ms and plan ms for the same matrix and format prefix
  (e.g. a baseline commit's auto rows).
"""
import json
import sys


def load(path):
    return [r for r in json.load(open(path))["results"] if r.get("ok")]


def prefix(fmt):
    return fmt.split(":")[0]


def main(argv):
    args = argv[1:]
    keep = None
    other = None
    if "--formats" in args:
        i = args.index("--formats")
        keep = set(args[i + 1].split(","))
        del args[i:i + 2]
    if "--ab" in args:
        i = args.index("--ab")
        other = {(r["matrix"], prefix(r["format"])): r for r in load(args[i + 1])}
        del args[i:i + 2]
    rows = load(args[0])
    alg1 = {r["matrix"]: r["spmv_seconds"] for r in rows if r["format"] == "cusparse-alg1"}
    head = ["matrix", "format", "ms", "CSR-eq GB/s", "% copy", "vs ALG1", "plan ms", "plan / SpMV", "break-even"]
    if other is not None:
        head += ["other ms", "other plan ms"]
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for r in rows:
        f = r["format"]
        if keep and prefix(f) not in keep and f not in keep:
            continue
        be = r.get("break_even_spmvs")
        cells = [r["matrix"], f, f"{r['spmv_seconds'] * 1e3:.4f}", f"{r.get('csr_gbs', 0):.0f}",
                 f"{r.get('pct_copy', 0):.1f}",
                 f"{alg1[r['matrix']] / r['spmv_seconds']:.2f}" if r["matrix"] in alg1 else "-",
                 f"{r['plan_seconds'] * 1e3:.1f}" if "plan_seconds" in r else
                 (f"{r['setup_seconds'] * 1e3:.1f} (setup)" if "setup_seconds" in r else "-"),
                 f"{r['plan_spmvs']:.0f}" if "plan_spmvs" in r else "-",
                 "never" if be is not None and be < 0 else (f"{be:.0f}" if be is not None else "-")]
        if other is not None:
            o = other.get((r["matrix"], prefix(f)))
            cells += [f"{o['spmv_seconds'] * 1e3:.4f}" if o else "-",
                      f"{o['plan_seconds'] * 1e3:.1f}" if o and "plan_seconds" in o else "-"]
        print("| " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main(sys.argv)
