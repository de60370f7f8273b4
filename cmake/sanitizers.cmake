# SPMVJIT_SANITIZE (a whole-build sanitizer list) and SPMVJIT_FUZZ (libFuzzer targets, clang).
# Flags go on every target defined after this file is included (library, tools, tests), so the
# whole suite runs instrumented. LLVM/clang libraries and JIT-compiled kernels stay uninstrumented.

set(SPMVJIT_SANITIZE "" CACHE STRING
    "Sanitizers for the whole build, e.g. address,undefined (gcc or clang); empty = none")
option(SPMVJIT_FUZZ "libFuzzer targets under tests/fuzz (needs clang; implies address,undefined)" OFF)

if(SPMVJIT_FUZZ)
  if(NOT CMAKE_CXX_COMPILER_ID MATCHES "Clang")
    message(FATAL_ERROR "SPMVJIT_FUZZ needs clang (libFuzzer), e.g. -DCMAKE_CXX_COMPILER=clang++-19 "
                        "-DCMAKE_C_COMPILER=clang-19; got ${CMAKE_CXX_COMPILER_ID}")
  endif()
  if(SPMVJIT_SANITIZE STREQUAL "")
    set(SPMVJIT_SANITIZE "address,undefined")
  endif()
endif()

if(NOT SPMVJIT_SANITIZE STREQUAL "")
  set(_san -fsanitize=${SPMVJIT_SANITIZE} -fno-omit-frame-pointer)
  if(SPMVJIT_SANITIZE MATCHES "undefined")
    # A report must fail the run, not scroll past. vptr needs RTTI of every polymorphic class it
    # meets; LLVM's classes are built without it (undefined typeinfo at link time).
    list(APPEND _san -fno-sanitize-recover=undefined -fno-sanitize=vptr)
    # clang's function check reads a type signature just before the callee of an indirect call:
    # JIT-compiled kernels have none, and one that starts a page faults there (seen by fuzz_plan).
    if(CMAKE_CXX_COMPILER_ID MATCHES "Clang")
      list(APPEND _san -fno-sanitize=function)
    endif()
  endif()
  add_compile_options(${_san})
  add_link_options(${_san})
  # For projects built against this one (tests/install_consumer.sh): an uninstrumented program
  # cannot load an instrumented libspmvjit.so (the sanitizer runtime must come first).
  string(REPLACE ";" " " SPMVJIT_SANITIZE_FLAGS "${_san}")
  # After the build type's -O3: -O1 builds faster and keeps stacks readable (-g1: line tables).
  add_compile_options(-O1 -g1)
  message(STATUS "spmvjit: sanitizers ${SPMVJIT_SANITIZE}")
endif()

if(SPMVJIT_FUZZ)
  # Coverage instrumentation for the library; only the fuzz targets link libFuzzer's main.
  add_compile_options(-fsanitize=fuzzer-no-link)
endif()
