#!/usr/bin/env bash
# The HIP backend built for HIP's NVIDIA platform (-DSPMVJIT_HIP_PLATFORM=nvidia), checked without a
# GPU: every GPU kernel spec compiles through hipRTC over NVRTC for sm_90 with the HIP prelude, and
# the platform's target and compiler facts ([hip] tests). On a GPU machine scripts/gpu_run.sh's
# `hip` stage runs the device tests through it. Needs the CUDA toolkit (headers, NVRTC, the
# driver's stub library); says so and stops cleanly without one.
set -euo pipefail
cd "$(dirname "$0")/.."

cuda=${CUDA_HOME:-/usr/local/cuda}
if [ ! -e "$cuda/include/nvrtc.h" ]; then
  echo "hip_nvidia_check: no CUDA toolkit under $cuda: skipped"
  exit 0
fi
build=${SPMVJIT_HIPNV_BUILD_DIR:-build-hipnv}
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DSPMVJIT_WITH_CPU=OFF -DSPMVJIT_WITH_HIP=ON \
  -DSPMVJIT_HIP_PLATFORM=nvidia -DSPMVJIT_BUILD_TOOLS=OFF -DSPMVJIT_WITH_PYTHON=OFF \
  -DCUDAToolkit_ROOT="$cuda" >/dev/null
cmake --build "$build" -j "$(nproc)" --target spmvjit_tests

# This build links the CUDA driver library. Without a driver (CI), the toolkit's stub stands in for
# libcuda.so.1: every call on it says there is no device, which the [hip] device tests skip on.
env=()
if ! ldconfig -p | grep -q 'libcuda\.so\.1 '; then
  stub=$(mktemp -d)
  trap 'rm -rf "$stub"' EXIT
  ln -s "$cuda/lib64/stubs/libcuda.so" "$stub/libcuda.so.1"
  env=(LD_LIBRARY_PATH="$stub${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}")
fi
env "${env[@]}" SPMVJIT_CACHE_DIR="$(mktemp -d)" "$build/tests/spmvjit_tests" "[hip]"
