#!/usr/bin/env bash
# One call on a CUDA machine: unpack deps, build (CUDA only), test, memcheck, benchmark vs cuSPARSE.
# Usage: scripts/gpu_run.sh   (results in $OUT, default ./out: log.txt, memcheck.txt,
# bench.txt/.json, bench_warm_{1,0}.json, bench_small.txt/.json). Needs .deps/catch2_*.deb (apt-get
# download catch2) since the GPU machine has no network; .deps/matrices/*.mtx are tested if present.
# Each stage has a time limit (T_TESTS, T_CTEST, T_BENCH, T_MEMCHECK seconds) so the whole run
# ends inside a 10-minute device call; BENCH_FORMATS narrows the large-suite formats (default all).
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
OUT=${OUT:-$ROOT/out}
mkdir -p "$OUT"
DEPS=$ROOT/.deps
PREFIX=${SPMVJIT_PREFIX:-/tmp/spmvjit-prefix}
BUILD=${SPMVJIT_GPU_BUILD:-/tmp/spmvjit-build}
JOBS=$(nproc)
exec > >(tee -a "$OUT/log.txt") 2>&1
T0=$(date +%s)
step() { echo; echo "=== $* (t=$(( $(date +%s) - T0 ))s)"; }
status=0

step "machine"
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.max.sm,clocks.mem --format=csv || true
nvcc --version | tail -2 || true
cmake --version | head -1

step "dependencies"
mkdir -p "$PREFIX"
for d in "$DEPS"/*.deb; do [ -e "$d" ] && dpkg -x "$d" "$PREFIX" && echo "unpacked $(basename "$d")"; done
MATRICES=$DEPS/matrices
[ -d "$MATRICES" ] || MATRICES=$ROOT/../shared/matrices

step "configure + build"
export PATH=/usr/local/cuda/bin:$PATH
cmake -S "$ROOT" -B "$BUILD" -G Ninja -USPMVJIT_WITH_CUDA -USPMVJIT_BENCH_CUSPARSE -DCUDAToolkit_ROOT=/usr/local/cuda -DCMAKE_BUILD_TYPE=Release -DSPMVJIT_WITH_CPU=OFF \
  -DCMAKE_PREFIX_PATH="$PREFIX/usr" -DSPMVJIT_MATRICES_DIR="$MATRICES" | grep -E "spmvjit|Error|error|CUDA"
grep -q "SPMVJIT_WITH_CUDA:BOOL=ON" "$BUILD/CMakeCache.txt" || { echo "CUDA backend not enabled"; grep -i "cuda" "$BUILD/CMakeCache.txt" | head -20; exit 2; }
ninja -C "$BUILD" -j"$JOBS" 2>&1 | grep -Ev "^\[[0-9]+/[0-9]+\] (Building|Linking)" ; [ "${PIPESTATUS[0]}" = 0 ] || exit 3
CLI=$BUILD/tools/spmvjit
TESTS=$BUILD/tests/spmvjit_tests

step "[cuda] tests"
SPMVJIT_CACHE_DIR=/tmp/spmvjit-test-cache SPMVJIT_MATRICES_DIR="$MATRICES" timeout "${T_TESTS:-120}" "$TESTS" "[cuda]" -d yes \
  2>&1 | grep -Ev "^\s*$|^[0-9.]+ s: " | tail -n 80 || status=1

# ctest (the CPU-side tests) is left to the CPU machines: this build has no CPU backend.

step "bench: large suite, every format, vs cuSPARSE (cold kernel cache)"
rm -rf /tmp/spmvjit-bench-cache
timeout "${T_BENCH:-300}" "$CLI" bench --suite --large --backend cuda --formats "${BENCH_FORMATS:-all}" --iters 30 \
  --cache-dir /tmp/spmvjit-bench-cache --json "$OUT/bench.json" > "$OUT/bench.txt" 2>&1 || status=1
cat "$OUT/bench.txt"

step "bench: warm-cache plan time (20M nonzeros; the last auto is warm in memory too), pinned staging on, then off"
for staging in 1 0; do
  SPMVJIT_CUDA_STAGING=$staging timeout 60 "$CLI" bench --gen poisson2d:2000 --backend cuda --formats auto,csr_adaptive,csr,auto \
    --no-peers --iters 5 --cache-dir /tmp/spmvjit-bench-cache --json "$OUT/bench_warm_$staging.json" > "/tmp/bench_warm_$staging.txt" 2>&1 || status=1
  echo "staging=$staging"; cat "/tmp/bench_warm_$staging.txt"
done
python3 - "$OUT" <<'PY' || true
import json, sys
for s in ("1", "0"):
    for r in json.load(open(f"{sys.argv[1]}/bench_warm_{s}.json"))["results"]:
        if r.get("ok"):
            t = r.get("timings", {})
            print(f"staging={s} {r['format']:>22} spmv {r['spmv_seconds']*1e3:.4f} ms  " +
                  " ".join(f"{k} {v*1e3:.1f}" for k, v in t.items()) + " (ms)")
PY

step "bench: small matrices (latency)"
timeout 30 "$CLI" bench --suite --backend cuda --formats auto,csr,sell,csr_adaptive --cache-dir /tmp/spmvjit-bench-cache \
  --json "$OUT/bench_small.json" > "$OUT/bench_small.txt" 2>&1 || status=1
for g in poisson2d:100 random:10000:1:20; do
  timeout 10 "$CLI" bench --gen "$g" --backend cuda --formats auto,sell,csr_adaptive --cache-dir /tmp/spmvjit-bench-cache \
    >> "$OUT/bench_small.txt" 2>&1 || status=1
done
cat "$OUT/bench_small.txt"

step "compute-sanitizer memcheck (kernel accesses; the OOM/bad-image API errors the tests provoke are not reported): [cuda] device tests int32/double, int64/float, device-memory and device-planning tests"
SPMVJIT_CACHE_DIR=/tmp/spmvjit-test-cache SPMVJIT_MATRICES_DIR="$MATRICES" timeout "${T_MEMCHECK:-60}" \
  compute-sanitizer --tool memcheck --report-api-errors no --error-exitcode 9 --print-limit 20 "$TESTS" \
  "cuda device: every format int32 double,cuda device: every format int64 float,cuda device: matrix arrays*,cuda device planning: int32 double*,cuda device planning: int64 float*,cuda device planning: a bad*,cuda device planning: update*" > "$OUT/memcheck.txt" 2>&1
echo "memcheck exit $? (0 clean, 9 errors found, 124 time limit)"
tail -n 30 "$OUT/memcheck.txt"

step "done, status $status"
exit $status
