// What spmv_execute and spmv_plan promise on a CUDA device beyond the product: deterministic
// plans (bitwise-identical y, formats with atomic sums refused), alpha == 0, one plan on many
// threads and streams, and device out-of-memory during planning and update_values.
#include <atomic>
#include <catch2/catch.hpp>
#include <cstring>
#include <limits>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "engine/formats/format.hpp"
#include "engine/gen/generators.hpp"
#include "engine/reference.hpp"
#include "spmvjit/spmvjit.h"

#ifdef SPMVJIT_WITH_CUDA
#include "runtime/cuda/cuda_api.hpp"
#include "runtime/cuda/cuda_backend.hpp"
#include "runtime/device_buffer.hpp"
#include "tests/runtime/cuda_test_support.hpp"
namespace {

using namespace spmvjit;
using namespace spmvjit::cuda_test;
using Csr = HostCsr<int32_t, double>;

struct PlanGuard {
  spmv_plan_t p = nullptr;
  ~PlanGuard() {
    if (p) spmv_plan_destroy(p);
  }
};

// Rows of 0..5 entries and `long_rows` rows of `long_len` (csr_adaptive cuts rows past 2048
// entries into chunks; merge and csr5 carry them across threads and tiles).
Csr long_rows_matrix(int64_t n, int long_rows, int64_t long_len) {
  Csr a;
  a.rows = a.cols = n;
  a.row_ptr = {0};
  const auto v = random_vector<double>(n * 6 + long_rows * long_len, 17);
  size_t vi = 0;
  for (int64_t i = 0; i < n; ++i) {
    const bool is_long = i % (n / long_rows) == 5;
    const int64_t len = is_long ? long_len : i % 6;
    for (int64_t k = 0; k < len; ++k) {
      a.col_idx.push_back(int32_t(is_long ? k * (n / long_len) : (i * 31 + k * 977) % n));
      a.val.push_back(v[vi++]);
    }
    std::sort(a.col_idx.end() - len, a.col_idx.end());
    a.row_ptr.push_back(int32_t(a.col_idx.size()));
  }
  return a;
}

spmv_options_t cuda_options(const char* format, bool deterministic) {
  spmv_options_t o;
  spmv_options_init(&o);
  o.backend = test::gpu_api();
  o.format = format;
  o.deterministic = deterministic;
  return o;
}

std::string describe(spmv_plan_t p) {
  const char* json = nullptr;
  return spmv_plan_describe(p, &json) == SPMV_STATUS_SUCCESS ? json : "";
}

// y = alpha*A*x + beta*y on the device with y_in, downloaded.
std::vector<double> run(spmv_plan_t p, const Csr& a, const std::vector<double>& x,
                        const std::vector<double>& y_in, double alpha, double beta) {
  Backend& b = test::gpu_backend();
  DeviceVectors<double> d(b, a.cols, a.rows);
  b.upload(d.x.get(), x.data(), x.size() * 8);
  b.upload(d.y.get(), y_in.data(), y_in.size() * 8);
  REQUIRE(spmv_execute(p, &alpha, d.x.get(), &beta, d.y.get(), nullptr) == SPMV_STATUS_SUCCESS);
  b.synchronize(nullptr);
  std::vector<double> y(y_in.size());
  b.download(y.data(), d.y.get(), y.size() * 8);
  return y;
}

std::vector<std::string> gpu_format_names() {
  std::vector<std::string> out;
  for (const Format* f : all_formats())
    if (f->supports(test::gpu_kind())) out.push_back(f->name());
  return out;
}

}  // namespace

