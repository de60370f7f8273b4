// Several vectors of complex values (spmm_execute of c32/c64 plans) on the CPU: every k in
// {1, 2, 3, 8, 32, 33} x both layouts (padded leading dimensions) x int32/int64 x complex
// float/double x A and A^T, with complex alpha and beta, against the std::complex<long double>
// reference vector by vector (tests/engine/spmm_complex_check.hpp); column-major X staged (forced);
// and the check itself catching the mistakes a complex k-vector kernel could make.
#include <catch2/catch.hpp>
#include <complex>
#include <string>
#include <vector>

#include "tests/engine/spmm_complex_check.hpp"

namespace {

using namespace spmvjit;
using namespace spmvjit::test::spmm_complex;

template <class I, class V>
void check_cpu() {
  if (!test::require_cpu_backend()) return;
  check_planner<I, V>(SPMV_BACKEND_CPU, nullptr, SPMV_OPERATION_NON_TRANSPOSE);
  check_planner<I, V>(SPMV_BACKEND_CPU, nullptr, SPMV_OPERATION_TRANSPOSE);
  check_planner<I, V>(SPMV_BACKEND_CPU, nullptr, SPMV_OPERATION_CONJUGATE_TRANSPOSE);
}

}  // namespace

TEST_CASE("spmm complex: k vectors of A and A^T on the CPU int32 complex float", "[spmm][complex]") {
  check_cpu<int32_t, std::complex<float>>();
}
TEST_CASE("spmm complex: k vectors of A and A^T on the CPU int32 complex double", "[spmm][complex]") {
  check_cpu<int32_t, std::complex<double>>();
}
TEST_CASE("spmm complex: k vectors of A and A^T on the CPU int64 complex float", "[spmm][complex]") {
  check_cpu<int64_t, std::complex<float>>();
}
TEST_CASE("spmm complex: k vectors of A and A^T on the CPU int64 complex double", "[spmm][complex]") {
  check_cpu<int64_t, std::complex<double>>();
}

// Column-major X staged row-major by the CPU's first step, forced (the planner offers it only for
// scattered columns beyond the caches): every k the staged plan takes, two and three parts of
// columns; Y written column-major with its padding.
TEST_CASE("spmm complex: X staged on the CPU", "[spmm][complex]") {
  if (!test::require_cpu_backend()) return;
  std::vector<Named> all = matrices();
  // Large enough for several parts of columns (tiny matrices run on one thread).
  all.push_back({"random:30000:0:12", complexify(generate_matrix("random:30000:0:12", 4), 77)});
  int plans = 0;
  auto run = [&]<class I, class V>() {
    for (const Named& m : all) {
      const HostCsr<I, V> a = m.a.template cast<I, V>();
      const spmv_csr_t desc = view(a);
      for (int k : {2, 3, 8, 32, 33})
        for (int threads : {2, 3}) {
          Options o;
          o.backend = SPMV_BACKEND_CPU;
          o.threads = threads;
          o.vectors = k;
          o.layout = SPMV_LAYOUT_COL_MAJOR;
          o.format = "csr_mm";
          FormatParams params{{"LAYOUT", 0}, {"VECTORS", baked_vectors(k)}, {"STAGE_X", 1}};
          INFO(m.name << ", k " << k << ", " << threads << " threads, " << to_string(value_type_of<V>()));
          if (k > 32) {  // past 32 vectors X is read in blocks: staging does not apply
            CHECK_THROWS(Plan(desc, o, nullptr, &params));
            continue;
          }
          Plan plan(desc, o, nullptr, &params);
          CHECK(check_spmm<I, V>(plan_exec<V>(plan), nullptr, a, k, false, uint64_t(plans) + 300) == "");
          const Json d = plan.describe_json();
          CHECK(d.dump().find("\"x_staged_bytes\"") != std::string::npos);
          // The staged copy counts the value's bytes: cols x k values of 8 or 16 bytes.
          CHECK(d.dump().find("\"x_staged_bytes\":" + std::to_string(a.cols * k * int64_t(sizeof(V)))) !=
                std::string::npos);
          if (m.name.rfind("random", 0) == 0) CHECK(d["parts"].as_int() > 1);
          ++plans;
        }
    }
  };
  run.template operator()<int32_t, std::complex<double>>();
  run.template operator()<int64_t, std::complex<float>>();
  CHECK(plans == 2 * int(all.size()) * 4 * 2);
}

