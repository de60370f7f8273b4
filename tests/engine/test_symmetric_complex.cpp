// Complex symmetric (A = A^T) and Hermitian (A = A^H) matrices given by one triangle: the expansion
// (mirrors conjugated for Hermitian, the diagonal's imaginary parts dropped, everything conjugated
// for op(A) = conj(A)), every complex format and the planner's choice (sym_diag on banded ones)
// against the reference for A, A^T and A^H, update_values, what info and describe say; on the CPU
// and the GPU.
#include <catch2/catch.hpp>
#include <complex>
#include <string>
#include <vector>

#include "engine/gen/generators.hpp"
#include "engine/reference.hpp"
#include "engine/symmetric.hpp"
#include "tests/engine/complex_formats_check.hpp"
#include "tests/test_support.hpp"

namespace {

using namespace spmvjit;
using namespace spmvjit::test::complex_formats;

Declared hermitian(spmv_fill_mode_t fill) { return {SPMV_MATRIX_HERMITIAN, fill}; }
Declared symmetric(spmv_fill_mode_t fill) { return {SPMV_MATRIX_SYMMETRIC, fill}; }

// A square matrix whose triangles differ and whose diagonal has imaginary parts: a plan that read
// the wrong triangle, mirrored without conjugating, or kept the Hermitian diagonal's imaginary
// parts computes another product.
Cplx lopsided(const std::string& spec, uint64_t seed) {
  Cplx a = complexify(generate_matrix(spec, 1), seed);
  for (int64_t r = 0; r < a.rows; ++r)
    for (int64_t k = a.row_ptr[size_t(r)]; k < a.row_ptr[size_t(r) + 1]; ++k) {
      auto& v = a.val[size_t(k)];
      if (a.col_idx[size_t(k)] > r) v += C(50, -25);
      if (a.col_idx[size_t(k)] == r) v = C(v.real(), 0.75);
    }
  return a;
}

// The expansion's values, entry by entry, against the reference's full matrix (the layouts are
// the same: test_symmetric.cpp pins them for real values).
void check_expansion(const Cplx& a, bool upper, SymmetricValues how) {
  const HostSymmetric s = expand_symmetric_on_host(a.ref(), 0, upper, how);
  Cplx want = reference_symmetric_full(a, upper, how.hermitian);
  if (how.conjugate)
    for (auto& v : want.val) v = std::conj(v);
  REQUIRE(s.ref.nnz == want.nnz());
  const auto* rp = s.row_ptr.as<int64_t>();
  const auto* ci = s.col_idx.as<int64_t>();
  const auto* val = s.values.as<C>();
  for (int64_t r = 0; r < a.rows; ++r) {
    REQUIRE(rp[r + 1] == want.row_ptr[size_t(r) + 1]);
    // Each row's entries as a multiset of (col, value): the reference orders mirrors its own way.
    std::vector<std::pair<int64_t, std::pair<double, double>>> got, exp;
    for (int64_t k = rp[r]; k < rp[r + 1]; ++k) {
      got.push_back({ci[k], {val[k].real(), val[k].imag()}});
      exp.push_back({want.col_idx[size_t(k)], {want.val[size_t(k)].real(), want.val[size_t(k)].imag()}});
    }
    std::sort(got.begin(), got.end());
    std::sort(exp.begin(), exp.end());
    INFO("row " << r);
    REQUIRE(got == exp);
  }
  // New values through the positions land where the expansion put the first ones.
  std::vector<C> again(size_t(s.ref.nnz));
  expand_symmetric_values(a.val.data(), again.data(), s.position.data(), a.nnz(), IndexType::i64,
                          ValueType::c64, how);
  for (int64_t k = 0; k < s.ref.nnz; ++k) REQUIRE(again[size_t(k)] == val[k]);
}

}  // namespace

TEST_CASE("complex symmetric expansion: Hermitian mirrors conjugated, its diagonal real",
          "[symmetric][complex]") {
  const Cplx a = lopsided("random:300:0:20", 3);
  for (bool upper : {false, true})
    for (bool herm : {false, true})
      for (bool conj : {false, true}) {
        INFO("upper " << upper << ", hermitian " << herm << ", conjugated " << conj);
        check_expansion(a, upper, {herm, conj});
      }
  // The reference itself: a Hermitian full matrix equals its conjugate transpose, with a real
  // diagonal; the symmetric one its transpose.
  const Cplx h = reference_symmetric_full(a, false, true), s = reference_symmetric_full(a, false, false);
  CHECK(test::triplets_of(h) == test::triplets_of(reference_transpose(h, true)));
  CHECK(test::triplets_of(s) == test::triplets_of(reference_transpose(s, false)));
  CHECK(test::triplets_of(h) != test::triplets_of(s));
}

