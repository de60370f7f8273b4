// warmup_kernels on a stand-in compiler: each spec compiled exactly once on the threads asked
// for, progress counted to the end, the first failure named and the rest not started.
#include <catch2/catch.hpp>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include "../test_support.hpp"
#include "core/parallel.hpp"
#include "core/private_file.hpp"
#include "engine/device_plan.hpp"
#include "engine/warmup.hpp"
#include "runtime/cache/kernel_cache.hpp"

namespace spmvjit {
namespace {

// Compiles in 1 ms to a binary naming its source; counts compiles per source and the most that
// ran at once. `fail_name`: the source (KernelSource::text) whose compile throws.
class FakeCompiler final : public Backend {
 public:
  explicit FakeCompiler(std::string version) : version_(std::move(version)) {
    info_.backend = BackendKind::cpu;
    info_.target = "fake-warmup-target";
  }
  BackendKind kind() const override { return BackendKind::cpu; }
  const TargetInfo& target() const override { return info_; }
  std::string compiler_version() const override { return version_; }
  std::vector<std::string> compile_options(const KernelSpec&) const override { return {"-fake"}; }
  std::vector<char> compile(const KernelSource& src) override {
    const int now = ++running_;
    for (int m = max_running_; now > m && !max_running_.compare_exchange_weak(m, now);) {
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    {
      std::lock_guard lock(mu_);
      ++compiles_[src.text];
    }
    --running_;
    if (!fail_text.empty() && src.text == fail_text)
      fail(SPMV_STATUS_COMPILE_FAILED, "fake compiler refuses it");
    return std::vector<char>(src.name.begin(), src.name.end());
  }
  std::shared_ptr<LoadedModule> load(const std::vector<char>&, const std::string&) override {
    return nullptr;
  }
  std::unique_ptr<Executor> make_executor(int) override { return nullptr; }
  void* alloc(size_t) override { return nullptr; }
  void free(void*) override {}
  void upload(void*, const void*, size_t) override {}
  void download(void*, const void*, size_t) override {}
  bool is_host() const override { return true; }

  std::map<std::string, int> compiles() {
    std::lock_guard lock(mu_);
    return compiles_;
  }
  int max_running() const { return max_running_; }
  std::string fail_text;

 private:
  TargetInfo info_;
  std::string version_;
  std::mutex mu_;
  std::map<std::string, int> compiles_;
  std::atomic<int> running_{0}, max_running_{0};
};

std::string unique_version() {
  return "fake compiler " + std::to_string(::getpid()) + " " +
         std::to_string(std::chrono::steady_clock::now().time_since_epoch().count());
}

int bin_files(const std::string& dir) {
  int n = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir)) n += e.path().extension() == ".bin";
  return n;
}

}  // namespace

TEST_CASE("warmup compiles every spec exactly once on the threads it is given", "[cache][warmup]") {
  test::TempDir dir;
  FakeCompiler b(unique_version());
  const std::vector<KernelSpec> specs = all_kernel_specs(b.target());
  REQUIRE(specs.size() > 100);
  std::vector<int> seen;
  std::mutex mu;
  const int n = warmup_kernels(
      b, dir.path(),
      [&](int done, int total) {
        std::lock_guard lock(mu);  // calls come one at a time; the lock would show otherwise (TSan)
        CHECK(total == int(specs.size()));
        seen.push_back(done);
      },
      4);
  CHECK(n == int(specs.size()));
  // Progress: 1, 2, ..., total, each once, in order.
  REQUIRE(seen.size() == specs.size());
  for (size_t i = 0; i < seen.size(); ++i) CHECK(seen[i] == int(i) + 1);
  // Each distinct source compiled once, and one file per cache key.
  std::map<std::string, int> expected;
  std::set<std::string> keys;
  for (const KernelSpec& s : specs) {
    const KernelSource src = generate_source_for(b, s);
    ++expected[src.text];
    keys.insert(cache_key(s, src, b.compiler_version()));
  }
  const auto compiles = b.compiles();
  CHECK(compiles.size() == expected.size());
  for (const auto& [text, count] : compiles) CHECK(count == 1);
  CHECK(bin_files(dir.path()) == int(keys.size()));
  CHECK(b.max_running() == 4);  // 1 ms compiles on 4 threads overlap on any machine

  // Again: everything is on disk, nothing compiles; the default thread count is the usable CPUs.
  FakeCompiler again(b.compiler_version());
  CHECK(warmup_kernels(again, dir.path()) == int(specs.size()));
  CHECK(again.compiles().empty());
  CHECK(process_threads() >= 1);
}

