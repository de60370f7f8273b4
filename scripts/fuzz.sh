#!/usr/bin/env bash
# Builds the libFuzzer targets (clang 19, ASan + UBSan) in build-fuzz/ and runs each for N seconds
# (default 60) side by side; fails when either finds a crash. Usage: scripts/fuzz.sh [seconds]
# Corpora grow under build-fuzz/corpus/, crash inputs land in build-fuzz/artifacts/, logs in
# build-fuzz/logs/. The reader's seeds are the SuiteSparse files in $SPMVJIT_MATRICES_DIR
# (default ../shared/matrices), read in place; the plan target's seeds are written below.
set -euo pipefail
cd "$(dirname "$0")/.."

seconds="${1:-60}"
build_dir="${SPMVJIT_FUZZ_BUILD_DIR:-build-fuzz}"
matrices="${SPMVJIT_MATRICES_DIR:-../shared/matrices}"

cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_C_COMPILER=clang-19 \
      -DCMAKE_CXX_COMPILER=clang++-19 -DSPMVJIT_FUZZ=ON -DSPMVJIT_BUILD_TESTS=OFF \
      -DSPMVJIT_BUILD_TOOLS=OFF >/dev/null
cmake --build "$build_dir" -j "$(nproc)" --target fuzz_matrix_market fuzz_plan

rm -rf "$build_dir/seeds/plan"
mkdir -p "$build_dir"/{corpus/matrix_market,corpus/plan,seeds/plan,artifacts,logs}
# Plan seeds (layout in tests/fuzz/fuzz_plan.cpp): flags, format, rows and cols (16 bits each),
# shape, mean row length, value kind, alpha/beta, no corruption, then 8 generator bytes. Every
# format index once, types, base, update and shape varying with it; the fuzzer mutates from there
# (each seed compiles its kernels first, so more seeds would make the first minute all compiles).
for fmt in $(seq 0 31); do
  for flags in $(((fmt * 5 + fmt / 8) % 8 + 16 * (fmt % 2))); do
    printf "\\x$(printf %02x "$flags")\\x$(printf %02x "$fmt")\\x$(printf %02x $((fmt * 37 % 256)))\\x00"`
          `"\\x$(printf %02x $((fmt * 53 % 256)))\\x00\\x$(printf %02x $((fmt % 6)))\\x$(printf %02x $((fmt % 9 + 1)))"`
          `"\\x$(printf %02x $((flags * 5 % 256)))\\x$(printf %02x "$fmt")\\x00seed$fmt$flags" \
      > "$build_dir/seeds/plan/seed_${fmt}_${flags}"
  done
done

# -rss_limit_mb: clang compiles kernels inside the plan target (ASan adds its quarantine);
# -malloc_limit_mb catches one runaway allocation long before the machine's memory is gone.
common=(-max_total_time="$seconds" -print_final_stats=1 -rss_limit_mb=3072 -malloc_limit_mb=1024)
seed_dirs=()
[ -d "$matrices" ] && seed_dirs+=("$matrices")
"$build_dir/tests/fuzz/fuzz_matrix_market" "${common[@]}" -max_len=65536 -timeout=10 \
    -dict=tests/fuzz/matrix_market.dict -artifact_prefix="$build_dir/artifacts/matrix_market-" \
    "$build_dir/corpus/matrix_market" "${seed_dirs[@]}" > "$build_dir/logs/matrix_market.log" 2>&1 &
mm_pid=$!
"$build_dir/tests/fuzz/fuzz_plan" "${common[@]}" -max_len=4096 -timeout=60 \
    -artifact_prefix="$build_dir/artifacts/plan-" "$build_dir/corpus/plan" "$build_dir/seeds/plan" \
    > "$build_dir/logs/plan.log" 2>&1 &
plan_pid=$!

status=0
for t in matrix_market:$mm_pid plan:$plan_pid; do
  name=${t%%:*}
  if wait "${t##*:}"; then result=ok; else result=FAILED; status=1; fi
  execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$build_dir/logs/$name.log" | grep -o '[0-9]*$' || true)
  rate=$(grep -o 'stat::average_exec_per_sec: *[0-9]*' "$build_dir/logs/$name.log" | grep -o '[0-9]*$' || true)
  corpus=$(find "$build_dir/corpus/$name" -type f | wc -l)
  echo "fuzz $name: $result, ${execs:-?} executions, ${rate:-?} exec/s, corpus $corpus files"
  if [ "$result" = FAILED ]; then
    grep -E -A30 'ERROR|fuzz_|SUMMARY|runtime error|deadly signal' "$build_dir/logs/$name.log" | head -60 || true
  fi
done
exit $status
