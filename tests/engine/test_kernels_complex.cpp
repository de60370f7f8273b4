// Complex values (complex float and complex double) x {int32, int64}: every format that takes them
// on the CPU, through the C API, against the std::complex<long double> reference, with complex
// alpha and beta; the planner's refusals, A^T, update_values, the typed C API and the C++ layer.
// Complex symmetric and Hermitian matrices: test_symmetric_complex.cpp.
#include <catch2/catch.hpp>
#include <complex>
#include <string>
#include <vector>

#include "tests/engine/complex_formats_check.hpp"

using namespace spmvjit;
using namespace spmvjit::test::complex_formats;

TEST_CASE("complex formats, int32 complex float", "[kernels][complex]") {
  run_complex_formats<int32_t, std::complex<float>>();
}
TEST_CASE("complex formats, int32 complex double", "[kernels][complex]") {
  run_complex_formats<int32_t, std::complex<double>>();
}
TEST_CASE("complex formats, int64 complex float", "[kernels][complex]") {
  run_complex_formats<int64_t, std::complex<float>>();
}
TEST_CASE("complex formats, int64 complex double", "[kernels][complex]") {
  run_complex_formats<int64_t, std::complex<double>>();
}
// A^T of complex values: transposed, not conjugated; A^H: conjugated too (the reference's
// transpose conjugates, so a plan that conjugated A^T, or not A^H, fails).
TEST_CASE("complex formats of A^T", "[kernels][complex][transpose]") {
  run_complex_formats<int32_t, std::complex<double>>(SPMV_OPERATION_TRANSPOSE);
  run_complex_formats<int64_t, std::complex<float>>(SPMV_OPERATION_TRANSPOSE);
}
TEST_CASE("complex formats of A^H", "[kernels][complex][transpose]") {
  run_complex_formats<int32_t, std::complex<float>>(SPMV_OPERATION_CONJUGATE_TRANSPOSE);
  run_complex_formats<int64_t, std::complex<double>>(SPMV_OPERATION_CONJUGATE_TRANSPOSE);
}

// The same on the GPU (the device tests: CUDA, or HIP through SPMVJIT_TEST_GPU=hip).
TEST_CASE("cuda device: complex formats int32 complex double (A and A^T and A^H)", "[cuda][complex]") {
  run_complex_formats<int32_t, std::complex<double>>(SPMV_OPERATION_NON_TRANSPOSE, test::gpu_kind());
  run_complex_formats<int32_t, std::complex<double>>(SPMV_OPERATION_TRANSPOSE, test::gpu_kind());
  run_complex_formats<int32_t, std::complex<double>>(SPMV_OPERATION_CONJUGATE_TRANSPOSE, test::gpu_kind());
}
TEST_CASE("cuda device: complex formats int32 complex float", "[cuda][complex]") {
  run_complex_formats<int32_t, std::complex<float>>(SPMV_OPERATION_NON_TRANSPOSE, test::gpu_kind());
}
TEST_CASE("cuda device: complex formats int64 complex float and double", "[cuda][complex]") {
  run_complex_formats<int64_t, std::complex<float>>(SPMV_OPERATION_NON_TRANSPOSE, test::gpu_kind());
  run_complex_formats<int64_t, std::complex<double>>(SPMV_OPERATION_NON_TRANSPOSE, test::gpu_kind());
}

// The check above can fail: results of the mistakes a complex kernel could make (conjugating A,
// dropping alpha's or beta's imaginary part, treating alpha = 1 + 0.5i as one) are refused.
TEST_CASE("the complex reference catches wrong kernels", "[kernels][complex]") {
  const Cplx a = complexify(generate_matrix("random:50:1:8:40", 3), 9);
  const auto x = random_vector<C>(a.cols, 1);
  const auto y0 = random_vector<C>(a.rows, 2);
  const C alpha(1, 0.5), beta(-0.25, 0.75);
  auto compute = [&](bool conj_a, bool real_alpha, bool real_beta) {
    std::vector<C> y(size_t(a.rows));
    for (int64_t i = 0; i < a.rows; ++i) {
      C s = 0;
      for (int64_t k = a.row_ptr[size_t(i)]; k < a.row_ptr[size_t(i) + 1]; ++k)
        s += (conj_a ? std::conj(a.val[size_t(k)]) : a.val[size_t(k)]) * x[size_t(a.col_idx[size_t(k)])];
      y[size_t(i)] =
          (real_alpha ? C(alpha.real()) : alpha) * s + (real_beta ? C(beta.real()) : beta) * y0[size_t(i)];
    }
    return y;
  };
  const ComplexReferenceResult ref = reference_spmv_complex(a, alpha, x.data(), beta, y0.data());
  CHECK(check_spmv_complex(a, ref, compute(false, false, false).data()) == "");
  CHECK(check_spmv_complex(a, ref, compute(true, false, false).data()) != "");
  CHECK(check_spmv_complex(a, ref, compute(false, true, false).data()) != "");
  CHECK(check_spmv_complex(a, ref, compute(false, false, true).data()) != "");
  // One part wrong by a little more than rounding: refused too.
  std::vector<C> y = compute(false, false, false);
  y[3] += C(0, 1e-9);
  CHECK_THAT(check_spmv_complex(a, ref, y.data()), Catch::Contains("imaginary part"));
}

