#!/usr/bin/env bash
# Installs the built spmvjit into a temporary prefix and builds/runs examples/ against it through
# find_package(spmvjit): proves the installed package is self-contained. Mode "build-only" (a
# build without the CPU backend: the example plans on the CPU) builds and links but does not run.
set -euo pipefail
build_dir="$1"; source_dir="$2"; mode="${3:-run}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cmake --install "$build_dir" --prefix "$tmp/prefix" >/dev/null
cmake -S "$source_dir/examples" -B "$tmp/build" -G Ninja -DCMAKE_PREFIX_PATH="$tmp/prefix" >/dev/null
cmake --build "$tmp/build" >/dev/null
if [ "$mode" = build-only ]; then
  echo "install_consumer: example built and linked; not run (no CPU backend in this build)"
  exit 0
fi
SPMVJIT_CACHE_DIR="$tmp/cache" "$tmp/build/spmv_example"
