// What spmv_execute promises beyond the product, on the CPU for every format: alpha == 0 reads
// neither A nor x, deterministic plans give bitwise-identical y, one plan serves many threads.
#include <atomic>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <thread>
#include <vector>

#include "engine/formats/format.hpp"
#include "engine/gen/generators.hpp"
#include "engine/reference.hpp"
#include "spmvjit/spmvjit.hpp"
#include "tests/test_matrices.hpp"
#include "tests/test_support.hpp"

namespace {

using namespace spmvjit;

// rows x cols with `long_rows` rows of `long_len` entries among rows of 0..5: long enough for
// the formats' long-row paths (CPU parts split them; GPUs use carries or chunks).
HostCsr<int32_t, double> long_rows_matrix(int64_t rows, int64_t cols, int long_rows, int64_t long_len) {
  test::RowLists r(static_cast<size_t>(rows));
  const auto v = random_vector<double>(rows * 6 + long_rows * long_len, 91);
  size_t vi = 0;
  for (int64_t i = 0; i < rows; ++i) {
    const bool is_long = i % (rows / long_rows) == 3 && long_rows > 0;
    const int64_t n = is_long ? long_len : i % 6;
    for (int64_t k = 0; k < n; ++k) r[size_t(i)].push_back({(k * 7919 + i * 31) % cols, v[vi++]});
    std::sort(r[size_t(i)].begin(), r[size_t(i)].end());
    r[size_t(i)].erase(std::unique(r[size_t(i)].begin(), r[size_t(i)].end(),
                                   [](auto& x, auto& y) { return x.first == y.first; }),
                       r[size_t(i)].end());
  }
  return test::from_rows(rows, cols, r).cast<int32_t, double>();
}

struct Plan {
  spmv_plan_t p = nullptr;
  ~Plan() {
    if (p) spmv_plan_destroy(p);
  }
};

spmv_status_t plan_cpu(Plan& g, const HostCsr<int32_t, double>& a, const char* format, bool deterministic,
                       int threads = 2) {
  spmv_options_t o;
  spmv_options_init(&o);
  o.backend = SPMV_BACKEND_CPU;
  o.format = format;
  o.threads = threads;
  o.deterministic = deterministic;
  const spmv_csr_t d =
      csr_view<int32_t, double>(a.rows, a.cols, a.nnz(), a.row_ptr.data(), a.col_idx.data(), a.val.data());
  return spmv_plan(&g.p, &d, &o);
}

std::vector<std::string> cpu_format_names() {
  std::vector<std::string> out;
  for (const Format* f : all_formats())
    if (f->supports(BackendKind::cpu)) out.push_back(f->name());
  return out;
}

const double kInf = std::numeric_limits<double>::infinity(), kNan = std::numeric_limits<double>::quiet_NaN();

}  // namespace

TEST_CASE("alpha == 0 gives y = beta * y without reading A or x, every CPU format", "[kernels][execute]") {
  if (!test::require_cpu_backend()) return;
  auto a = long_rows_matrix(3000, 2000, 3, 4000);
  a.val[5] = kInf;  // A's own inf and nan must not reach y either
  a.val[9] = kNan;
  std::vector<double> x = random_vector<double>(a.cols, 5);
  x[0] = kInf, x[1] = kNan, x[a.cols - 1] = -kInf;
  for (const std::string& name : cpu_format_names()) {
    INFO("format " << name);
    Plan g;
    const spmv_status_t st = plan_cpu(g, a, name.c_str(), false);
    if (st == SPMV_STATUS_UNSUPPORTED) continue;
    REQUIRE(st == SPMV_STATUS_SUCCESS);
    for (const double beta : {0.0, -1.5}) {
      std::vector<double> y = random_vector<double>(a.rows, 6);
      const std::vector<double> y0 = y;
      if (beta == 0) std::fill(y.begin(), y.end(), kNan);
      const double alpha = 0;
      REQUIRE(spmv_execute(g.p, &alpha, x.data(), &beta, y.data(), nullptr) == SPMV_STATUS_SUCCESS);
      int bad = 0;
      for (int64_t i = 0; i < a.rows; ++i) bad += !(y[size_t(i)] == (beta == 0 ? 0.0 : beta * y0[size_t(i)]));
      CHECK(bad == 0);
    }
  }
}

