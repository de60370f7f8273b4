// Measure-mode planning: the fastest measured candidate is kept, verified, and remembered.
#include <catch2/catch.hpp>

#include <filesystem>

#include "engine/gen/generators.hpp"
#include "engine/reference.hpp"
#include "spmvjit/spmvjit.hpp"
#include "tests/test_support.hpp"

namespace {

using namespace spmvjit;

TEST_CASE("measure mode times several formats, verifies, and writes wisdom", "[planner]") {
  if (!test::require_cpu_backend()) return;
  test::TempDir dir;
  const auto a = generate_matrix("powerlaw:20000", 5).cast<int32_t, double>();
  const spmv_csr_t desc = csr_view<int32_t, double>(a.rows, a.cols, a.nnz(), a.row_ptr.data(),
                                                    a.col_idx.data(), a.val.data());
  Options o;
  o.backend = SPMV_BACKEND_CPU;
  o.cache_dir = dir.path().c_str();
  o.planning = SPMV_PLANNING_MEASURE;
  auto check_plan = [&](const SpmvPlan& plan) {
    const auto x = random_vector<double>(a.cols, 31);
    std::vector<double> y(size_t(a.rows), std::numeric_limits<double>::quiet_NaN());
    plan.execute(2.0, x.data(), 0.0, y.data());
    CHECK(check_spmv(a, reference_spmv(a, 2.0, x.data(), 0.0, y.data()), y.data()) == "");
  };
  std::string first_format;
  {
    SpmvPlan plan(desc, o);
    const std::string d = plan.describe();
    CHECK(test::json_error(d) == "");
    // At least two formats were timed, each with its seconds.
    const auto measured = d.find("\"measured\":[");
    REQUIRE(measured != std::string::npos);
    CHECK(d.find("\"seconds\":", measured) != std::string::npos);
    CHECK(d.find("},{\"format\"", measured) != std::string::npos);
    first_format = test::json_string_field(d, "format");
    check_plan(plan);
  }
  REQUIRE(std::filesystem::exists(dir.path() + "/wisdom"));
  CHECK(std::distance(std::filesystem::directory_iterator(dir.path() + "/wisdom"),
                      std::filesystem::directory_iterator{}) == 1);
  // The same matrix again: wisdom, not a second round of timing, and the same format.
  SpmvPlan again(desc, o);
  const std::string d = again.describe();
  CHECK(d.find("\"measured\":\"wisdom\"") != std::string::npos);
  CHECK(test::json_string_field(d, "format") == first_format);
  check_plan(again);
}

TEST_CASE("measure mode rejects an unknown planning value", "[planner]") {
  if (!test::require_cpu_backend()) return;
  const auto a = generate_matrix("poisson2d:10").cast<int32_t, double>();
  const spmv_csr_t desc = csr_view<int32_t, double>(a.rows, a.cols, a.nnz(), a.row_ptr.data(),
                                                    a.col_idx.data(), a.val.data());
  spmv_options_t o;
  spmv_options_init(&o);
  o.backend = SPMV_BACKEND_CPU;
  o.planning = spmv_planning_t(7);
  spmv_plan_t plan = nullptr;
  CHECK(spmv_plan(&plan, &desc, &o) == SPMV_STATUS_INVALID_VALUE);
  CHECK(plan == nullptr);
  CHECK(std::string(spmv_last_error()).find("planning") != std::string::npos);
}

}  // namespace
