#!/usr/bin/env bash
# One call on a CUDA machine: unpack deps, build (CUDA only), test, benchmark vs cuSPARSE, memcheck.
# Usage: scripts/gpu_run.sh   (results in $OUT, default ./out). Needs .deps/catch2_*.deb and .deps/libxxhash-dev_*.deb (`apt-get
# download catch2 libxxhash-dev`) since the GPU machine has no network; .deps/matrices/*.mtx are tested if present.
# STAGES (comma list, default all of them but trace): build (only that), tests, trace (step timings of warm plans,
# SPMVJIT_LOG_LEVEL=trace), auto (the large suite, planner's choice + device input + cuSPARSE,
# with break-even), all (every format on the large suite), warm (warm-cache plan times), cold
# (first plan of a fresh process on a cold cache, tiered compile on and off), small, shared (every
# format on ../shared/matrices), values (the extended large suite per value kind in $VALUES, default
# random,few,ones, compression on; then the kinds in $VALUES_OFF, default few,ones, compression
# off; every bench times warm and cold), memcheck, sanitize (racecheck, synccheck and initcheck
# on every format, or SANITIZE_TOOLS on SANITIZE_FILTER; not in the default list), det (deterministic mode's cost; not in the default
# list), hip (not in the default list: the HIP backend built for HIP's NVIDIA platform from
# .deps/libamdhip64-dev_*.deb, `apt-get download libamdhip64-dev`; the whole [cuda] device suite
# run through it (HIP_TEST_FILTER: another filter), the [hip] tests (HIP_SKIP_HIP_TESTS=1: not),
# and the large suite benched with --backend hip beside --backend cuda and cuSPARSE from the same
# build; HIP_BENCH_BACKENDS= (empty): no bench), python (not in the default list: the Python
# module, with pybind11 from .deps/pybind11-dev_*.deb, and its GPU tests: device arrays through
# __cuda_array_interface__, DLPack, CuPy and PyTorch where installed), spmm (not in the default
# list: `run --vectors K` for K in $SPMM_K, default 1 8 32, both layouts, on $SPMM_MATRICES; the
# time of one SpMM against K SpMVs), spmmbench (not in the default list: `bench --gen M --vectors K`
# on $SPMM_GEN for K in $SPMM_K (default 8 32), both layouts, against cuSPARSE SpMM), symmetric (not
# in the default list: symmetric storage against full storage and cuSPARSE, below), symab (not in
# the default list: compile-option variants of the symmetric kernel, below), choice (not in the
# default list: the estimates' wall and CPU time under several thread counts, choice.txt). BASELINE_TREE=dir (a source tree of an older commit) is
# built beside and runs the `auto` and `trace` stages too, for an A/B in the same session. AUTO_FLAGS:
# more `bench` options for the auto stage (`--timing warm`: warm plans only, about half its time). Each stage has a time
# limit (T_TESTS, T_BENCH, T_MEMCHECK seconds) so a run ends inside a 10-minute device call;
# MEMCHECK_FILTER replaces the memcheck stage's Catch2 filter.
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
OUT=${OUT:-$ROOT/out}
mkdir -p "$OUT"
DEPS=$ROOT/.deps
PREFIX=${SPMVJIT_PREFIX:-/tmp/spmvjit-prefix}
BUILD=${SPMVJIT_GPU_BUILD:-$ROOT/build-gpu}  # in the tree (git-ignored): kept while the machine stays warm
STAGES=${STAGES:-tests,auto,all,shared,warm,cold,small,memcheck}
has() { [[ ",$STAGES," == *",$1,"* ]]; }
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
configure_build() {  # source dir, build dir, jobs, more cmake options
  cmake -S "$1" -B "$2" -G Ninja -USPMVJIT_WITH_CUDA -USPMVJIT_BENCH_CUSPARSE -DCUDAToolkit_ROOT=/usr/local/cuda -DCMAKE_BUILD_TYPE=Release -DSPMVJIT_WITH_CPU=OFF \
    -DCMAKE_PREFIX_PATH="$PREFIX/usr" -DSPMVJIT_MATRICES_DIR="$MATRICES" ${4:-} | grep -E "spmvjit|Error|error|CUDA"
  grep -q "SPMVJIT_WITH_CUDA:BOOL=ON" "$2/CMakeCache.txt" || { echo "CUDA backend not enabled in $2"; return 2; }
  ninja -C "$2" -j"$3" 2>&1 | grep -Ev "^\[[0-9]+/[0-9]+\] (Building|Linking)" ; return "${PIPESTATUS[0]}"
}
BASE_CLI=
if [ -n "${BASELINE_TREE:-}" ]; then
  configure_build "$BASELINE_TREE" "$BUILD-base" $((JOBS / 2)) > /tmp/base_build.log 2>&1 &
  BASE_PID=$!