TEST_CASE("complex plans: what is refused", "[plan][complex]") {
  if (!test::require_cpu_backend()) return;
  const auto a = complexify(generate_matrix("poisson2d:6", 1), 3).cast<int32_t, std::complex<float>>();
  const spmv_csr_t d = csr_view(a.rows, a.cols, a.nnz(), a.row_ptr.data(), a.col_idx.data(), a.val.data());
  PlanGuard g;
  SECTION("a real-only path reached with complex values is an internal error, not a wrong product") {
    try {
      dispatch_types(IndexType::i32, ValueType::c32, []<class I, class V>() {});
      FAIL("dispatch_types ran a real path for complex values");
    } catch (const Error& e) {
      CHECK(e.status() == SPMV_STATUS_INTERNAL_ERROR);
      CHECK_THAT(e.what(), Catch::Contains("a real-valued path reached with complex_float values"));
    }
  }
  SECTION("an unknown value type") {
    spmv_csr_t bad = d;
    bad.value_type = spmv_value_type_t(4);
    spmv_options_t o = cpu_options(nullptr);
    CHECK(spmv_plan(&g.p, &bad, &o) == SPMV_STATUS_INVALID_VALUE);
  }
  CHECK(g.p == nullptr);
}

TEST_CASE("complex plans: typed execute, plan info, update_values, measure mode", "[plan][complex]") {
  if (!test::require_cpu_backend()) return;
  using V = std::complex<double>;
  const Cplx a = complexify(generate_matrix("random:400:0:12", 4), 5);
  const spmv_csr_t d = csr_view(a.rows, a.cols, a.nnz(), a.row_ptr.data(), a.col_idx.data(), a.val.data());
  for (const char* format : {"csr", "ell", "sell", "csr_vector"}) {
    INFO(format);
    spmv_options_t o = cpu_options(format);
    PlanGuard g;
    REQUIRE(spmv_plan(&g.p, &d, &o) == SPMV_STATUS_SUCCESS);
    spmv_plan_info_t info = SPMV_PLAN_INFO_INIT;
    REQUIRE(spmv_plan_info(g.p, &info) == SPMV_STATUS_SUCCESS);
    CHECK(info.value_type == SPMV_VALUE_COMPLEX_DOUBLE);
    const auto x = random_vector<V>(a.cols, 1);
    std::vector<V> y(size_t(a.rows), V(3, 4));
    const double one = 1, zero = 0;
    CHECK(spmv_execute_typed(g.p, SPMV_VALUE_DOUBLE, &one, x.data(), &zero, y.data(), nullptr) ==
          SPMV_STATUS_INVALID_VALUE);
    CHECK_THAT(spmv_last_error(), Catch::Contains("complex double"));
    CHECK(y[0] == V(3, 4));  // untouched
    const V al(0.5, -2), be(0, 0);
    REQUIRE(spmv_execute_typed(g.p, SPMV_VALUE_COMPLEX_DOUBLE, &al, x.data(), &be, y.data(), nullptr) ==
            SPMV_STATUS_SUCCESS);
    CHECK(check_spmv_complex(a, reference_spmv_complex(a, al, x.data(), be, y.data()), y.data()) == "");
    // New values, same pattern: the plan reconverts (no value map for complex values).
    Cplx b = a;
    for (auto& v : b.val) v = V(v.imag(), -2 * v.real());
    REQUIRE(spmv_plan_update_values(g.p, b.val.data(), SPMV_MEMORY_HOST) == SPMV_STATUS_SUCCESS);
    for (int round = 0; round < 2; ++round) {
      std::vector<V> y2 = random_vector<V>(a.rows, 7 + round);
      const auto y0 = y2;
      const V be2(0.25, 1);
      REQUIRE(spmv_execute(g.p, &al, x.data(), &be2, y2.data(), nullptr) == SPMV_STATUS_SUCCESS);
      CHECK(check_spmv_complex(b, reference_spmv_complex(b, al, x.data(), be2, y0.data()), y2.data()) == "");
      if (round == 0)
        REQUIRE(spmv_plan_update_values(g.p, b.val.data(), SPMV_MEMORY_HOST) == SPMV_STATUS_SUCCESS);
    }
    CHECK(test::json_string_field(describe(g.p), "update_values") == "reconversion");
  }
  SECTION("measure mode times complex candidates") {
    test::TempDir dir;
    spmv_options_t o = cpu_options(nullptr);
    o.planning = SPMV_PLANNING_MEASURE;
    o.cache_dir = dir.path().c_str();
    PlanGuard g;
    REQUIRE(spmv_plan(&g.p, &d, &o) == SPMV_STATUS_SUCCESS);
    const auto x = random_vector<V>(a.cols, 3);
    std::vector<V> y(size_t(a.rows));
    const V al(1, 1), be(0, 0);
    REQUIRE(spmv_execute(g.p, &al, x.data(), &be, y.data(), nullptr) == SPMV_STATUS_SUCCESS);
    CHECK(check_spmv_complex(a, reference_spmv_complex(a, al, x.data(), be, y.data()), y.data()) == "");
  }
}

