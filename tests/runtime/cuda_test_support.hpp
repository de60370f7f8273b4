// Shared by the CUDA device tests: the matrix set, device vectors with canaries, and the
// four-epilogue check of a plan against the long-double reference.
#pragma once
#ifdef SPMVJIT_WITH_CUDA
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <string>
#include <thread>
#include <vector>

#include "engine/gen/generators.hpp"
#include "engine/io/matrix_market.hpp"
#include "engine/reference.hpp"
#include "runtime/cuda/cuda_backend.hpp"
#include "runtime/device_buffer.hpp"
#include "spmvjit/spmvjit.h"
#include "tests/test_support.hpp"

namespace spmvjit::cuda_test {

inline constexpr int kCanaries = 5;
inline constexpr double kCanary = 12345.0;

struct TestMatrix {
  std::string name;
  HostCsr<int64_t, double> a;
};

// One row of `len` nonzeros among short rows: the load-balance worst case.
inline HostCsr<int64_t, double> huge_row(int64_t rows, int64_t len) {
  HostCsr<int64_t, double> a;
  a.rows = a.cols = rows;
  a.row_ptr.clear();
  a.row_ptr.push_back(0);
  const auto v = random_vector<double>(rows * 4 + len, 77);
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t n = r == 7 ? len : r % 4;
    for (int64_t k = 0; k < n; ++k) {
      a.col_idx.push_back(r == 7 ? k * rows / len : (r * 31 + k * 97) % rows);
      a.val.push_back(v[a.val.size()]);
    }
    std::sort(a.col_idx.end() - n, a.col_idx.end());
    a.row_ptr.push_back(int64_t(a.col_idx.size()));
  }
  return a;
}

inline const std::vector<TestMatrix>& test_matrices() {
  static const std::vector<TestMatrix> all = [] {
    std::vector<TestMatrix> m;
    // csr_adaptive's queue of rows for whole warps: powerlaw:5000 queues 144 rows from thread-per-row
    // blocks, powerlaw:6000:1.5:1500 449 from lane-group blocks (counted on the host layout, seed 5).
    for (const char* spec :
         {"poisson2d:40", "random:3000:1:40", "powerlaw:5000", "powerlaw:6000:1.5:1500", "denserows:3000:3:8",
          "short:5000:2", "dense:50", "dense:600", "random:37:1:40:1000", "random:1:1:1",
          // compressed values (engine/value_codec.hpp): uniform and 8-bit codes
          "powerlaw:5000@ones", "powerlaw:6000:1.5:1500@ones", "random:3000:1:40@few",
          "denserows:3000:3:8@few"})
      m.push_back({spec, generate_matrix(spec, 5)});
    m.push_back({"0x0", HostCsr<int64_t, double>{}});
    m.push_back({"huge-row", huge_row(3000, 3000)});
    if (const char* dir = std::getenv("SPMVJIT_MATRICES_DIR"); dir && std::filesystem::is_directory(dir)) {
      for (const auto& e : std::filesystem::directory_iterator(dir))
        if (e.path().extension() == ".mtx")
          m.push_back({e.path().filename().string(), read_matrix_market(e.path().string())});
    }
    return m;
  }();
  return all;
}

// Device x and y (y with canaries past the end) on the plan's device.
template <class V>
struct DeviceVectors {
  DeviceBuffer x, y;
  DeviceVectors(Backend& b, int64_t cols, int64_t rows)
      : x(b, size_t(std::max<int64_t>(cols, 1)) * sizeof(V)), y(b, size_t(rows + kCanaries) * sizeof(V)) {}
};

// Four SpMVs covering the epilogues with fresh x and y, the third from another thread (the
// context must be made current there). Returns "" or what went wrong.
template <class I, class V>
std::string check_plan(spmv_plan_t plan, const HostCsr<I, V>& a, uint64_t seed) {
  Backend& b = cuda_backend(0);
  DeviceVectors<V> d(b, a.cols, a.rows);
  const double alphas[] = {1.5, 1.0, -0.5, 1.0};
  const double betas[] = {0.0, 0.0, 0.75, -1.0};
  for (int c = 0; c < 4; ++c) {
    const V al = V(alphas[c]), be = V(betas[c]);
    const auto x = random_vector<V>(a.cols, seed * 8 + 2 * c);
    std::vector<V> y = random_vector<V>(a.rows + kCanaries, seed * 8 + 2 * c + 1);
    if (be == 0) std::fill(y.begin(), y.begin() + a.rows, std::numeric_limits<V>::quiet_NaN());
    std::fill(y.begin() + a.rows, y.end(), V(kCanary));
    const auto y0 = y;
    b.upload(d.x.get(), x.data(), x.size() * sizeof(V));
    b.upload(d.y.get(), y.data(), y.size() * sizeof(V));
    const std::string what =
        "alpha " + std::to_string(alphas[c]) + ", beta " + std::to_string(betas[c]) + ": ";
    spmv_status_t st = SPMV_STATUS_SUCCESS;
    std::string err;
    auto exec = [&] {
      st = spmv_execute(plan, &al, d.x.get(), &be, d.y.get(), nullptr);
      if (st != SPMV_STATUS_SUCCESS) err = spmv_last_error();
    };
    if (c == 2)
      std::thread(exec).join();
    else
      exec();
    if (st != SPMV_STATUS_SUCCESS) return what + "execute failed: " + err;
    b.synchronize(nullptr);
    b.download(y.data(), d.y.get(), y.size() * sizeof(V));
    const std::string bad =
        check_spmv(a, reference_spmv(a, double(al), x.data(), double(be), y0.data()), y.data());
    if (!bad.empty()) return what + bad;
    for (int k = 0; k < kCanaries; ++k)
      if (y[size_t(a.rows + k)] != V(kCanary)) return what + "wrote past the end of y";
  }
  return "";
}

template <class I, class V>
spmv_csr_t view(const HostCsr<I, V>& a) {
  return spmv_csr_t{a.rows,
                    a.cols,
                    a.nnz(),
                    a.row_ptr.data(),
                    a.col_idx.data(),
                    a.val.data(),
                    sizeof(I) == 4 ? SPMV_INDEX_INT32 : SPMV_INDEX_INT64,
                    sizeof(V) == 4 ? SPMV_VALUE_FLOAT : SPMV_VALUE_DOUBLE,
                    0,
                    SPMV_MEMORY_HOST};
}

}  // namespace spmvjit::cuda_test
#endif  // SPMVJIT_WITH_CUDA