fi
needs_main=0  # the hip and python stages build their own
for s in build tests auto all shared warm cold small memcheck sanitize det values trace spmm spmmbench symmetric symab; do has $s && needs_main=1; done
if [ $needs_main = 1 ]; then configure_build "$ROOT" "$BUILD" "$JOBS" || exit 3; fi
if [ -n "${BASELINE_TREE:-}" ]; then
  if wait $BASE_PID; then BASE_CLI=$BUILD-base/tools/spmvjit; else echo "baseline build failed"; tail -20 /tmp/base_build.log; fi
fi
CLI=$BUILD/tools/spmvjit
TESTS=$BUILD/tests/spmvjit_tests

if has tests; then
step "[cuda] tests"
# TEST_FILTER: another Catch2 filter, run in one process (e.g. "cuda device planning*"). Without it,
# every [cuda] case but the compile-everything ones (they need no device and run on the CPU
# machines) runs in TEST_SHARDS (default 8) processes side by side, since one process compiling
# every kernel into an empty cache outlasts any limit; then the cases that time kernels, exhaust
# device memory or load the device from 8 threads run alone. T_TESTS bounds each phase;
# TEST_CASES (an extended regular expression) keeps the cases whose names match.
export SPMVJIT_CACHE_DIR=/tmp/spmvjit-test-cache SPMVJIT_MATRICES_DIR="$MATRICES"
if [ -n "${TEST_FILTER:-}" ]; then
  timeout "${T_TESTS:-200}" "$TESTS" "$TEST_FILTER" -d yes 2>&1 | grep -Ev "^\s*$|^[0-9.]+ s: " | tail -n 80 || status=1
else
  serial_re='warm timing agrees|out of memory|then OOM|8 threads on 8 streams'
  # Names go to Catch2's -f with ',' and '*' escaped: unescaped, a name holding a comma matched
  # nothing and its case silently did not run.
  "$TESTS" --list-test-names-only "[cuda]" | sed '/^$/d' | grep -Ev 'kernel specs? (\(.*\) )?compiles' |
    grep -E "${TEST_CASES:-.}" | sed -e 's/,/\\,/g' -e 's/\*/\\*/g' > /tmp/cuda_cases.txt
  grep -E "$serial_re" /tmp/cuda_cases.txt > /tmp/cuda_serial.txt
  rm -f /tmp/cuda_shard_*
  grep -Ev "$serial_re" /tmp/cuda_cases.txt | awk -v n="${TEST_SHARDS:-8}" '{ print > ("/tmp/cuda_shard_" (NR - 1) % n ".txt") }'
  run_cases() {  # list file -> log next to it, "passed" or the failure's tail; every case must run
    timeout "${T_TESTS:-200}" "$TESTS" -f "$1" -d yes > "${1%.txt}.log" 2>&1
    local rc=$? want ran
    want=$(grep -c . "$1")
    ran=$(grep -oE "in [0-9]+ test case|^test cases: *[0-9]+" "${1%.txt}.log" | grep -oE "[0-9]+" | tail -n 1)
    if [ $rc = 0 ] && [ "${ran:-0}" = "$want" ]; then
      echo "$(basename "$1" .txt): $(grep -E "^All tests passed|^test cases:" "${1%.txt}.log")"
    else
      echo "$(basename "$1" .txt): exit $rc, ${ran:-0} of $want cases ran"
      grep -Ev "^\s*$|^[0-9.]+ s: " "${1%.txt}.log" | tail -n 40
      return 1
    fi
  }
  pids=()
  for f in /tmp/cuda_shard_*.txt; do run_cases "$f" > "${f%.txt}.out" 2>&1 & pids+=($!); done
  for p in "${pids[@]}"; do wait "$p" || status=1; done
  cat /tmp/cuda_shard_*.out
  if [ -s /tmp/cuda_serial.txt ]; then run_cases /tmp/cuda_serial.txt || status=1; fi
