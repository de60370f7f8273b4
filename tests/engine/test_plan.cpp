// Plan ownership of device memory: a constructor that throws after uploading has begun (a failed
// device allocation, a missing kernel entry) frees every device array it had allocated; a plan
// whose frees fail still goes quietly (logged, not thrown).
#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <map>
#include <memory>
#include <string>

#include "core/log.hpp"
#include "engine/gen/generators.hpp"
#include "engine/plan.hpp"
#include "engine/planner.hpp"
#include "engine/reference.hpp"
#include "engine/stats.hpp"
#include "runtime/backend.hpp"
#include "spmvjit/spmvjit.hpp"
#include "tests/test_support.hpp"

namespace {

using namespace spmvjit;

// A module whose entries can be made to go missing, so bind_entries throws after the upload.
class FlakyModule : public LoadedModule {
 public:
  FlakyModule(std::shared_ptr<LoadedModule> inner, const bool* fail)
      : inner_(std::move(inner)), fail_(fail) {}
  void* entry(const std::string& name) const override {
    if (*fail_) fail(SPMV_STATUS_INTERNAL_ERROR, "test: entry " + name + " made to go missing");
    return inner_->entry(name);
  }

 private:
  std::shared_ptr<LoadedModule> inner_;
  const bool* fail_;
};

// The CPU backend's compiler and thread pool behind a "device" (is_host() false) whose memory is
// malloc'd and counted, and whose n-th allocation can be made to fail: the GPU upload path of a
// plan, without a GPU.
class CountingBackend : public Backend {
 public:
  explicit CountingBackend(Backend& inner, std::string tag = " +counting-test")
      : inner_(inner), tag_(std::move(tag)) {}
  BackendKind kind() const override { return inner_.kind(); }
  const TargetInfo& target() const override { return inner_.target(); }
  // A key of its own: the memory cache then only ever hands this backend FlakyModules.
  std::string compiler_version() const override { return inner_.compiler_version() + tag_; }
  std::vector<std::string> compile_options(const KernelSpec& spec) const override {
    return inner_.compile_options(spec);
  }
  std::vector<char> compile(const KernelSource& src) override { return inner_.compile(src); }
  std::shared_ptr<LoadedModule> load(const std::vector<char>& binary, const std::string& key) override {
    return std::make_shared<FlakyModule>(inner_.load(binary, key), &fail_entries);
  }
  std::unique_ptr<Executor> make_executor(int threads) override { return inner_.make_executor(threads); }
  void* alloc(size_t bytes) override {
    if (++allocs == fail_at)
      fail(SPMV_STATUS_OUT_OF_MEMORY, "test: allocation " + std::to_string(allocs) + " made to fail");
    void* p = std::malloc(bytes);
    live[p] = bytes;
    return p;
  }
  void free(void* p) override {
    if (!p) return;
    if (live.erase(p) != 1) ++bad_frees;
    std::free(p);
    if (fail_frees) fail(SPMV_STATUS_EXECUTION_FAILED, "test: free made to fail");
  }
  void upload(void* dst, const void* src, size_t bytes) override { std::memcpy(dst, src, bytes); }
  void download(void* dst, const void* src, size_t bytes) override { std::memcpy(dst, src, bytes); }
  bool is_host() const override { return false; }

  size_t live_bytes() const {
    size_t n = 0;
    for (const auto& [p, b] : live) n += b;
    return n;
  }

  int allocs = 0;
  int fail_at = 0;  // 0: never
  int bad_frees = 0;
  bool fail_entries = false;
  bool fail_frees = false;  // the memory is released, then the free reports failure
  std::map<void*, size_t> live;

 private:
  Backend& inner_;
  std::string tag_;
};

}  // namespace