// The planner's estimate of a complex k-vector plan counts the value's bytes: the matrix's values
// and X and Y (8 or 16 bytes a value, against 4 or 8 real).
TEST_CASE("spmm complex: plans count 8 and 16 bytes per value", "[spmm][complex]") {
  if (!test::require_cpu_backend()) return;
  const Cplx c = complexify(generate_matrix("random:300:0:9", 2), 1);
  const int64_t k = 8;
  auto bytes = [&]<class V>() {
    const auto a = c.cast<int32_t, V>();
    const spmv_csr_t d = view(a);
    Options o;
    o.backend = SPMV_BACKEND_CPU;
    o.vectors = int(k);
    Plan plan(d, o);
    CHECK(plan.data().format == "csr_mm");
    return plan.describe_json()["bytes"];
  };
  for (const auto& [b, vs] : {std::pair{bytes.template operator()<std::complex<float>>(), int64_t(8)},
                              std::pair{bytes.template operator()<std::complex<double>>(), int64_t(16)}}) {
    INFO(vs << "-byte values: " << b.dump());
    CHECK(b["matrix"].as_int() == 4 * (c.rows + 1) + (4 + vs) * c.nnz());
    // k vectors of x, then of y read and written (beta != 0).
    CHECK(b["per_spmv"].as_int() == b["matrix"].as_int() + k * (vs * c.cols + 2 * vs * c.rows));
  }
}

// The check above can fail: results of the mistakes a complex k-vector kernel could make (A
// conjugated, the last vector dropped, alpha's imaginary part dropped, beta applied to its real
// part only, vectors swapped) are refused, in both layouts.
TEST_CASE("spmm complex: the k-vector check catches wrong kernels", "[spmm][complex]") {
  const Cplx a = complexify(generate_matrix("random:60:1:8:45", 3), 9);
  const int64_t k = 3;
  const C alpha(1, 0.5), beta(-0.25, 0.75);
  for (bool row_major : {false, true}) {
    const int64_t ldx = row_major ? k + 1 : a.cols + 2, ldy = row_major ? k + 2 : a.rows + 1;
    auto at = [&](int64_t i, int64_t j, int64_t ld) { return size_t(row_major ? i * ld + j : j * ld + i); };
    const auto x = random_vector<C>((row_major ? a.cols : k) * ldx, 1);
    const auto y0 = random_vector<C>((row_major ? a.rows : k) * ldy, 2);
    enum Mistake { none, conj_a, drop_last, real_alpha, real_beta, swap };
    auto compute = [&](Mistake mistake) {
      std::vector<C> y = y0;
      for (int64_t j = 0; j < k; ++j) {
        if (mistake == drop_last && j == k - 1) continue;
        const int64_t jx = mistake == swap ? (j + 1) % k : j;
        for (int64_t i = 0; i < a.rows; ++i) {
          C s = 0;
          for (int64_t e = a.row_ptr[size_t(i)]; e < a.row_ptr[size_t(i) + 1]; ++e)
            s += (mistake == conj_a ? std::conj(a.val[size_t(e)]) : a.val[size_t(e)]) *
                 x[at(a.col_idx[size_t(e)], jx, ldx)];
          y[at(i, j, ldy)] = (mistake == real_alpha ? C(alpha.real()) : alpha) * s +
                             (mistake == real_beta ? C(beta.real()) : beta) * y0[at(i, j, ldy)];
        }
      }
      return y;
    };
    INFO((row_major ? "row-major" : "column-major"));
    auto judge = [&](Mistake m) {
      return check_vectors_complex(a, k, row_major, alpha, x.data(), ldx, beta, y0.data(), compute(m).data(),
                                   ldy);
    };
    CHECK(judge(none) == "");
    CHECK(judge(conj_a) != "");
    CHECK_THAT(judge(drop_last), Catch::Contains("vector 2"));
    CHECK(judge(real_alpha) != "");
    CHECK(judge(real_beta) != "");
    CHECK_THAT(judge(swap), Catch::Contains("vector 0"));
    // One part of one element wrong by a little more than rounding: refused too.
    std::vector<C> y = compute(none);
    y[at(5, 1, ldy)] += C(0, 1e-9);
    CHECK_THAT(check_vectors_complex(a, k, row_major, alpha, x.data(), ldx, beta, y0.data(), y.data(), ldy),
               Catch::Contains("vector 1, row 5, imaginary part"));
  }
}