TEST_CASE("warmup reports the first failure with its spec and starts nothing after it", "[cache][warmup]") {
  test::TempDir dir;
  FakeCompiler b(unique_version());
  const std::vector<KernelSpec> specs = all_kernel_specs(b.target());
  REQUIRE(specs.size() > 100);
  const KernelSpec& bad = specs[3];
  b.fail_text = generate_source_for(b, bad).text;
  int last = 0;
  try {
    warmup_kernels(
        b, dir.path(), [&](int done, int) { last = done; }, 2);
    FAIL("warmup succeeded with a failing compile");
  } catch (const Error& e) {
    CHECK(e.status() == SPMV_STATUS_COMPILE_FAILED);
    const std::string what = e.what();
    CHECK(what.find("warmup: kernel " + bad.serialize() + ": fake compiler refuses it") == 0);
  }
  // The other thread finished what it had taken and took nothing more (a bound with room for a
  // loaded machine: the whole list is 1 ms compiles of a thousand specs and more).
  size_t compiled = 0;
  for (const auto& [text, count] : b.compiles()) compiled += size_t(count);
  CHECK(compiled < specs.size() / 2);
  CHECK(last < int(specs.size()));

  // A cache directory that cannot be used fails once, before any compile.
  FakeCompiler c(unique_version());
  const std::string file = dir.path() + "/not-a-dir";
  std::ofstream(file) << "x";
  try {
    warmup_kernels(c, file, {}, 2);
    FAIL("warmup into a file succeeded");
  } catch (const Error& e) {
    CHECK(e.status() == SPMV_STATUS_IO_ERROR);
    CHECK(std::string(e.what()).find("cannot cache kernels on disk") != std::string::npos);
  }
  CHECK(c.compiles().empty());
  CHECK_THROWS_AS(warmup_kernels(c, "", {}, 2), Error);

  // A disk that fills up: the kernel whose entry could not be written is the one named, never
  // counted as cached.
  test::TempDir full;
  FakeCompiler d(unique_version());
  const WriteFunction saved = set_write_function_for_tests([](int, const void*, size_t) -> ssize_t {
    errno = ENOSPC;
    return -1;
  });
  std::string message;
  last = 0;
  try {
    warmup_kernels(
        d, full.path(), [&](int done, int) { last = done; }, 2);
  } catch (const Error& e) {
    CHECK(e.status() == SPMV_STATUS_IO_ERROR);
    message = e.what();
  }
  set_write_function_for_tests(saved);
  INFO(message);
  CHECK(message.find("warmup: kernel backend=cpu;target=fake-warmup-target;") == 0);
  CHECK(message.find(std::strerror(ENOSPC)) != std::string::npos);
  CHECK(last == 0);
  CHECK(bin_files(full.path()) == 0);
}

}  // namespace spmvjit

namespace spmvjit {

// Hidden (run with "[stress]"): the real CPU compiler on 8 threads whatever the machine, for
// clang/LLVM state shared between concurrent compiles (run it under TSan or ASan too). Every spec
// compiles, and the objects match a one-thread warm-up's byte for byte.
TEST_CASE("warmup on the CPU backend with 8 threads matches one thread", "[.][stress][warmup]") {
  if (!test::require_cpu_backend()) return;
  Backend& b = get_backend(BackendKind::cpu, 0);
  test::TempDir many, one;
  const int n = warmup_kernels(b, many.path(), {}, 8);
  CHECK(n == int(all_kernel_specs(b.target()).size()));
  CHECK(warmup_kernels(b, one.path(), {}, 1) == n);
  std::set<std::string> files;
  for (const auto& e : std::filesystem::directory_iterator(one.path()))
    files.insert(e.path().filename().string());
  CHECK(bin_files(many.path()) == int(files.size()));
  for (const std::string& f : files) {
    std::ifstream a(many.path() + "/" + f, std::ios::binary), c(one.path() + "/" + f, std::ios::binary);
    const std::string x((std::istreambuf_iterator<char>(a)), {}), y((std::istreambuf_iterator<char>(c)), {});
    INFO(f);
    CHECK((!x.empty() && x == y));
  }
}

}  // namespace spmvjit
