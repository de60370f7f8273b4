// Several vectors of complex values on the GPU (the device tests: CUDA, or HIP through
// SPMVJIT_TEST_GPU=hip): the planner's plans for every k in {1, 2, 3, 8, 32, 33} x both layouts x
// int32/int64 x complex float/double x A and A^T, then every csr_mm lane shape (WIDE 0/1), X staged
// and deterministic sums (no long-row chunks) forced, with X and Y in device memory, canaries
// around and inside Y, against the std::complex<long double> reference
// (tests/engine/spmm_complex_check.hpp). Test names carry no commas (runners split filters on them).
#include <catch2/catch.hpp>
#include <complex>
#include <string>

#include "tests/engine/spmm_complex_check.hpp"

namespace {

using namespace spmvjit;
using namespace spmvjit::test::spmm_complex;

template <class I, class V>
void check_planner_gpu() {
  Backend& b = test::gpu_backend();
  check_planner<I, V>(test::gpu_api(), &b, SPMV_OPERATION_NON_TRANSPOSE);
  check_planner<I, V>(test::gpu_api(), &b, SPMV_OPERATION_TRANSPOSE);
  check_planner<I, V>(test::gpu_api(), &b, SPMV_OPERATION_CONJUGATE_TRANSPOSE);
}

// Every lane shape csr_mm may take (WIDE 0 and 1 where they differ), X staged (column-major, k up
// to 32) and deterministic sums, forced through the plan's parameters, on every matrix and k.
template <class I, class V>
void check_lane_shapes(Backend& device) {
  int plans = 0;
  for (const Named& m : matrices()) {
    const HostCsr<I, V> a = m.a.template cast<I, V>();
    const spmv_csr_t desc = view(a);
    for (int k : kVectorCounts)
      for (bool row_major : {false, true})
        for (int wide : {0, 1})
          for (int staged : {0, 1}) {
            // One warp-wide group already (past 16 vectors of 16-byte values, one per lane: the
            // same kernel). X staged: column-major X, k up to 32.
            if (wide && (row_major || staged) && k > 16 && sizeof(V) >= 16) continue;
            if (staged && (row_major || k > 32)) continue;
            Options o;
            o.backend = test::gpu_api();
            o.vectors = k;
            o.layout = row_major ? SPMV_LAYOUT_ROW_MAJOR : SPMV_LAYOUT_COL_MAJOR;
            o.format = "csr_mm";
            FormatParams params{{"LAYOUT", row_major ? 1 : 0}, {"VECTORS", baked_vectors(k)}, {"WIDE", wide}};
            if (staged) params["STAGE_X"] = 1;
            INFO(m.name << ", k " << k << (row_major ? " row-major" : " column-major") << ", WIDE " << wide
                        << ", X staged " << staged);
            Plan plan(desc, o, nullptr, &params);
            CHECK(check_spmm<I, V>(plan_exec<V>(plan), &device, a, k, row_major, uint64_t(plans) + 100) ==
                  "");
            const std::string d = plan.describe_json().dump();
            CHECK((d.find("\"x_staged_bytes\"") != std::string::npos) == bool(staged));
            ++plans;
          }
  }
  // Per matrix: 6 k x 2 layouts x 2 shapes, less (complex double) the 2 row-major wide ones past 16
  // vectors; staged (column-major, k up to 32): 5 k x 2 shapes, less (complex double) the wide one
  // past 16.
  const int narrow = sizeof(V) >= 16 ? 1 : 0;
  CHECK(plans == int(matrices().size()) * (6 * 2 * 2 - 2 * narrow + 5 * 2 - narrow));
}

// Deterministic plans: no chunks of long rows (no atomics), each row summed by its own lanes.
template <class I, class V>
void check_deterministic(Backend& device) {
  int plans = 0;
  for (const Named& m : matrices()) {
    const HostCsr<I, V> a = m.a.template cast<I, V>();
    const spmv_csr_t desc = view(a);
    for (int k : {3, 33})
      for (bool row_major : {false, true}) {
        Options o;
        o.backend = test::gpu_api();
        o.vectors = k;
        o.deterministic = 1;
        o.layout = row_major ? SPMV_LAYOUT_ROW_MAJOR : SPMV_LAYOUT_COL_MAJOR;
        INFO(m.name << ", k " << k << (row_major ? " row-major" : " column-major") << ", deterministic");
        Plan plan(desc, o);
        CHECK(plan.data().format == "csr_mm");
        CHECK(check_spmm<I, V>(plan_exec<V>(plan), &device, a, k, row_major, uint64_t(plans) + 700) == "");
        ++plans;
      }
  }
  CHECK(plans == int(matrices().size()) * 4);
}

}  // namespace

TEST_CASE("cuda device: spmm complex int32 complex double (A and A^T)", "[cuda][complex][spmm]") {
  if (!test::gpu_available()) {
    SPMVJIT_SKIP("no GPU device");
  }
  check_planner_gpu<int32_t, std::complex<double>>();
}
TEST_CASE("cuda device: spmm complex int32 complex float (A and A^T)", "[cuda][complex][spmm]") {
  if (!test::gpu_available()) {
    SPMVJIT_SKIP("no GPU device");
  }
  check_planner_gpu<int32_t, std::complex<float>>();
}
TEST_CASE("cuda device: spmm complex int64 complex float and double (A and A^T)", "[cuda][complex][spmm]") {
  if (!test::gpu_available()) {
    SPMVJIT_SKIP("no GPU device");
  }
  check_planner_gpu<int64_t, std::complex<float>>();
  check_planner_gpu<int64_t, std::complex<double>>();
}
TEST_CASE("cuda device: spmm complex lane shapes and staged X and chunked long rows",
          "[cuda][complex][spmm]") {
  if (!test::gpu_available()) {
    SPMVJIT_SKIP("no GPU device");
  }
  Backend& b = test::gpu_backend();
  check_lane_shapes<int32_t, std::complex<double>>(b);
  check_lane_shapes<int64_t, std::complex<float>>(b);
}
TEST_CASE("cuda device: spmm complex deterministic sums", "[cuda][complex][spmm]") {
  if (!test::gpu_available()) {
    SPMVJIT_SKIP("no GPU device");
  }
  Backend& b = test::gpu_backend();
  check_deterministic<int32_t, std::complex<float>>(b);
  check_deterministic<int64_t, std::complex<double>>(b);
}
