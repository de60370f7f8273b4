// Inputs the fuzzers (tests/fuzz) found, reduced: run instrumented by scripts/sanitize.sh.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "engine/formats/format.hpp"
#include "spmvjit/spmvjit.h"
#include "tests/test_support.hpp"

namespace {

// Plans `a` with every format forced (UNSUPPORTED is an answer), runs each plan once with
// beta = 0 on a y full of NaN, and returns the rows of y that are not `expected`.
int bad_rows_per_format(const spmv_csr_t& a, float expected) {
  int bad = 0;
  for (const spmvjit::Format* f : spmvjit::all_formats()) {
    INFO("format " << f->name());
    spmv_options_t o;
    spmv_options_init(&o);
    o.backend = SPMV_BACKEND_CPU;
    o.cache_dir = "";
    const std::string name = f->name();
    o.format = name.c_str();
    spmv_plan_t plan = nullptr;
    const spmv_status_t st = spmv_plan(&plan, &a, &o);
    CHECK((st == SPMV_STATUS_SUCCESS || st == SPMV_STATUS_UNSUPPORTED));
    if (st != SPMV_STATUS_SUCCESS) continue;
    std::vector<float> x(size_t(a.cols), 1.0f), y(size_t(a.rows), NAN);
    const float alpha = 1, beta = 0;
    CHECK(spmv_execute(plan, &alpha, x.data(), &beta, y.data(), nullptr) == SPMV_STATUS_SUCCESS);
    for (float v : y) bad += !(v == expected);
    spmv_plan_destroy(plan);
  }
  return bad;
}

TEST_CASE("fuzz: every format on a matrix with many rows and no entries", "[api][fuzz]") {
  if (!spmvjit::test::require_cpu_backend()) return;
  // fuzz_plan: sell's and sellp's converters offset a null column array (nothing stored) for each
  // row of an empty slice: UB even though nothing was written (clang's UBSan reports it).
  const int64_t rows = 1013, cols = 80;
  std::vector<int32_t> rp(size_t(rows) + 1, 1);
  const spmv_csr_t a{
      rows, cols, 0, rp.data(), nullptr, nullptr, SPMV_INDEX_INT32, SPMV_VALUE_FLOAT, 1, SPMV_MEMORY_HOST};
  CHECK(bad_rows_per_format(a, 0.0f) == 0);
}

}  // namespace