// A^H's values are conjugated when the plan is made and again by update_values (host and device
// values for GPU plans), and describe says which operation and layout the plan has.
static void check_conjugate_transpose_updates(BackendKind kind) {
  using V = std::complex<double>;
  const Cplx a = complexify(generate_matrix("lpwide:60:3:1:9", 4), 6);  // 60 x 180
  const spmv_csr_t d = csr_view(a.rows, a.cols, a.nnz(), a.row_ptr.data(), a.col_idx.data(), a.val.data());
  Cplx b = a;
  for (auto& v : b.val) v = V(v.imag() - 1, 2 * v.real());
  const Cplx ah = reference_transpose(a, true), bh = reference_transpose(b, true);
  REQUIRE(ah.rows == 180);
  for (const char* format : {"csr", "sell", "coo"}) {
    INFO(format << (kind == BackendKind::cpu ? " (CPU)" : " (GPU)"));
    spmv_options_t o = backend_options(kind, format);
    o.operation = SPMV_OPERATION_CONJUGATE_TRANSPOSE;
    PlanGuard g;
    REQUIRE(spmv_plan(&g.p, &d, &o) == SPMV_STATUS_SUCCESS);
    const std::string desc = describe(g.p);
    CHECK(test::json_string_field(desc, "operation") == "A^H");
    CHECK_THAT(desc, Catch::Contains("A^H's layout (A^T's, values conjugated)"));
    spmv_plan_info_t info = SPMV_PLAN_INFO_INIT;
    REQUIRE(spmv_plan_info(g.p, &info) == SPMV_STATUS_SUCCESS);
    CHECK(info.rows == a.rows);  // A's sizes, as given
    CHECK(info.operation == SPMV_OPERATION_CONJUGATE_TRANSPOSE);
    CHECK(check_plan(g.p, ah, 300, kind) == "");
    // New values from host memory, then from device memory on the GPU.
    REQUIRE(spmv_plan_update_values(g.p, b.val.data(), SPMV_MEMORY_HOST) == SPMV_STATUS_SUCCESS);
    CHECK(check_plan(g.p, bh, 301, kind) == "");
    if (kind != BackendKind::cpu) {
      Backend& dev = test::gpu_backend();
      DeviceBuffer dv(dev, a.val.size() * sizeof(V));
      dev.upload(dv.get(), a.val.data(), dv.bytes());
      REQUIRE(spmv_plan_update_values(g.p, dv.get(), SPMV_MEMORY_DEVICE) == SPMV_STATUS_SUCCESS);
      CHECK(check_plan(g.p, ah, 302, kind) == "");
    }
  }
}
TEST_CASE("complex plans of A^H: update_values conjugates too", "[plan][complex][transpose]") {
  if (test::require_cpu_backend()) check_conjugate_transpose_updates(BackendKind::cpu);
}
TEST_CASE("cuda device: complex A^H update_values conjugates too", "[cuda][complex]") {
  if (!test::gpu_available()) SPMVJIT_SKIP("no GPU of the backend under test");
  check_conjugate_transpose_updates(test::gpu_kind());
}

