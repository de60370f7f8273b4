#!/usr/bin/env bash
# `cmake --install` into a temporary prefix, then the installed Python package is imported from
# there (not the build tree) and plans on the CPU with the libspmvjit.so installed beside it.
# Arguments: build dir, python interpreter, the package folder relative to the prefix.
set -euo pipefail
build_dir="$1"; python="$2"; py_dir="$3"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cmake --install "$build_dir" --prefix "$tmp/prefix" >/dev/null
cd "$tmp"
PYTHONPATH="$tmp/prefix/$py_dir" SPMVJIT_CACHE_DIR="$tmp/cache" "$python" - "$tmp/prefix" <<'PY'
import sys
import numpy as np
import spmvjit

prefix = sys.argv[1]
assert spmvjit.__file__.startswith(prefix), spmvjit.__file__
indptr, indices, data = np.array([0, 2, 3], np.int32), np.array([0, 1, 1], np.int32), np.array([1.0, 2.0, 3.0])
p = spmvjit.plan((indptr, indices, data, (2, 2)), backend="cpu")
y = p @ np.array([1.0, 1.0])
assert np.array_equal(y, [3.0, 3.0]), y
libs = {line.split()[-1] for line in open("/proc/self/maps") if "libspmvjit.so" in line}
assert libs and all(l.startswith(prefix) for l in libs), libs
print(f"python_install: spmvjit {spmvjit.__version__} from {spmvjit.__file__}, library {sorted(libs)[0]}")
PY
