// Type safety: spmv_plan_info says what a plan computes; spmv_execute_typed and the C++ layer's
// execute<V> refuse a value type other than the plan's before anything is written.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "engine/gen/generators.hpp"
#include "engine/reference.hpp"
#include "spmvjit/spmvjit.hpp"
#include "tests/test_support.hpp"

namespace {

using namespace spmvjit;

Options cpu() {
  Options o;
  o.backend = SPMV_BACKEND_CPU;
  return o;
}

TEST_CASE("spmv_plan_info: sizes, types, backend and threads, within struct_size", "[api]") {
  if (!test::require_cpu_backend()) return;
  const auto a = generate_matrix("random:500:1:9", 4).cast<int64_t, float>();
  SpmvPlan plan(
      csr_view<int64_t, float>(a.rows, a.cols, a.nnz(), a.row_ptr.data(), a.col_idx.data(), a.val.data()),
      cpu());
  spmv_plan_info_t info = SPMV_PLAN_INFO_INIT;
  REQUIRE(spmv_plan_info(plan.get(), &info) == SPMV_STATUS_SUCCESS);
  CHECK(info.struct_size == sizeof info);
  CHECK(info.rows == a.rows);
  CHECK(info.cols == a.cols);
  CHECK(info.nnz == a.nnz());
  CHECK(info.index_type == SPMV_INDEX_INT64);
  CHECK(info.value_type == SPMV_VALUE_FLOAT);
  CHECK(info.backend == SPMV_BACKEND_CPU);
  CHECK(info.threads == Json::parse(plan.describe())["threads"].as_int());
  CHECK(plan.info().nnz == a.nnz());
  CHECK(plan.value_type() == SPMV_VALUE_FLOAT);

  // An older caller's smaller struct: only the fields within it are written.
  alignas(spmv_plan_info_t) unsigned char buf[sizeof(spmv_plan_info_t)];
  std::memset(buf, 0xab, sizeof buf);
  auto* older = reinterpret_cast<spmv_plan_info_t*>(buf);
  older->struct_size = offsetof(spmv_plan_info_t, index_type);
  REQUIRE(spmv_plan_info(plan.get(), older) == SPMV_STATUS_SUCCESS);
  CHECK(older->struct_size == offsetof(spmv_plan_info_t, index_type));
  CHECK(older->nnz == a.nnz());
  for (size_t i = offsetof(spmv_plan_info_t, index_type); i < sizeof buf; ++i) REQUIRE(buf[i] == 0xab);

  info.struct_size = 0;  // not set
  CHECK(spmv_plan_info(plan.get(), &info) == SPMV_STATUS_INVALID_VALUE);
  CHECK(std::string(spmv_last_error()).find("struct_size") != std::string::npos);
  CHECK(spmv_plan_info(nullptr, &info) == SPMV_STATUS_INVALID_VALUE);
  CHECK(spmv_plan_info(plan.get(), nullptr) == SPMV_STATUS_INVALID_VALUE);
}

TEST_CASE("execute with another value type than the plan's is refused, y untouched", "[api]") {
  if (!test::require_cpu_backend()) return;
  const auto a = generate_matrix("poisson2d:40", 1).cast<int32_t, double>();
  SpmvPlan plan(
      csr_view<int32_t, double>(a.rows, a.cols, a.nnz(), a.row_ptr.data(), a.col_idx.data(), a.val.data()),
      cpu());
  std::vector<float> xf(size_t(a.cols), 1.0f), yf(size_t(a.rows), 7.0f);
  try {
    plan.execute(1.0f, xf.data(), 0.0f, yf.data());
    FAIL("execute<float> on a double plan did not throw");
  } catch (const ApiError& e) {
    CHECK(e.status() == SPMV_STATUS_INVALID_VALUE);
    CHECK(std::string(e.what()).find("execute<float>: the plan's values are double") != std::string::npos);
  }
  for (float v : yf) REQUIRE(v == 7.0f);

  // The checked C entry says the same, and reads and writes nothing.
  const float alpha = 1, beta = 0;
  CHECK(spmv_execute_typed(plan.get(), SPMV_VALUE_FLOAT, &alpha, xf.data(), &beta, yf.data(), nullptr) ==
        SPMV_STATUS_INVALID_VALUE);
  CHECK(std::string(spmv_last_error()).find("float arguments for a plan of double values") !=
        std::string::npos);
  for (float v : yf) REQUIRE(v == 7.0f);
  CHECK(spmv_execute_typed(plan.get(), spmv_value_type_t(5), &alpha, xf.data(), &beta, yf.data(), nullptr) ==
        SPMV_STATUS_INVALID_VALUE);
  CHECK(spmv_execute_typed(nullptr, SPMV_VALUE_DOUBLE, &alpha, xf.data(), &beta, yf.data(), nullptr) ==
        SPMV_STATUS_INVALID_VALUE);

  // The right type runs.
  const auto x = random_vector<double>(a.cols, 2);
  std::vector<double> y(size_t(a.rows));
  const double one = 1, zero = 0;
  REQUIRE(spmv_execute_typed(plan.get(), SPMV_VALUE_DOUBLE, &one, x.data(), &zero, y.data(), nullptr) ==
          SPMV_STATUS_SUCCESS);
  CHECK(check_spmv(a, reference_spmv(a, 1.0, x.data(), 0.0, y.data()), y.data()) == "");
  std::fill(y.begin(), y.end(), 0.0);
  plan.execute(1.0, x.data(), 0.0, y.data());
  CHECK(check_spmv(a, reference_spmv(a, 1.0, x.data(), 0.0, y.data()), y.data()) == "");

  // A moved-from plan keeps nothing to run: the library says the plan is null.
  SpmvPlan moved = std::move(plan);
  CHECK(moved.value_type() == SPMV_VALUE_DOUBLE);
  CHECK_THROWS_AS(plan.execute(1.0, x.data(), 0.0, y.data()), ApiError);
}

}  // namespace