TEST_CASE("cuda deterministic: every format bitwise equal run to run, atomic ones refused", "[cuda]") {
  if (!test::gpu_available()) {
    SPMVJIT_SKIP("no GPU of the backend under test");
  }
  const Csr a = long_rows_matrix(400000, 4, 200000);
  const auto x = random_vector<double>(a.cols, 3);
  const auto y_in = random_vector<double>(a.rows, 4);
  const double alpha = 1.25, beta = -0.5;
  const auto ref = reference_spmv(a, alpha, x.data(), beta, y_in.data());
  const spmv_csr_t d = view(a);
  for (const std::string& name : gpu_format_names()) {
    INFO("format " << name);
    PlanGuard g;
    const spmv_options_t o = cuda_options(name.c_str(), true);
    const spmv_status_t st = spmv_plan(&g.p, &d, &o);
    if (name == "coo" || name == "hyb" || name == "merge") {
      CHECK(st == SPMV_STATUS_UNSUPPORTED);
      CHECK(std::string(spmv_last_error()).find("not deterministic") != std::string::npos);
      continue;
    }
    if (st != SPMV_STATUS_SUCCESS) {  // e.g. ell, padding every row to 200000 entries
      CHECK(std::string(spmv_last_error()).find("not deterministic") == std::string::npos);
      continue;
    }
    const std::string json = describe(g.p);
    CHECK(json.find("\"deterministic\":true") != std::string::npos);
    if (name == "csr_adaptive") CHECK(json.find("\"DETERMINISTIC\":1") != std::string::npos);
    const auto first = run(g.p, a, x, y_in, alpha, beta);
    CHECK(check_spmv(a, ref, first.data()) == "");
    for (int r = 0; r < 5; ++r) {
      const auto again = run(g.p, a, x, y_in, alpha, beta);
      CHECK(std::memcmp(first.data(), again.data(), first.size() * 8) == 0);
    }
  }
  // The planner's own choice: deterministic, and the refused candidates say why in describe.
  PlanGuard g;
  const spmv_options_t o = cuda_options(nullptr, true);
  REQUIRE(spmv_plan(&g.p, &d, &o) == SPMV_STATUS_SUCCESS);
  CHECK(describe(g.p).find("not deterministic: its GPU kernel adds") != std::string::npos);
  const auto first = run(g.p, a, x, y_in, alpha, beta);
  CHECK(check_spmv(a, ref, first.data()) == "");
  for (int r = 0; r < 3; ++r) CHECK(run(g.p, a, x, y_in, alpha, beta) == first);

  // Without the option csr_adaptive's chunks add with atomics: how often the bits differ is
  // reported, not asserted (it depends on the device's scheduling).
  PlanGuard fast;
  const spmv_options_t of = cuda_options("csr_adaptive", false);
  REQUIRE(spmv_plan(&fast.p, &d, &of) == SPMV_STATUS_SUCCESS);
  std::set<std::vector<double>> distinct;
  for (int r = 0; r < 10; ++r) distinct.insert(run(fast.p, a, x, y_in, alpha, beta));
  WARN("csr_adaptive without deterministic: " << distinct.size() << " distinct results in 10 runs");
}

TEST_CASE("cuda alpha == 0: y = beta * y for every format, inf and nan in A and x unread", "[cuda]") {
  if (!test::gpu_available()) {
    SPMVJIT_SKIP("no GPU of the backend under test");
  }
  Csr a = long_rows_matrix(20000, 2, 5000);
  a.val[3] = std::numeric_limits<double>::infinity();
  a.val[8] = std::numeric_limits<double>::quiet_NaN();
  auto x = random_vector<double>(a.cols, 9);
  x[0] = std::numeric_limits<double>::quiet_NaN();
  x[1] = -std::numeric_limits<double>::infinity();
  const spmv_csr_t d = view(a);
  for (const std::string& name : gpu_format_names()) {
    INFO("format " << name);
    PlanGuard g;
    const spmv_options_t o = cuda_options(name.c_str(), false);
    const spmv_status_t st = spmv_plan(&g.p, &d, &o);
    if (st == SPMV_STATUS_UNSUPPORTED) continue;
    REQUIRE(st == SPMV_STATUS_SUCCESS);
    for (const double beta : {0.0, 2.5}) {
      auto y_in = random_vector<double>(a.rows + kCanaries, 10);
      if (beta == 0) std::fill(y_in.begin(), y_in.begin() + a.rows, std::numeric_limits<double>::quiet_NaN());
      std::fill(y_in.begin() + a.rows, y_in.end(), kCanary);
      const auto y = run(g.p, a, x, y_in, 0.0, beta);
      int bad = 0;
      for (int64_t i = 0; i < a.rows; ++i)
        bad += !(y[size_t(i)] == (beta == 0 ? 0.0 : beta * y_in[size_t(i)]));
      for (int k = 0; k < kCanaries; ++k) bad += y[size_t(a.rows + k)] != kCanary;
      CHECK(bad == 0);
    }
  }
}

