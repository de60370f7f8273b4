// Planning memory follows rows and nonzeros, not columns: a 3 x 2^37 matrix with 5 nonzeros.
#include <sys/resource.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <string>

#include "../test_support.hpp"
#include "spmvjit/spmvjit.h"

namespace {

long peak_rss_kib() {
  struct rusage u {};
  ::getrusage(RUSAGE_SELF, &u);
  return u.ru_maxrss;
}

}  // namespace

TEST_CASE("a plan of 3 x 2^37 int64 with 5 nonzeros allocates nothing column-sized", "[plan][io]") {
  if (!spmvjit::test::require_cpu_backend()) return;
  const int64_t cols = int64_t(1) << 37;
  const int64_t row_ptr[4] = {0, 2, 3, 5};
  const int64_t col_idx[5] = {0, cols - 1, 7, 1, cols / 2};
  const double values[5] = {1, 2, 3, 4, 5};
  spmv_csr_t a{};
  a.rows = 3, a.cols = cols, a.nnz = 5;
  a.row_ptr = row_ptr, a.col_idx = col_idx, a.values = values;
  a.index_type = SPMV_INDEX_INT64, a.value_type = SPMV_VALUE_DOUBLE, a.memory = SPMV_MEMORY_HOST;
  spmv_options_t o;
  spmv_options_init(&o);
  o.backend = SPMV_BACKEND_CPU;
  // The estimate planner and forced formats that lay out columns (sell_diag's diagonals, csr5's
  // tiles, csr_adaptive's column bases).
  for (const char* format : {"", "sell_diag", "csr5", "csr_adaptive", "coo"}) {
    INFO("format '" << format << "'");
    o.format = *format ? format : nullptr;
    const long before = peak_rss_kib();
    const auto t0 = std::chrono::steady_clock::now();
    spmv_plan_t p = nullptr;
    REQUIRE(spmv_plan(&p, &a, &o) == SPMV_STATUS_SUCCESS);
    spmv_plan_destroy(p);
    CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(20));  // mostly the JIT
    CHECK(peak_rss_kib() - before < 512 * 1024);                              // x alone: 1 TiB
  }
  // Measure mode would time with a 1 TiB x: it keeps the estimate's choice and says why.
  o.format = nullptr;
  o.planning = SPMV_PLANNING_MEASURE;
  o.cache_dir = "";
  spmv_plan_t p = nullptr;
  REQUIRE(spmv_plan(&p, &a, &o) == SPMV_STATUS_SUCCESS);
  const char* json = nullptr;
  REQUIRE(spmv_plan_describe(p, &json) == SPMV_STATUS_SUCCESS);
  CHECK(std::string(json).find("not measured: x and y would take") != std::string::npos);
  spmv_plan_destroy(p);
}