// Every complex format on the square test matrices declared symmetric or Hermitian, both fills,
// every operation (a Hermitian matrix's A^T and a symmetric one's A^H are its conjugate).
TEST_CASE("complex formats, Hermitian, int32 complex double", "[kernels][complex][symmetric]") {
  run_complex_formats<int32_t, std::complex<double>>(SPMV_OPERATION_NON_TRANSPOSE, BackendKind::cpu,
                                                     hermitian(SPMV_FILL_LOWER));
  run_complex_formats<int32_t, std::complex<double>>(SPMV_OPERATION_TRANSPOSE, BackendKind::cpu,
                                                     hermitian(SPMV_FILL_UPPER));
}
TEST_CASE("complex formats, Hermitian, int64 complex float", "[kernels][complex][symmetric]") {
  run_complex_formats<int64_t, std::complex<float>>(SPMV_OPERATION_NON_TRANSPOSE, BackendKind::cpu,
                                                    hermitian(SPMV_FILL_UPPER));
  run_complex_formats<int64_t, std::complex<float>>(SPMV_OPERATION_CONJUGATE_TRANSPOSE, BackendKind::cpu,
                                                    hermitian(SPMV_FILL_LOWER));
}
TEST_CASE("complex formats, complex symmetric", "[kernels][complex][symmetric]") {
  run_complex_formats<int32_t, std::complex<float>>(SPMV_OPERATION_NON_TRANSPOSE, BackendKind::cpu,
                                                    symmetric(SPMV_FILL_UPPER));
  run_complex_formats<int64_t, std::complex<double>>(SPMV_OPERATION_CONJUGATE_TRANSPOSE, BackendKind::cpu,
                                                     symmetric(SPMV_FILL_LOWER));
}
TEST_CASE("cuda device: complex formats Hermitian and complex symmetric", "[cuda][complex][symmetric]") {
  const BackendKind g = test::gpu_kind();
  run_complex_formats<int32_t, std::complex<double>>(SPMV_OPERATION_NON_TRANSPOSE, g,
                                                     hermitian(SPMV_FILL_LOWER));
  run_complex_formats<int64_t, std::complex<float>>(SPMV_OPERATION_TRANSPOSE, g, hermitian(SPMV_FILL_UPPER));
  run_complex_formats<int32_t, std::complex<float>>(SPMV_OPERATION_CONJUGATE_TRANSPOSE, g,
                                                    symmetric(SPMV_FILL_LOWER));
}