fi
fi
# ctest (the CPU-side tests) is left to the CPU machines: this build has no CPU backend.

if has auto; then
  for who in new base; do
    C=$CLI; [ $who = base ] && C=$BASE_CLI
    [ -n "$C" ] || continue
    step "bench ($who): large suite, auto + device input, vs cuSPARSE (warm kernel cache after a first pass)"
    rm -rf /tmp/spmvjit-auto-cache-$who
    timeout 120 "$C" bench --suite --large --backend cuda --formats auto --no-peers --iters 3 \
      --cache-dir /tmp/spmvjit-auto-cache-$who > /dev/null 2>&1  # fills the kernel cache
    timeout "${T_BENCH:-300}" "$C" bench --suite --large --backend cuda --formats auto --iters 30 ${AUTO_FLAGS:-} \
      --cache-dir /tmp/spmvjit-auto-cache-$who --json "$OUT/bench_auto_$who.json" > "/tmp/bench_auto_$who.txt" 2>&1 || status=1
    cat "/tmp/bench_auto_$who.txt"
  done
fi

if has det; then
  # Deterministic mode's cost: the large suite's auto plan with and without --deterministic, and
  # csr_adaptive (the format that changes) forced both ways (SpMV times; plan times are cold).
  rm -rf /tmp/spmvjit-det-cache
  for flag in "" --deterministic; do
    step "bench: large suite, auto and csr_adaptive ${flag:-(default)}"
    timeout "${T_BENCH:-300}" "$CLI" bench --suite --large --backend cuda --formats auto,csr_adaptive --iters 30 \
      --timing warm --cache-dir /tmp/spmvjit-det-cache $flag --json "$OUT/bench_det${flag:+_on}.json" \
      > /tmp/bench_det.txt 2>&1 || status=1
    cat /tmp/bench_det.txt
  done
fi

if has all; then
step "bench: large suite, every format, vs cuSPARSE (cold kernel cache)"
rm -rf /tmp/spmvjit-bench-cache
timeout "${T_BENCH:-300}" "$CLI" bench --suite --large --backend cuda --formats "${BENCH_FORMATS:-all}" --iters 30 \
  --cache-dir /tmp/spmvjit-bench-cache --json "$OUT/bench.json" > /tmp/bench.txt 2>&1 || status=1
cat /tmp/bench.txt
fi

if has values; then
  # The extended large suite once per value kind (issue 11): auto vs cuSPARSE with compressed value
  # arrays (engine/value_codec.hpp), then few/ones again with compression off for the A/B.
  export SPMVJIT_MATRICES_DIR="$MATRICES"
  VALUES=${VALUES:-random,few,ones}
  VALUES_OFF=${VALUES_OFF-few,ones}
  step "bench: extended large suite x {$VALUES} values, auto vs cuSPARSE, warm and cold"
  rm -rf /tmp/spmvjit-values-cache
  timeout "${T_BENCH:-400}" "$CLI" bench --suite --large --values "$VALUES" --backend cuda --formats auto \
    --timing warm,cold --iters 30 --cache-dir /tmp/spmvjit-values-cache --json "$OUT/bench_values.json" \
    > /tmp/bench_values.txt 2>&1 || status=1
  cat /tmp/bench_values.txt
  if [ -n "$VALUES_OFF" ]; then
    step "bench: the same, {$VALUES_OFF}, compression off"
    SPMVJIT_VALUE_COMPRESSION=0 timeout "${T_BENCH:-400}" "$CLI" bench --suite --large --values "$VALUES_OFF" \
      --backend cuda --formats auto --timing warm --iters 30 --no-peers --cache-dir /tmp/spmvjit-values-cache \
      --json "$OUT/bench_values_off.json" > /tmp/bench_values_off.txt 2>&1 || status=1
    cat /tmp/bench_values_off.txt
  fi
