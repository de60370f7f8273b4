// Catch2 main for the spmvjit test binary.
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>
