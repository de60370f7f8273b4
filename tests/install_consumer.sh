#!/usr/bin/env bash
# Installs the built spmvjit into a temporary prefix and builds/runs examples/ against it through
# find_package(spmvjit): proves the installed package is self-contained. Mode "build-only" (a
# build without the CPU backend: the example plans on the CPU) builds and links but does not run.
# The optional fourth argument holds the sanitizer flags of a sanitized build, for the example too.
set -euo pipefail
build_dir="$1"; source_dir="$2"; mode="${3:-run}"; flags="${4:-}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cmake --install "$build_dir" --prefix "$tmp/prefix" >/dev/null
cmake -S "$source_dir/examples" -B "$tmp/build" -G Ninja -DCMAKE_PREFIX_PATH="$tmp/prefix" \
      -DCMAKE_C_FLAGS="$flags" -DCMAKE_CXX_FLAGS="$flags" -DCMAKE_EXE_LINKER_FLAGS="$flags" >/dev/null
cmake --build "$tmp/build" >/dev/null
if [ "$mode" = build-only ]; then
  echo "install_consumer: example built and linked; not run (no CPU backend in this build)"
  exit 0
fi
SPMVJIT_CACHE_DIR="$tmp/cache" "$tmp/build/spmv_example"