fi

if has shared; then
step "bench: the test matrices (../shared/matrices), every format, vs cuSPARSE"
for m in "$MATRICES"/*.mtx; do
  timeout 60 "$CLI" bench "$m" --backend cuda --formats all --iters 30 --cache-dir /tmp/spmvjit-bench-cache \
    --json "/tmp/bench_shared_$(basename "$m" .mtx).json" > /tmp/bench_shared.txt 2>&1 || status=1
  cat /tmp/bench_shared.txt
done
python3 - /tmp/bench_shared_*.json > "$OUT/bench_shared.json" <<'PY' || true
import json, sys
print(json.dumps({"results": [r for f in sys.argv[1:] for r in json.load(open(f))["results"]]}))
PY
fi

if has trace; then
# TRACE_GEN="spec spec ...": those generated matrices instead of the large suite, each traced
# twice: as timed (trace.txt) and with every device-planner launch waited for (trace_sync.txt).
step "trace: step timings of warm plans (SPMVJIT_LOG_LEVEL=trace), auto from host and device memory"
if [ -z "${TRACE_GEN:-}" ]; then
  timeout 120 "$CLI" bench --suite --large --backend cuda --formats auto --no-peers --iters 3 \
    --cache-dir /tmp/spmvjit-trace-cache > /dev/null 2>&1  # fills the kernel cache
  SPMVJIT_LOG_LEVEL=trace timeout "${T_BENCH:-300}" "$CLI" bench --suite --large --backend cuda --formats auto \
    --no-peers --iters 10 --cache-dir /tmp/spmvjit-trace-cache > "$OUT/trace.txt" 2>&1 || status=1
else
  # With BASELINE_TREE, its build is traced too (trace_base.txt, trace_sync_base.txt).
  for who in new base; do
    C=$CLI sfx=; [ $who = base ] && C=$BASE_CLI sfx=_base
    [ -n "$C" ] || continue
    for g in $TRACE_GEN; do
      common=(bench --gen "$g" --backend cuda --formats auto --no-peers --timing warm --cache-dir /tmp/spmvjit-trace-cache-$who)
      timeout 60 "$C" "${common[@]}" --iters 3 > /dev/null 2>&1  # fills the kernel cache
      SPMVJIT_LOG_LEVEL=trace timeout 60 "$C" "${common[@]}" --iters 10 >> "$OUT/trace$sfx.txt" 2>&1 || status=1
      SPMVJIT_TRACE_SYNC=1 SPMVJIT_LOG_LEVEL=trace timeout 60 "$C" "${common[@]}" --iters 3 \
        >> "$OUT/trace_sync$sfx.txt" 2>&1 || status=1
    done
  done
fi
grep -v "^\[spmvjit trace\]" "$OUT/trace.txt" | tail -20
fi

if has choice; then
# The choice's estimates on this host: warm device plans of CHOICE_GEN (default four suite
# matrices) traced with SPMVJIT_ESTIMATE_THREADS of 1, 2, 4 and 8 and the plan pool's spinning on
# and off (SPMVJIT_POOL_SPIN=0); each estimate's wall and CPU time ("estimate cpu:") go to
# choice.txt, a header line per setting.
step "choice: estimate threads and pool spinning on warm device plans"
for g in ${CHOICE_GEN:-poisson2d:2000 stencil27:100 blockfem:40:3 dense:2000}; do
  common=(bench --gen "$g" --backend cuda --formats auto --no-peers --timing warm --cache-dir /tmp/spmvjit-choice-cache)
  timeout 60 "$CLI" "${common[@]}" --iters 3 > /dev/null 2>&1  # fills the kernel cache
  # The choice alone on this host, without the device (fresh samples, as in a plan).
  for threads in 1 8; do
    echo "== $g inspect --time, estimate_threads=$threads" >> "$OUT/choice.txt"
    SPMVJIT_ESTIMATE_THREADS=$threads timeout "${T_CHOICE:-40}" "$CLI" inspect --gen "$g" --backend cuda \
      --target sm_90 --device-input --time 15 2>&1 | tail -1 >> "$OUT/choice.txt" || status=1
  done
  for setting in "8 1" "8 0" "4 1" "2 1" "1 1"; do
    read -r threads spin <<< "$setting"
    echo "== $g estimate_threads=$threads pool_spin=$spin" >> "$OUT/choice.txt"
    SPMVJIT_ESTIMATE_THREADS=$threads SPMVJIT_POOL_SPIN=$spin SPMVJIT_LOG_LEVEL=trace timeout "${T_CHOICE:-40}" "$CLI" \
      "${common[@]}" --iters 5 2>&1 | grep -E "estimate|plan on device: (choice|statistics|convert)|auto:" \
      >> "$OUT/choice.txt" || status=1
  done
done
fi

if has warm; then
step "bench: warm-cache plan time (20M nonzeros; the last auto is warm in memory too), pinned staging on, then off"
for staging in 1 0; do
  SPMVJIT_CUDA_STAGING=$staging timeout 60 "$CLI" bench --gen poisson2d:2000 --backend cuda --formats auto,csr_adaptive,csr,auto \
    --no-peers --iters 5 --cache-dir /tmp/spmvjit-bench-cache --json "/tmp/bench_warm_$staging.json" > "/tmp/bench_warm_$staging.txt" 2>&1 || status=1
  echo "staging=$staging"; cat "/tmp/bench_warm_$staging.txt"
done
python3 - "$OUT" <<'PY' || true
import json, sys
for s in ("1", "0"):
    for r in json.load(open(f"/tmp/bench_warm_{s}.json"))["results"]:
        if r.get("ok"):
            t = r.get("timings", {})
            print(f"staging={s} {r['format']:>22} spmv {r['spmv_seconds']*1e3:.4f} ms  " +
                  " ".join(f"{k} {v*1e3:.1f}" for k, v in t.items()) + " (ms)")
PY
fi

if has cold; then
step "cold start: first plan of a fresh process, empty kernel cache (tiered compile on, then off)"
for tier in 1 0; do
  for f in csr_adaptive sell sell_diag csr; do
    d=$(mktemp -d)
    SPMVJIT_LOG_LEVEL=debug SPMVJIT_TIERED_COMPILE=$tier timeout 60 "$CLI" run --gen poisson2d:300 --backend cuda --format $f --iters 5 \
      --cache-dir "$d" --json "/tmp/cold_${f}_$tier.json" > /tmp/cold_log.txt 2>&1 || status=1
    grep -o "cache: compiled .* ms" /tmp/cold_log.txt | sed -E 's/cache: compiled (.{60}).* in /    compiled \1... in /' || true
    python3 - "/tmp/cold_${f}_$tier.json" "$tier" "$f" <<'PY' || true
import json, sys
p = json.load(open(sys.argv[1]))["plan"]
t = p["timings"]
print(f"tiered={sys.argv[2]} {sys.argv[3]:>13}: " + " ".join(f"{k} {v*1e3:.1f}" for k, v in t.items()) + f" (ms), kernel {p['kernel']['cache']} / {p['kernel'].get('tier', '-')}")
PY
    rm -rf "$d"
  done
done
fi

if has spmm; then
step "spmm: run --vectors K (median time of one SpMM; K = 1 is the SpMV), both layouts"
for m in ${SPMM_MATRICES:-poisson2d:1000 blockfem:40 rmat:18}; do
  for k in ${SPMM_K:-1 8 32}; do
    for layout in col row; do
      [ "$k" = 1 ] && [ "$layout" = row ] && continue
      line=$(timeout 120 "$CLI" run --gen "$m" --backend cuda --vectors "$k" --layout "$layout" --iters 20 2>&1 |
             grep -E "^plan |spmv \(median\)|^verified|WRONG|error" | tr -s ' ' | tr '\n' ' ')
      echo "$m k=$k $layout: $line"
    done
  done
done
fi

if has spmmbench; then
# k vectors against cuSPARSE SpMM (CSR ALG1-3, its fastest the yardstick), one `bench --gen` per
# matrix of $SPMM_GEN (default: seven kinds of the CPU-sized suite, about 2M nonzeros each: 32
# vectors of the large suite's 16M-row matrices would be 4 GB per X, and the host reference runs
# k SpMVs per check), K in $SPMM_K (default 8 32), both layouts. Tables in $OUT/spmm.txt.
for k in ${SPMM_K:-8 32}; do
  for layout in ${SPMM_LAYOUTS:-col row}; do
    step "spmmbench: --vectors $k --layout $layout vs cuSPARSE SpMM"
    for m in ${SPMM_GEN:-poisson2d:1000 stencil27:60 random:500000:1:40 powerlaw:500000 rmat:17:16 blockfem:20:3 circuit:400000}; do
      timeout "${T_SPMM:-60}" "$CLI" bench --gen "$m" --backend cuda --vectors "$k" --layout "$layout" --formats auto \
        --timing warm --iters 10 --cache-dir /tmp/spmvjit-bench-cache > /tmp/spmm_one.txt 2>&1 || status=1
      echo "## $m k=$k $layout" >> "$OUT/spmm.txt"
      grep -vE "^(device|peer|index|[0-9]+ vectors)" /tmp/spmm_one.txt | grep -v "^bench:" >> "$OUT/spmm.txt"
      grep -E "^$m|WRONG|error" /tmp/spmm_one.txt | grep -E "auto|alg|WRONG|error" | cut -c1-110
    done
  done
done
fi

if has symmetric; then
# Symmetric storage: each matrix of $SYM_GEN (values $SYM_VALUES, default random; made symmetric
# from its lower triangle) declared symmetric (auto: sym_diag on banded ones, from host and device
# memory) beside the planner's choice for it as a general matrix (full storage) and cuSPARSE on the
# full matrix. Tables in $OUT/symmetric.txt.
for v in ${SYM_VALUES:-random}; do
  for m in ${SYM_GEN:-poisson2d:2000 stencil27:100 poisson3d:160 blockfem:40:3}; do
    step "symmetric: $m@$v"
    timeout "${T_SYM:-120}" "$CLI" bench --gen "$m@$v" --symmetric --backend cuda --formats auto,general,device \
      --iters 30 --cache-dir /tmp/spmvjit-bench-cache --json "$OUT/sym_${m//:/_}_$v.json" > /tmp/sym_one.txt 2>&1 || status=1
    echo "## $m@$v" >> "$OUT/symmetric.txt"
    grep -v "^bench:" /tmp/sym_one.txt >> "$OUT/symmetric.txt"
    grep -E "auto|general|device:|alg|WRONG|error" /tmp/sym_one.txt | cut -c1-150
  done
done
fi

if has symab; then
# An A/B of compile-option variants of the symmetric kernels ($SYMAB_OPTIONS: space-separated,
# commas inside one variant stand for spaces; "-" is none), each matrix of $SYM_GEN with random
# values declared symmetric, auto's sym_diag warm and cold, one process per variant (general: the
# full-storage plan, once). Tables in $OUT/symab.txt.
for m in ${SYM_GEN:-stencil27:100 poisson3d:160 poisson2d:2000}; do
  for opt in ${SYMAB_OPTIONS:--}; do
    extra=""; [ "$opt" != "-" ] && extra="${opt//,/ }"
    fmts=auto; [ "$opt" = "-" ] && fmts=auto,general
    step "symab: $m@random, options '${extra}'"
    SPMVJIT_CUDA_EXTRA_OPTIONS="$extra" timeout "${T_SYM:-120}" "$CLI" bench --gen "$m@random" --symmetric --backend cuda \
      --formats $fmts --no-peers --iters 50 --cache-dir /tmp/spmvjit-symab-cache > /tmp/symab_one.txt 2>&1 || status=1
    echo "## $m options '${extra}'" >> "$OUT/symab.txt"
    grep -v "^bench:" /tmp/symab_one.txt >> "$OUT/symab.txt"
    grep -E "auto|general|WRONG|error" /tmp/symab_one.txt | cut -c1-150
  done
done
fi

if has small; then
step "bench: small matrices (latency)"
timeout 30 "$CLI" bench --suite --backend cuda --formats auto,csr,sell,csr_adaptive --cache-dir /tmp/spmvjit-bench-cache \
  --json /tmp/bench_small.json > /tmp/bench_small.txt 2>&1 || status=1
for g in poisson2d:100 random:10000:1:20; do
  timeout 10 "$CLI" bench --gen "$g" --backend cuda --formats auto,sell,csr_adaptive --cache-dir /tmp/spmvjit-bench-cache \
    >> /tmp/bench_small.txt 2>&1 || status=1
done
cat /tmp/bench_small.txt
fi

if has memcheck; then
step "compute-sanitizer memcheck (kernel accesses; the OOM/bad-image API errors the tests provoke are not reported): [cuda] device tests int32/double, int64/float, device-memory, device-planning, spmm and transpose tests"
SPMVJIT_CACHE_DIR=/tmp/spmvjit-test-cache SPMVJIT_MATRICES_DIR="$MATRICES" timeout "${T_MEMCHECK:-60}" \
  compute-sanitizer --tool memcheck --report-api-errors no --error-exitcode 9 --print-limit 20 "$TESTS" \
  "${MEMCHECK_FILTER:-cuda device: every format int32 double,cuda device: every format int64 float,cuda device: matrix arrays*,cuda device planning: int32 double*,cuda device planning: int64 float*,cuda device planning: a bad*,cuda device planning: update*,cuda sanitizer set*,spmm device*,transpose device*,symmetric device*,cuda device: complex formats int32 complex double*}" > /tmp/memcheck.txt 2>&1
echo "memcheck exit $? (0 clean, 9 errors found, 124 time limit)"
tail -n 30 /tmp/memcheck.txt
fi

if has sanitize; then
# racecheck (shared-memory hazards), synccheck (barriers and warp syncs), initcheck (reads of
# uninitialized device memory) over every format, plain and deterministic, on small matrices.
for tool in ${SANITIZE_TOOLS:-racecheck synccheck initcheck}; do
  step "compute-sanitizer $tool: every format, plain and deterministic, on small matrices; device transposes"
  SPMVJIT_CACHE_DIR=/tmp/spmvjit-test-cache SPMVJIT_MATRICES_DIR="$MATRICES" timeout "${T_SANITIZE:-120}" \
    compute-sanitizer --tool $tool --error-exitcode 9 --print-limit 20 "$TESTS" \
    "${SANITIZE_FILTER:-cuda sanitizer set: every format on small matrices,transpose device*}" > /tmp/$tool.txt 2>&1
  echo "$tool exit $? (0 clean, 9 errors found, 124 time limit)"
  tail -n 12 /tmp/$tool.txt
done
fi

if has hip; then
  step "HIP backend on HIP's NVIDIA platform: build"
  HIPB=$BUILD-hip
  configure_build "$ROOT" "$HIPB" "$JOBS" "-DSPMVJIT_WITH_HIP=ON -DSPMVJIT_HIP_PLATFORM=nvidia" || exit 3
  grep -E "SPMVJIT_HIP_PLATFORM|SPMVJIT_HIP_INCLUDE" "$HIPB/CMakeCache.txt"
  step "[cuda] device tests through the HIP backend (SPMVJIT_TEST_GPU=hip)"
  SPMVJIT_TEST_GPU=hip SPMVJIT_CACHE_DIR=/tmp/spmvjit-hip-test-cache SPMVJIT_MATRICES_DIR="$MATRICES" \
    timeout "${T_TESTS:-240}" "$HIPB/tests/spmvjit_tests" "${HIP_TEST_FILTER:-[cuda]~cuda: every GPU kernel spec compiles*}" -d yes 2>&1 \
    | grep -Ev "^\s*$|^[0-9.]+ s: " | tail -n 60 || status=1
  step "[hip] tests (device tests, the NVIDIA platform's compiler facts; the sm_90 compile-everything skipped here)"
  [ -n "${HIP_SKIP_HIP_TESTS:-}" ] || SPMVJIT_CACHE_DIR=/tmp/spmvjit-hip-test-cache timeout 120 "$HIPB/tests/spmvjit_tests" "[hip]" \
    "~hip: every GPU kernel spec compiles*" "~hip: a share of the GPU kernel specs*" -d yes 2>&1 | grep -Ev "^\s*$|^[0-9.]+ s: |SKIPPED|^-+$|^\.+$" | tail -n 60 || status=1
  for b in ${HIP_BENCH_BACKENDS-hip cuda}; do  # HIP_BENCH_BACKENDS= (empty): no bench
    step "bench: large suite, auto + device input, --backend $b (HIP build; warm kernel cache after a first pass)"
    timeout 150 "$HIPB/tools/spmvjit" bench --suite --large --backend $b --formats auto --no-peers --iters 3 \
      --cache-dir /tmp/spmvjit-hip-bench-cache > /dev/null 2>&1
    timeout "${T_BENCH:-300}" "$HIPB/tools/spmvjit" bench --suite --large --backend $b --formats auto --iters 30 \
      --cache-dir /tmp/spmvjit-hip-bench-cache --json "$OUT/bench_hip_$b.json" > /tmp/bench_hip_$b.txt 2>&1 || status=1
    cat /tmp/bench_hip_$b.txt
  done
  if [ -n "${HIP_MEMCHECK:-}" ]; then
    step "compute-sanitizer memcheck through the HIP backend: every format int32 double, device planning"
    SPMVJIT_TEST_GPU=hip SPMVJIT_CACHE_DIR=/tmp/spmvjit-hip-test-cache SPMVJIT_MATRICES_DIR="$MATRICES" timeout "${T_MEMCHECK:-60}" \
      compute-sanitizer --tool memcheck --report-api-errors no --error-exitcode 9 --print-limit 20 "$HIPB/tests/spmvjit_tests" \
      "cuda device: every format int32 double,cuda device planning: int32 double*,cuda sanitizer set*" > /tmp/memcheck_hip.txt 2>&1
    echo "memcheck exit $? (0 clean, 9 errors found, 124 time limit)"
    tail -n 20 /tmp/memcheck_hip.txt
  fi
fi

if has hipab; then
  # The CUDA backend with and without programmatic dependent launch (SPMVJIT_CUDA_PDL) beside the HIP
  # backend (no early launches, plain loads where CUDA uses __ldg), same build, same matrices.
  HIPB=$BUILD-hip
  configure_build "$ROOT" "$HIPB" "$JOBS" "-DSPMVJIT_WITH_HIP=ON -DSPMVJIT_HIP_PLATFORM=nvidia" || exit 3
  for g in ${HIPAB_GENS:-dense:2000 random:2000000:1:40 powerlaw:2000000 denserows:1000000:10:16}; do
    for cfg in ${HIPAB_CONFIGS:-cuda:1: cuda:0: hip:1:}; do
      IFS=: read -r b pdl extra <<< "$cfg"
      step "A/B $g --backend $b PDL=$pdl ${extra:+extra options $extra}"
      export SPMVJIT_CUDA_EXTRA_OPTIONS="${extra//,/ }"
      SPMVJIT_CUDA_PDL=$pdl timeout 60 "$HIPB/tools/spmvjit" bench --gen "$g" --backend $b --formats auto --no-peers \
        --iters 3 --cache-dir /tmp/spmvjit-ab-cache > /dev/null 2>&1
      SPMVJIT_CUDA_PDL=$pdl timeout 60 "$HIPB/tools/spmvjit" bench --gen "$g" --backend $b --formats auto --no-peers \
        --iters 50 --timing warm,sync --cache-dir /tmp/spmvjit-ab-cache 2>&1 | grep -E "auto:|device:" || status=1
      unset SPMVJIT_CUDA_EXTRA_OPTIONS
    done
  done
fi

if has python; then
  step "Python module (CUDA build, $(python3 --version 2>&1)) and its GPU tests"
  PYB=$BUILD-py
  configure_build "$ROOT" "$PYB" "$JOBS" "-DPython3_EXECUTABLE=$(command -v python3) -DSPMVJIT_WITH_PYTHON=ON -Dpybind11_DIR=$PREFIX/usr/lib/cmake/pybind11" \
    || status=1
  PYTHONPATH=$PYB/python SPMVJIT_CACHE_DIR=/tmp/spmvjit-py-cache PYTHONDONTWRITEBYTECODE=1 timeout 300 \
    python3 -m pytest -v -p no:cacheprovider -rs "$ROOT/tests/python/test_device.py" 2>&1 | tail -n 40 || status=1
fi

step "done, status $status"
exit $status