// Info, describe and update_values of Hermitian plans: the triangle's new values in the input's
// order, conjugated where op(A) asks; host and (GPU) device values.
static void check_hermitian_plans(BackendKind kind) {
  using V = std::complex<double>;
  const Cplx a = lopsided("poisson2d:40", 5);
  Cplx b = a;
  for (auto& v : b.val) v = V(v.imag() - 1, 2 * v.real());
  const spmv_csr_t d = csr_view(a.rows, a.cols, a.nnz(), a.row_ptr.data(), a.col_idx.data(), a.val.data());
  for (const char* format : {"sym_diag", "csr", "sell"})
    for (spmv_operation_t op : {SPMV_OPERATION_NON_TRANSPOSE, SPMV_OPERATION_TRANSPOSE}) {
      INFO(format << ", operation " << int(op) << (kind == BackendKind::cpu ? " (CPU)" : " (GPU)"));
      const Declared as = hermitian(SPMV_FILL_LOWER);
      spmv_options_t o = backend_options(kind, format);
      o.operation = op;
      o.matrix_type = as.type;
      PlanGuard g;
      REQUIRE(spmv_plan(&g.p, &d, &o) == SPMV_STATUS_SUCCESS);
      const Json desc = Json::parse(describe(g.p));
      CHECK(desc["symmetric"]["kind"] == Json("hermitian"));
      CHECK(desc["symmetric"]["conjugated"] == Json(op == SPMV_OPERATION_TRANSPOSE));
      CHECK(desc["symmetric"]["storage"] ==
            Json(std::string(format) == "sym_diag" ? "one triangle" : "full matrix"));
      CHECK(desc["stats"]["hermitian"] == Json(true));
      spmv_plan_info_t info = SPMV_PLAN_INFO_INIT;
      REQUIRE(spmv_plan_info(g.p, &info) == SPMV_STATUS_SUCCESS);
      CHECK(info.matrix_type == SPMV_MATRIX_HERMITIAN);
      CHECK(info.nnz == a.nnz());
      CHECK(check_plan(g.p, judged_matrix(a, op, as), 400, kind) == "");
      REQUIRE(spmv_plan_update_values(g.p, b.val.data(), SPMV_MEMORY_HOST) == SPMV_STATUS_SUCCESS);
      CHECK(check_plan(g.p, judged_matrix(b, op, as), 401, kind) == "");
      if (kind != BackendKind::cpu) {
        Backend& dev = test::gpu_backend();
        DeviceBuffer dv(dev, a.val.size() * sizeof(V));
        dev.upload(dv.get(), a.val.data(), dv.bytes());
        REQUIRE(spmv_plan_update_values(g.p, dv.get(), SPMV_MEMORY_DEVICE) == SPMV_STATUS_SUCCESS);
        CHECK(check_plan(g.p, judged_matrix(a, op, as), 402, kind) == "");
      }
    }
}
TEST_CASE("Hermitian plans: info, describe, update_values conjugate where they must",
          "[plan][complex][symmetric]") {
  if (test::require_cpu_backend()) check_hermitian_plans(BackendKind::cpu);
}
TEST_CASE("cuda device: Hermitian plans update their values", "[cuda][complex][symmetric]") {
  if (!test::gpu_available()) SPMVJIT_SKIP("no GPU of the backend under test");
  check_hermitian_plans(test::gpu_kind());
}

// Real values: HERMITIAN is SYMMETRIC (info keeps what was asked); sym_diag's HERMITIAN constant is
// for complex matrices only.
TEST_CASE("Hermitian real matrices are symmetric ones", "[plan][symmetric]") {
  if (!test::require_cpu_backend()) return;
  const HostCsr<int64_t, double> a = generate_matrix("poisson2d:30", 2);
  const spmv_csr_t d = csr_view(a.rows, a.cols, a.nnz(), a.row_ptr.data(), a.col_idx.data(), a.val.data());
  spmv_options_t o = cpu_options(nullptr);
  o.matrix_type = SPMV_MATRIX_HERMITIAN;
  PlanGuard g;
  REQUIRE(spmv_plan(&g.p, &d, &o) == SPMV_STATUS_SUCCESS);
  const Json desc = Json::parse(describe(g.p));
  CHECK(desc["symmetric"]["kind"] == Json("symmetric"));
  CHECK(desc["stats"]["hermitian"] == Json(false));
  spmv_plan_info_t info = SPMV_PLAN_INFO_INIT;
  REQUIRE(spmv_plan_info(g.p, &info) == SPMV_STATUS_SUCCESS);
  CHECK(info.matrix_type == SPMV_MATRIX_HERMITIAN);
  const auto x = random_vector<double>(a.cols, 1);
  std::vector<double> y(size_t(a.rows));
  const double one = 1, zero = 0;
  REQUIRE(spmv_execute(g.p, &one, x.data(), &zero, y.data(), nullptr) == SPMV_STATUS_SUCCESS);
  const auto full = reference_symmetric_full(a, false);
  CHECK(check_vectors(full, 1, false, 1.0, x.data(), a.cols, 0.0, y.data(), y.data(), a.rows) == "");
  // The complex-only kernel constant on a real plan's estimate: not applicable, saying why.
  const Format* sd = find_format("sym_diag");
  REQUIRE(sd != nullptr);
  MatrixStats s = compute_stats(a.ref());
  s.symmetric = true;
  TargetInfo t;
  t.backend = BackendKind::cpu;
  const Estimate e = sd->estimate(a.ref(), s, {{"SYMMETRIC", 1}, {"HERMITIAN", 1}}, t);
  CHECK(!e.applicable);
  CHECK_THAT(e.reason, Catch::Contains("complex matrices declared Hermitian"));
}