TEST_CASE("cuda: one plan from 8 threads on 8 streams, every result right", "[cuda]") {
  if (!test::gpu_available()) {
    SPMVJIT_SKIP("no GPU of the backend under test");
  }
  const auto* api = cuda::driver();
  REQUIRE(api);
  Backend& b = test::gpu_backend();
  const Csr a = long_rows_matrix(200000, 4, 50000);
  const spmv_csr_t d = view(a);
  for (const std::string& name : gpu_format_names()) {
    INFO("format " << name);
    PlanGuard g;
    const spmv_options_t o = cuda_options(name.c_str(), false);
    const spmv_status_t st = spmv_plan(&g.p, &d, &o);
    if (st == SPMV_STATUS_UNSUPPORTED) continue;
    REQUIRE(st == SPMV_STATUS_SUCCESS);
    constexpr int kThreads = 8, kCalls = 6;
    std::vector<std::string> errors(kThreads);
    std::atomic<int> ready{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t)
      threads.emplace_back([&, t] {
        b.synchronize(nullptr);  // makes the device's context current on this thread
        CUstream s = nullptr;
        if (api->cuStreamCreate(&s, CU_STREAM_NON_BLOCKING) != CUDA_SUCCESS) {
          errors[size_t(t)] = "cuStreamCreate failed";
          return;
        }
        DeviceVectors<double> dv(b, a.cols, a.rows);
        ready.fetch_add(1);
        while (ready.load() < kThreads) std::this_thread::yield();
        for (int c = 0; c < kCalls && errors[size_t(t)].empty(); ++c) {
          const auto x = random_vector<double>(a.cols, uint64_t(40 * t + c));
          std::vector<double> y = random_vector<double>(a.rows, uint64_t(40 * t + c + 20));
          const auto y0 = y;
          const double alpha = 1.0 + t, beta = c % 2 ? -0.5 : 0.0;
          b.upload(dv.x.get(), x.data(), x.size() * 8);
          b.upload(dv.y.get(), y.data(), y.size() * 8);
          if (spmv_execute(g.p, &alpha, dv.x.get(), &beta, dv.y.get(), s) != SPMV_STATUS_SUCCESS) {
            errors[size_t(t)] = spmv_last_error();
            break;
          }
          api->cuStreamSynchronize(s);
          b.download(y.data(), dv.y.get(), y.size() * 8);
          errors[size_t(t)] = check_spmv(a, reference_spmv(a, alpha, x.data(), beta, y0.data()), y.data());
        }
        api->cuStreamDestroy(s);
      });
    for (auto& th : threads) th.join();
    for (int t = 0; t < kThreads; ++t) {
      INFO("thread " << t);
      CHECK(errors[size_t(t)] == "");
    }
  }
}

