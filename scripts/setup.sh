#!/usr/bin/env bash
# One-step set-up for a fresh Debian 12 machine (as root): install what is missing, build, then
# `run` (the main job on a generated 2D Poisson matrix) or `test` (the whole test suite).
set -euo pipefail
cd "$(dirname "$0")/.."

mode="${1:-run}"
build_dir="${SPMVJIT_BUILD_DIR:-build}"
# libamdhip64-dev: the HIP headers and hipRTC (ROCm 5.2), for the HIP backend and its tests.
# liblld-19-dev: lld's libraries, with which the LLVM plugin also makes AMDGPU code objects (the
# HIP backend's compiler for processors ROCm 5.2's hipRTC does not know, e.g. gfx942).
# pybind11-dev ... python3-pytest: the Python module (python/) and its tests. librocsparse-dev:
# rocSPARSE's header for bench's HIP peer (the library is loaded at run time, on AMD GPUs).
packages=(cmake ninja-build g++ ccache catch2 libspdlog-dev llvm-19-dev libclang-19-dev
          libclang-cpp19-dev liblld-19-dev libeigen3-dev librsb-dev libxxhash-dev pkg-config
          libamdhip64-dev pybind11-dev python3-dev python3-numpy python3-scipy python3-pytest
          librocsparse-dev)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

jobs=$(nproc)
# The Python module is built for Debian's interpreter, whose numpy/scipy/pytest were installed above
# (another python3 earlier on PATH, e.g. pyenv's, would lack them).
python_arg=()
if [ -x /usr/bin/python3 ]; then python_arg=(-DPython3_EXECUTABLE=/usr/bin/python3); fi
cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Release "${python_arg[@]}" >/dev/null
cmake --build "$build_dir" -j "$jobs"

case "$mode" in
  run)
    # The main job: plan, JIT-compile (or load from the cache), execute and verify.
    "$build_dir/tools/spmvjit" run --gen poisson2d:1000
    ;;
  test)
    cd "$build_dir"
    # The compile-everything tests (GPU kernel specs through NVRTC, hipRTC, clang) take up to about
    # 12 minutes each on two cores beside the rest of the suite.
    ctest --output-on-failure -j "$jobs" --timeout 1800
    ;;
  *)
    echo "usage: scripts/setup.sh [run|test]" >&2
    exit 2
    ;;
esac