TEST_CASE("a plan whose constructor throws mid-upload frees its device arrays", "[plan]") {
  if (!test::require_cpu_backend()) return;  // the fake borrows the CPU compiler
  // Static: the process's memory cache keeps this backend's FlakyModules, which point into it.
  static CountingBackend dev(get_backend(BackendKind::cpu, 0));
  const auto a = generate_matrix("powerlaw:3000", 5).cast<int32_t, double>();
  const spmv_csr_t d =
      csr_view<int32_t, double>(a.rows, a.cols, a.nnz(), a.row_ptr.data(), a.col_idx.data(), a.val.data());
  for (const char* format : {"csr", "sell", "csr5"}) {
    INFO("format " << format);
    spmv_options_t o;
    spmv_options_init(&o);
    o.format = format;
    o.cache_dir = "";  // memory only: no disk entries under the test backend's key
    o.log_level = SPMV_LOG_OFF;

    // A plan that succeeds holds one allocation per uploaded array and frees them all.
    dev.allocs = 0;
    dev.fail_at = 0;
    dev.fail_entries = false;
    int uploads = 0;
    size_t bytes = 0;
    {
      Plan plan(d, o, &dev);
      for (const HostArray& h : plan.data().arrays)
        if (h.buf.bytes() && h.name != "parts") ++uploads, bytes += h.buf.bytes();
      bytes += size_t(plan.data().scratch_bytes);
      uploads += plan.data().scratch_bytes ? 1 : 0;
      CHECK(dev.allocs == uploads);
      CHECK(dev.live.size() == size_t(uploads));
      CHECK(dev.live_bytes() == bytes);
      // describe() reports exactly the device memory held.
      CHECK(plan.describe().find("\"device\":" + std::to_string(bytes) + "}") != std::string::npos);
    }
    REQUIRE(uploads >= 3);  // row pointers or slices, columns, values at least
    CHECK(dev.live.empty());
    CHECK(dev.bad_frees == 0);

    // Every allocation in turn fails: what came before it is freed, the error is the allocator's.
    for (int k = 1; k <= uploads; ++k) {
      INFO("allocation " << k << " of " << uploads << " fails");
      dev.allocs = 0;
      dev.fail_at = k;
      try {
        Plan plan(d, o, &dev);
        FAIL("the plan was built although allocation " << k << " failed");
      } catch (const Error& e) {
        CHECK(e.status() == SPMV_STATUS_OUT_OF_MEMORY);
      }
      CHECK(dev.allocs == k);
      CHECK(dev.live.empty());
      CHECK(dev.bad_frees == 0);
    }

    // Binding the kernel entries throws: it comes before the uploads, nothing is allocated.
    dev.allocs = 0;
    dev.fail_at = 0;
    dev.fail_entries = true;
    try {
      Plan plan(d, o, &dev);
      FAIL("the plan was built although its entries are missing");
    } catch (const Error& e) {
      CHECK(e.status() == SPMV_STATUS_INTERNAL_ERROR);
      CHECK(std::string(e.what()).find("made to go missing") != std::string::npos);
    }
    CHECK(dev.allocs == 0);
    CHECK(dev.live.empty());
    CHECK(dev.bad_frees == 0);

    // Every free fails (a context gone at exit): the plan still goes without throwing, each
    // failure is logged, nothing is freed twice.
    dev.allocs = 0;
    dev.fail_entries = false;
    static int warnings;
    warnings = 0;
    bool logging = false;
    {
      Plan plan(d, o, &dev);  // its options turn logging off: the callback goes in afterwards
      configure_logging(
          SPMV_LOG_WARN,
          [](int level, const char* m, void*) {
            if (level == SPMV_LOG_WARN && std::strstr(m, "free made to fail")) ++warnings;
          },
          nullptr);
      logging = log_enabled(SPMV_LOG_WARN);  // $SPMVJIT_LOG_LEVEL may silence it
      dev.fail_frees = true;
    }
    dev.fail_frees = false;
    configure_logging(SPMV_LOG_OFF, nullptr, nullptr);
    CHECK(dev.live.empty());
    CHECK(dev.bad_frees == 0);
    if (logging) CHECK(warnings == uploads);
  }
}

namespace {

// Runs the plan's four epilogue cases (beta 0 with NaN in y, beta != 0, alpha 1 and not) on a
// host "device"; "" or what went wrong.
std::string check_epilogues(Plan& plan, const HostCsr<int32_t, double>& a, uint64_t seed) {
  const double alphas[] = {1.0, -1.75, 1.0, 0.3}, betas[] = {0.0, 0.0, 0.5, -1.25};
  for (int c = 0; c < 4; ++c) {
    const auto x = random_vector<double>(a.cols, seed + 2 * c);
    std::vector<double> y = random_vector<double>(a.rows, seed + 2 * c + 1);
    if (betas[c] == 0) std::fill(y.begin(), y.end(), std::numeric_limits<double>::quiet_NaN());
    const auto y0 = y;
    plan.execute(&alphas[c], x.data(), &betas[c], y.data(), nullptr);
    const std::string bad =
        check_spmv(a, reference_spmv(a, alphas[c], x.data(), betas[c], y0.data()), y.data());
    if (!bad.empty())
      return "alpha " + std::to_string(alphas[c]) + ", beta " + std::to_string(betas[c]) + ": " + bad;
  }
  return "";
}

}  // namespace