TEST_CASE("complex plans through the C++ layer", "[api][complex]") {
  if (!test::require_cpu_backend()) return;
  using V = std::complex<float>;
  const auto a = complexify(generate_matrix("poisson2d:9", 2), 8).cast<int32_t, V>();
  spmvjit::Options o;
  o.backend = SPMV_BACKEND_CPU;
  spmvjit::SpmvPlan plan(
      spmvjit::csr_view(a.rows, a.cols, a.nnz(), a.row_ptr.data(), a.col_idx.data(), a.val.data()), o);
  CHECK(plan.value_type() == SPMV_VALUE_COMPLEX_FLOAT);
  const auto x = random_vector<V>(a.cols, 4);
  std::vector<V> y = random_vector<V>(a.rows, 5);
  const auto y0 = y;
  const V al(-0.5f, 1.5f), be(2.0f, -0.5f);
  plan.execute(al, x.data(), be, y.data());
  CHECK(check_spmv_complex(a, reference_spmv_complex(a, C(al), x.data(), C(be), y0.data()), y.data()) == "");
  // Scalars of another type are refused before the library reads anything.
  std::vector<float> xf(size_t(a.cols)), yf(size_t(a.rows), 7.0f);
  try {
    plan.execute(1.0f, xf.data(), 0.0f, yf.data());
    FAIL("execute<float> ran on a complex float plan");
  } catch (const spmvjit::ApiError& e) {
    CHECK(e.status() == SPMV_STATUS_INVALID_VALUE);
    CHECK_THAT(e.what(), Catch::Contains("complex float"));
  }
  CHECK(yf[0] == 7.0f);
  std::vector<std::complex<double>> xd(size_t(a.cols)), yd(size_t(a.rows));
  CHECK_THROWS_AS(plan.execute(std::complex<double>(1), xd.data(), std::complex<double>(0), yd.data()),
                  spmvjit::ApiError);
}

// Converters of complex values store both parts: each format's arrays give the matrix back.
TEST_CASE("complex converters round-trip", "[formats][complex]") {
  for (const char* spec : {"powerlaw:300", "random:200:0:9:150", "short:100"}) {
    const auto a = complexify(generate_matrix(spec, 6), 11).cast<int32_t, std::complex<float>>();
    const CsrRef ref = a.ref();
    TargetInfo t;
    t.backend = BackendKind::cpu;
    t.threads = 3;
    t.simd_bytes = 32;
    const MatrixStats s = compute_stats(ref);
    for (const Format* f : complex_formats(BackendKind::cpu))
      for (const FormatParams& p : f->candidates(ref, s, t)) {
        INFO(f->name() << " " << params_json(p).dump() << " on " << spec);
        if (!f->estimate(ref, s, p, t).applicable) continue;
        const FormatData d = f->convert(ref, p, t);
        CHECK(d.value == ValueType::c32);
        std::vector<Triplet> got;
        f->to_triplets(d, ref, got);
        test::sort_triplets(got);
        CHECK(got == test::triplets_of(a));
      }
  }
}

// The planner's byte counts take a complex value as 8 or 16 bytes (the cost model compares formats
// on the bytes one SpMV moves).
TEST_CASE("complex plans count 8 and 16 bytes per value", "[plan][complex]") {
  if (!test::require_cpu_backend()) return;
  const Csr64 real = generate_matrix("random:300:0:9", 2);
  const int64_t rows = real.rows, cols = real.cols, nnz = real.nnz();
  auto bytes = [&](auto value_tag) {
    using V = decltype(value_tag);
    const auto a = complexify(real, 1).cast<int32_t, V>();
    spmv_options_t o = cpu_options("csr");
    PlanGuard g;
    const spmv_csr_t d = csr_view(a.rows, a.cols, a.nnz(), a.row_ptr.data(), a.col_idx.data(), a.val.data());
    REQUIRE(spmv_plan(&g.p, &d, &o) == SPMV_STATUS_SUCCESS);
    return Json::parse(describe(g.p))["bytes"];
  };
  for (const auto& [b, vs] : {std::pair{bytes(std::complex<float>()), int64_t(8)},
                              std::pair{bytes(std::complex<double>()), int64_t(16)}}) {
    INFO(vs << "-byte values");
    CHECK(b["matrix"].as_int() == 4 * (rows + 1) + (4 + vs) * nnz);
    // x, then y read and written (beta != 0).
    CHECK(b["per_spmv"].as_int() == b["matrix"].as_int() + vs * cols + 2 * vs * rows);
  }
}
