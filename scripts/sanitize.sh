#!/usr/bin/env bash
# Builds everything with AddressSanitizer + UndefinedBehaviorSanitizer in build-san/ (gcc unless
# CC/CXX say otherwise) and runs the whole test suite under them; any report fails the run.
set -euo pipefail
cd "$(dirname "$0")/.."

build_dir="${SPMVJIT_SANITIZE_BUILD_DIR:-build-san}"
jobs=$(nproc)
# No CPU kernel bundle here: its kernels are the normal build's (no compiler is instrumented) and
# its reader's tests write bundles of their own; plans compile their first tiers instead.
cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Release \
      -DSPMVJIT_SANITIZE=address,undefined -DSPMVJIT_CPU_KERNEL_BUNDLE=OFF >/dev/null
cmake --build "$build_dir" -j "$jobs"

# halt_on_error: the first report ends the test with a failure (UBSan's is also fatal by the
# build's -fno-sanitize-recover). No suppressions: LeakSanitizer found nothing to excuse.
# intercept_tls_get_addr=0: up to GCC 13 (Debian 12 has 12) the runtime's __tls_get_addr interceptor
# takes a dynamic TLS block that happens to start 16 bytes into a page for a pre-2.25 glibc header
# and reads garbage as its bounds, and LeakSanitizer's tracer then dies at exit ("Tracer caught
# signal 11") with every test passed. Dynamic TLS comes from dlopen'ed libraries with thread_local
# data: the CPU backend's plugin brings libLLVM's. Leak checking is unchanged otherwise (the blocks
# are heap memory reached from the thread's DTV).
export ASAN_OPTIONS="halt_on_error=1:intercept_tls_get_addr=0:${ASAN_OPTIONS:-}"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:${UBSAN_OPTIONS:-}"
# Kernels are not instrumented, so the normal build's kernel cache serves here too (the same
# compiler, options and target): after `scripts/setup.sh test` the kernel tests need no compiles.
# The tests' cache folder is set per test by ctest (build-san/test-cache), so it is seeded with a
# copy of the normal one (modes kept: the cache must be the user's alone).
normal_cache="${SPMVJIT_BUILD_DIR:-build}/test-cache"
if [ -d "$normal_cache" ] && [ ! -e "$build_dir/test-cache" ]; then
  cp -a "$normal_cache" "$build_dir/test-cache"
fi
cd "$build_dir"
# Left out: the compile-everything tests through NVRTC, hipRTC and clang (about 5,000 compiles,
# tests/test_support.hpp's compile_share): no compiler is instrumented, the normal run already
# checks them, and under the sanitizers the NVRTC one alone took 20 of the run's minutes. Every
# kernel correctness test runs, and so do the clang/hipRTC cross-check and the compiler-choice
# tests (the plugin's link path instrumented).
# Also left out: three of the four spmm complex CPU cases (index and value types of the same code;
# about 230 s each under the sanitizers on two cores): int32 complex double runs.
ctest --output-on-failure -j "$jobs" --timeout 1800 \
  -E "kernel specs? (\(.*\) )?compiles through (NVRTC|hipRTC|clang)|spmm complex: k vectors of A and A\^T on the CPU (int64 complex|int32 complex float)"