TEST_CASE("deterministic plans: every CPU format twice, bitwise equal and right", "[kernels][execute]") {
  if (!test::require_cpu_backend()) return;
  // Rows long enough to be split between parts (carries) on 3 threads.
  const auto a = long_rows_matrix(20000, 20000, 4, 30000);
  const auto x = random_vector<double>(a.cols, 11);
  const auto y_in = random_vector<double>(a.rows, 12);
  const double alpha = 1.3, beta = -0.7;
  const auto ref = reference_spmv(a, alpha, x.data(), beta, y_in.data());
  for (const std::string& name : cpu_format_names()) {
    INFO("format " << name);
    Plan g;
    const spmv_status_t st = plan_cpu(g, a, name.c_str(), true, 3);
    if (st == SPMV_STATUS_UNSUPPORTED) {
      // No CPU format sums with atomics: none may be refused for determinism.
      CHECK(std::string(spmv_last_error()).find("not deterministic") == std::string::npos);
      continue;
    }
    REQUIRE(st == SPMV_STATUS_SUCCESS);
    const char* json = nullptr;
    REQUIRE(spmv_plan_describe(g.p, &json) == SPMV_STATUS_SUCCESS);
    CHECK(std::string(json).find("\"deterministic\":true") != std::string::npos);
    std::vector<double> first;
    for (int run = 0; run < 4; ++run) {
      std::vector<double> y = y_in;
      REQUIRE(spmv_execute(g.p, &alpha, x.data(), &beta, y.data(), nullptr) == SPMV_STATUS_SUCCESS);
      if (run == 0) {
        first = y;
        CHECK(check_spmv(a, ref, y.data()) == "");
      } else {
        CHECK(std::memcmp(first.data(), y.data(), y.size() * sizeof(double)) == 0);
      }
    }
  }
}

TEST_CASE("one plan, 8 threads at once: every result right (every CPU format)", "[kernels][execute]") {
  if (!test::require_cpu_backend()) return;
  const auto a = long_rows_matrix(6000, 6000, 3, 9000);
  for (const std::string& name : cpu_format_names()) {
    INFO("format " << name);
    Plan g;
    const spmv_status_t st = plan_cpu(g, a, name.c_str(), false, 2);
    if (st == SPMV_STATUS_UNSUPPORTED) continue;
    REQUIRE(st == SPMV_STATUS_SUCCESS);
    constexpr int kThreads = 8, kCalls = 12;
    std::vector<std::string> errors(kThreads);
    std::atomic<int> ready{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t)
      threads.emplace_back([&, t] {
        ready.fetch_add(1);
        while (ready.load() < kThreads) std::this_thread::yield();  // start together
        for (int c = 0; c < kCalls && errors[size_t(t)].empty(); ++c) {
          const auto x = random_vector<double>(a.cols, uint64_t(100 * t + c));
          std::vector<double> y = random_vector<double>(a.rows, uint64_t(100 * t + c + 50));
          const auto y0 = y;
          const double alpha = 1.0 + t, beta = c % 2 ? 0.5 : 0.0;
          if (spmv_execute(g.p, &alpha, x.data(), &beta, y.data(), nullptr) != SPMV_STATUS_SUCCESS)
            errors[size_t(t)] = spmv_last_error();
          else
            errors[size_t(t)] = check_spmv(a, reference_spmv(a, alpha, x.data(), beta, y0.data()), y.data());
        }
      });
    for (auto& th : threads) th.join();
    for (int t = 0; t < kThreads; ++t) {
      INFO("thread " << t);
      CHECK(errors[size_t(t)] == "");
    }
  }
}