TEST_CASE("a kernel not yet cached runs on the run-time epilogue until the specialized one is ready",
          "[plan]") {
  if (!test::require_cpu_backend()) return;
  // The CPU backend under keys of its own (in no cache, memory or disk: each format compiles),
  // computing in host memory like the CPU backend.
  struct HostBackend : CountingBackend {
    using CountingBackend::CountingBackend;
    bool is_host() const override { return true; }
  };
  static HostBackend dev(get_backend(BackendKind::cpu, 0), " +tiering-test");
  const auto a = generate_matrix("powerlaw:3000", 6).cast<int32_t, double>();
  const spmv_csr_t d =
      csr_view<int32_t, double>(a.rows, a.cols, a.nnz(), a.row_ptr.data(), a.col_idx.data(), a.val.data());
  const char* saved = std::getenv("SPMVJIT_TIERED_COMPILE");
  const std::string restore = saved ? saved : "";
  setenv("SPMVJIT_TIERED_COMPILE", "1", 1);  // the default, whatever the environment says
  for (const char* format : {"csr", "sell", "merge"}) {
    INFO("format " << format);
    spmv_options_t o;
    spmv_options_init(&o);
    o.format = format;
    o.cache_dir = "";
    o.log_level = SPMV_LOG_OFF;
    Plan first(d, o, &dev);
    CHECK(first.tiered());
    CHECK(first.describe().find("run-time epilogue until the specialized kernel is ready") !=
          std::string::npos);
    CHECK(check_epilogues(first, a, 100) == "");  // on whichever kernel is in use meanwhile
    first.wait_for_kernels();
    CHECK(first.kernel_tier() == "specialized");
    CHECK(first.cache().where == "compiled");
    CHECK(first.cache().key != "");
    CHECK(check_epilogues(first, a, 200) == "");
    // The next plan of the same kernel finds the specialized module: no quick variant.
    Plan second(d, o, &dev);
    CHECK_FALSE(second.tiered());
    CHECK(second.kernel_tier() == "specialized");
    CHECK(second.cache().key == first.cache().key);
    CHECK(second.cache().where == "memory");
  }
  // A deterministic plan compiles the specialized module before it returns: a switch of kernels
  // mid-run would change its sums' bits.
  {
    spmv_options_t o;
    spmv_options_init(&o);
    o.format = "coo";
    o.cache_dir = "";
    o.log_level = SPMV_LOG_OFF;
    o.deterministic = 1;
    Plan p(d, o, &dev);
    CHECK_FALSE(p.tiered());
    CHECK(p.kernel_tier() == "specialized");
    CHECK(p.cache().where == "compiled");
    CHECK(check_epilogues(p, a, 250) == "");
  }
  // "quick" keeps the run-time epilogue variant for good; "0" compiles the specialized one first.
  setenv("SPMVJIT_TIERED_COMPILE", "quick", 1);
  {
    spmv_options_t o;
    spmv_options_init(&o);
    o.format = "csr";
    o.cache_dir = "";
    o.log_level = SPMV_LOG_OFF;
    Plan p(d, o, &dev);
    CHECK_FALSE(p.tiered());
    CHECK(p.kernel_tier() == "run-time epilogue");
    CHECK(check_epilogues(p, a, 300) == "");
    setenv("SPMVJIT_TIERED_COMPILE", "0", 1);
    o.format = "csr_vector";
    Plan q(d, o, &dev);
    CHECK_FALSE(q.tiered());
    CHECK(q.kernel_tier() == "specialized");
    CHECK(q.cache().where == "compiled");
  }
  if (saved)
    setenv("SPMVJIT_TIERED_COMPILE", restore.c_str(), 1);
  else
    unsetenv("SPMVJIT_TIERED_COMPILE");
}

TEST_CASE("the planner's estimates on several threads give one thread's candidates in its order",
          "[planner]") {
  TargetInfo cpu;
  cpu.simd_bytes = 64;
  cpu.threads = 2;
  TargetInfo gpu;
  gpu.backend = BackendKind::cuda, gpu.target = "sm_90", gpu.sm_count = 132;
  for (const char* spec : {"poisson2d:100", "blockfem:10:3", "random:5000:1:40", "powerlaw:5000", "dense:150",
                           "short:20000:2", "varband:3000"})
    for (const TargetInfo& t : {cpu, gpu}) {
      INFO(spec << " on " << to_string(t.backend));
      const auto a = generate_matrix(spec, 1);
      const MatrixStats s = compute_stats(a.ref());
      ChoiceOptions one, four;
      one.estimate_threads = 1;
      four.estimate_threads = 4;
      const PlanChoice x = choose_format(a.ref(), s, t, nullptr, one);
      const PlanChoice y = choose_format(a.ref(), s, t, nullptr, four);
      REQUIRE(x.considered.size() == y.considered.size());
      CHECK(x.considered.size() > 10);
      for (size_t i = 0; i < x.considered.size(); ++i) {
        INFO("candidate " << i);
        CHECK(x.considered[i].format == y.considered[i].format);
        CHECK(x.considered[i].params == y.considered[i].params);
        CHECK(x.considered[i].score == y.considered[i].score);
      }
      CHECK(x.format == y.format);
    }
}
