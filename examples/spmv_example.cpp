// The C++ layer, as a C++14 program: plan a 1D Laplacian, execute, check, and see a value type
// other than the plan's refused before anything is written.
#include <spmvjit/spmvjit.hpp>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <vector>

int main() {
  const int64_t n = 1000;
  std::vector<int32_t> rp, ci;
  std::vector<double> va;
  for (int64_t i = 0; i < n; ++i) {
    rp.push_back(int32_t(ci.size()));
    for (int64_t j = i - 1; j <= i + 1; ++j)
      if (j >= 0 && j < n) ci.push_back(int32_t(j)), va.push_back(i == j ? 2.0 : -1.0);
  }
  rp.push_back(int32_t(ci.size()));
  try {
    spmvjit::Options opt;
    opt.backend = SPMV_BACKEND_CPU;
    spmvjit::SpmvPlan plan(spmvjit::csr_view(n, n, int64_t(ci.size()), rp.data(), ci.data(), va.data()), opt);
    const std::vector<double> x(n, 1.0);
    std::vector<double> y(n);
    plan.execute(1.0, x.data(), 0.0, y.data());
    const spmv_plan_info_t info = plan.info();
    // A * ones = 1 at both ends, 0 inside.
    bool bad = std::fabs(y[0] - 1.0) > 0 || std::fabs(y[n - 1] - 1.0) > 0 || std::fabs(y[n / 2]) > 0 ||
               info.rows != n || info.value_type != SPMV_VALUE_DOUBLE;
    std::vector<float> xf(n, 1.0f), yf(n, 7.0f);
    try {
      plan.execute(1.0f, xf.data(), 0.0f, yf.data());
      bad = true;  // a float execute on a double plan must throw
    } catch (const spmvjit::ApiError& e) {
      bad = bad || e.status() != SPMV_STATUS_INVALID_VALUE || yf[0] != 7.0f;
    }
    std::printf("spmv_example_cpp: y[0]=%g y[n/2]=%g y[n-1]=%g, %lld threads, %s\n", y[0], y[n / 2], y[n - 1],
                (long long)info.threads, bad ? "WRONG" : "ok");
    return bad;
  } catch (const spmvjit::ApiError& e) {
    std::fprintf(stderr, "spmv_example_cpp: %s\n", e.what());
    return 1;
  }
}
