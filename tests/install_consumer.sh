#!/usr/bin/env bash
# Installs the built spmvjit into a temporary prefix and builds/runs examples/ against it through
# find_package(spmvjit) and pkg-config (the C++ example as C++14): proves the installed package is
# self-contained. Mode "build-only" (a build without the CPU backend: the examples plan on the CPU)
# builds and links but does not run.
# The optional fourth argument holds the sanitizer flags of a sanitized build, for the examples too;
# the fifth the configured install libdir (an installed library also looks for its plugin there).
set -euo pipefail
build_dir="$1"; source_dir="$2"; mode="${3:-run}"; flags="${4:-}"; install_libdir="${5:-}"
unset SPMVJIT_PLUGIN_DIR
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cmake --install "$build_dir" --prefix "$tmp/prefix" >/dev/null
# The library needs no LLVM: clang and ORC are in the plugin the CPU backend dlopens.
lib=$(find "$tmp/prefix" -name 'libspmvjit.so.*.*.*' | head -n 1)
if ldd "$lib" | grep -Ei 'libLLVM|libclang-cpp'; then
  echo "install_consumer: the installed $(basename "$lib") links LLVM or clang (above)"; exit 1
fi
cmake -S "$source_dir/examples" -B "$tmp/build" -G Ninja -DCMAKE_PREFIX_PATH="$tmp/prefix" \
      -DCMAKE_C_FLAGS="$flags" -DCMAKE_CXX_FLAGS="$flags" -DCMAKE_EXE_LINKER_FLAGS="$flags" >/dev/null
cmake --build "$tmp/build" >/dev/null
# pkg-config finds the same package: a C program built from its flags reports the version.
pc_dir=$(dirname "$(find "$tmp/prefix" -name spmvjit.pc | head -n 1)")
export PKG_CONFIG_PATH="$pc_dir"
printf '%s\n' '#include <spmvjit/spmvjit.h>' '#include <stdio.h>' '#include <string.h>' \
  'int main(void) {' '  printf("%s\n", spmv_version());' \
  '  return strcmp(spmv_version(), SPMVJIT_VERSION_STRING) != 0;' '}' > "$tmp/version.c"
cc $flags "$tmp/version.c" -o "$tmp/version" $(pkg-config --cflags --libs spmvjit)
test "$(LD_LIBRARY_PATH="$(pkg-config --variable=libdir spmvjit)" "$tmp/version")" = \
  "$(pkg-config --modversion spmvjit)"
echo "install_consumer: pkg-config spmvjit $(pkg-config --modversion spmvjit): a C program built and ran"
# The C++ layer compiles as C++14, warning-free (examples/CMakeLists.txt builds it the same way).
c++ -std=c++14 -Wall -Wextra -Werror $flags "$source_dir/examples/spmv_example.cpp" -o "$tmp/example_cpp14" \
  $(pkg-config --cflags --libs spmvjit)
echo "install_consumer: the C++ example built with -std=c++14"
if [ "$mode" = build-only ]; then
  echo "install_consumer: example built and linked; not run (no CPU backend in this build)"
  exit 0
fi
# The CPU backend loads the plugin installed beside the library (logged at debug level).
plugin="$(dirname "$lib")/libspmvjit_llvm.so"
test -f "$plugin" || { echo "install_consumer: no $plugin"; exit 1; }
SPMVJIT_CACHE_DIR="$tmp/cache" SPMVJIT_LOG_LEVEL=debug "$tmp/build/spmv_example" 2>"$tmp/log"
grep -qF "LLVM plugin $plugin " "$tmp/log" ||
  { cat "$tmp/log"; echo "install_consumer: the plugin was not loaded from $plugin"; exit 1; }
SPMVJIT_CACHE_DIR="$tmp/cache" "$tmp/build/spmv_example_cpp"
SPMVJIT_CACHE_DIR="$tmp/cache" LD_LIBRARY_PATH="$(pkg-config --variable=libdir spmvjit)" "$tmp/example_cpp14"
# Without it, planning on the CPU fails with a message naming the file and the places searched
# (unless an install in the configured prefix provides one), and nothing crashes.
mv "$plugin" "$tmp/plugin.so"
if [ ! -e "$install_libdir/libspmvjit_llvm.so" ]; then
  if SPMVJIT_CACHE_DIR="$tmp/cache" "$tmp/build/spmv_example" >"$tmp/out" 2>&1; then
    cat "$tmp/out"; echo "install_consumer: planned on the CPU without its plugin"; exit 1
  fi
  grep -qF "$plugin: " "$tmp/out" ||
    { cat "$tmp/out"; echo "install_consumer: no message naming $plugin without the plugin"; exit 1; }
  echo "install_consumer: without the plugin the example fails as it should:"; sed 's/^/  /' "$tmp/out"
fi