TEST_CASE("cuda: device out of memory in plan and update_values is reported, changes nothing", "[cuda]") {
  if (!test::gpu_available()) {
    SPMVJIT_SKIP("no GPU of the backend under test");
  }
  const auto* api = cuda::driver();
  REQUIRE(api);
  Backend& b = test::gpu_backend();
  const Csr small = generate_matrix("random:200000:5:20", 21).cast<int32_t, double>();
  const Csr big = generate_matrix("random:1000000:5:15", 22).cast<int32_t, double>();
  PlanGuard p1;
  spmv_options_t o = cuda_options(nullptr, false);
  const spmv_csr_t ds = view(small), db = view(big);
  REQUIRE(spmv_plan(&p1.p, &ds, &o) == SPMV_STATUS_SUCCESS);
  CHECK(check_plan(p1.p, small, 1) == "");
  {  // the plan's kernels for `big` compiled and cached beforehand: the failure is the memory's
    PlanGuard warm;
    REQUIRE(spmv_plan(&warm.p, &db, &o) == SPMV_STATUS_SUCCESS);
  }
  // A request the device cannot meet gives every cached block back to the driver first.
  CHECK_THROWS(DeviceBuffer(b, size_t(1) << 52));
  b.synchronize(nullptr);
  size_t free0 = 0, total = 0;
  REQUIRE(api->cuMemGetInfo(&free0, &total) == CUDA_SUCCESS);
  CUdeviceptr filler = 0;
  const size_t keep = size_t(8) << 20;  // leave 8 MiB: less than either request below
  REQUIRE(api->cuMemAlloc(&filler, free0 - keep) == CUDA_SUCCESS);

  PlanGuard p2;
  CHECK(spmv_plan(&p2.p, &db, &o) == SPMV_STATUS_OUT_OF_MEMORY);
  CHECK(p2.p == nullptr);
  const std::string plan_error = spmv_last_error();
  INFO("plan error: " << plan_error);
  CHECK(plan_error.find("out of memory") != std::string::npos);

  Csr renewed = small;
  renewed.val = random_vector<double>(small.nnz(), 23);  // 16 MB of values to stage
  CHECK(spmv_plan_update_values(p1.p, renewed.val.data(), SPMV_MEMORY_HOST) == SPMV_STATUS_OUT_OF_MEMORY);
  CHECK(std::string(spmv_last_error()).find("out of memory") != std::string::npos);
  api->cuMemFree(filler);
  CHECK(check_plan(p1.p, small, 2) == "");  // the old values, unchanged
  REQUIRE(spmv_plan_update_values(p1.p, renewed.val.data(), SPMV_MEMORY_HOST) == SPMV_STATUS_SUCCESS);
  CHECK(check_plan(p1.p, renewed, 3) == "");
  REQUIRE(spmv_plan(&p2.p, &db, &o) == SPMV_STATUS_SUCCESS);
  CHECK(check_plan(p2.p, big, 4) == "");
  spmv_plan_destroy(p2.p);
  p2.p = nullptr;
  // Nothing leaked: once the cache gives its blocks back, the device has what it had.
  CHECK_THROWS(DeviceBuffer(b, size_t(1) << 52));
  b.synchronize(nullptr);
  size_t free1 = 0;
  REQUIRE(api->cuMemGetInfo(&free1, &total) == CUDA_SUCCESS);
  CHECK(free1 + (size_t(64) << 20) >= free0);
}

// Small enough for compute-sanitizer's racecheck and synccheck (scripts/gpu_run.sh): every
// format, plain and deterministic, on matrices that take each format's long-row and tail paths.
TEST_CASE("cuda sanitizer set: every format on small matrices", "[cuda]") {
  if (!test::gpu_available()) {
    SPMVJIT_SKIP("no GPU of the backend under test");
  }
  std::vector<std::pair<std::string, Csr>> ms;
  ms.push_back({"long rows", long_rows_matrix(20000, 2, 5000)});
  ms.push_back({"huge row", huge_row(3000, 3000).cast<int32_t, double>()});
  for (const char* spec : {"powerlaw:3000", "random:37:1:40:1000", "blocks:300:3:3", "poisson2d:30"})
    ms.push_back({spec, generate_matrix(spec, 31).cast<int32_t, double>()});
  uint64_t seed = 50;
  for (const auto& [mname, a] : ms)
    for (const std::string& name : gpu_format_names())
      for (const bool det : {false, true}) {
        INFO("format " << name << ", matrix " << mname << (det ? ", deterministic" : ""));
        PlanGuard g;
        const spmv_options_t o = cuda_options(name.c_str(), det);
        const spmv_csr_t d = view(a);
        const spmv_status_t st = spmv_plan(&g.p, &d, &o);
        if (st == SPMV_STATUS_UNSUPPORTED) continue;
        REQUIRE(st == SPMV_STATUS_SUCCESS);
        CHECK(check_plan(g.p, a, ++seed) == "");
      }
}

#endif  // SPMVJIT_WITH_CUDA
