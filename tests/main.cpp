// The test runner: Catch2's, after defaulting the cache and SuiteSparse folders to the build's.
#define CATCH_CONFIG_RUNNER
#include <stdlib.h>

#include <catch2/catch.hpp>

int main(int argc, char* argv[]) {
  // Host arrays reused from earlier plans come back filled with 0xff (core/host_pool.hpp).
  setenv("SPMVJIT_HOST_MEMORY_POISON", "1", 0);
#ifdef SPMVJIT_TEST_CACHE_DIR
  setenv("SPMVJIT_CACHE_DIR", SPMVJIT_TEST_CACHE_DIR, 0);
#endif
#ifdef SPMVJIT_TEST_MATRICES_DIR
  setenv("SPMVJIT_MATRICES_DIR", SPMVJIT_TEST_MATRICES_DIR, 0);
#endif
  return Catch::Session().run(argc, argv);
}
