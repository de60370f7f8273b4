// DeviceBuffer, the one owner of device memory: allocates only for nonzero sizes, frees exactly
// once, moves ownership, passes allocation errors through unchanged and never throws a failed free.
#include <catch2/catch.hpp>
#include <cstdlib>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "core/log.hpp"
#include "runtime/device_buffer.hpp"

namespace {

using namespace spmvjit;

// Device memory that is malloc'd and counted; nothing else of a backend works.
class MemoryBackend : public Backend {
 public:
  BackendKind kind() const override { return BackendKind::cuda; }
  const TargetInfo& target() const override { return target_; }
  std::string compiler_version() const override { return "memory-test"; }
  std::vector<std::string> compile_options(const KernelSpec&) const override { return {}; }
  std::vector<char> compile(const KernelSource&) override { unused(); }
  std::shared_ptr<LoadedModule> load(const std::vector<char>&, const std::string&) override { unused(); }
  std::unique_ptr<Executor> make_executor(int) override { unused(); }
  void* alloc(size_t bytes) override {
    ++allocs;
    if (fail_alloc)
      fail(SPMV_STATUS_OUT_OF_MEMORY, "test: cannot allocate " + std::to_string(bytes) + " bytes");
    void* p = std::malloc(bytes);
    live[p] = bytes;
    return p;
  }
  void free(void* p) override {
    ++frees;
    if (!p || live.erase(p) != 1) ++bad_frees;
    std::free(p);
    if (fail_free) fail(SPMV_STATUS_EXECUTION_FAILED, "test: the context is gone");
  }
  void upload(void*, const void*, size_t) override {}
  void download(void*, const void*, size_t) override {}
  bool is_host() const override { return false; }

  int allocs = 0, frees = 0, bad_frees = 0;
  bool fail_alloc = false, fail_free = false;
  std::map<void*, size_t> live;

 private:
  [[noreturn]] static void unused() { fail(SPMV_STATUS_INTERNAL_ERROR, "test: not a real backend"); }
  TargetInfo target_;
};

}  // namespace

TEST_CASE("device buffer: zero bytes hold nothing and allocate nothing", "[device_buffer]") {
  MemoryBackend b;
  {
    const DeviceBuffer empty;
    CHECK_FALSE(empty);
    CHECK(empty.get() == nullptr);
    CHECK(empty.bytes() == 0);
    const DeviceBuffer zero(b, 0);
    CHECK_FALSE(zero);
    CHECK(zero.get() == nullptr);
    CHECK(zero.bytes() == 0);
  }
  CHECK(b.allocs == 0);
  CHECK(b.frees == 0);
}

TEST_CASE("device buffer: frees once, when its one owner goes", "[device_buffer]") {
  MemoryBackend b;
  {
    DeviceBuffer a(b, 64);
    REQUIRE(a);
    CHECK(a.bytes() == 64);
    CHECK(a.as<double>() == static_cast<double*>(a.get()));
    CHECK(b.live.count(a.get()) == 1);

    // Moving hands the memory over: the source holds nothing and frees nothing.
    void* p = a.get();
    DeviceBuffer c(std::move(a));
    CHECK(c.get() == p);
    CHECK(c.bytes() == 64);
    CHECK_FALSE(a);  // NOLINT(bugprone-use-after-move): the moved-from state is specified
    CHECK(a.bytes() == 0);

    // Assigning over a buffer frees what it held at once, not whenever the source goes.
    DeviceBuffer d(b, 32);
    d = std::move(c);
    CHECK(b.frees == 1);
    CHECK(d.get() == p);
    CHECK(b.live.size() == 1);

    DeviceBuffer& alias = d;
    d = std::move(alias);  // self-move keeps the memory
    CHECK(d.get() == p);
    CHECK(b.frees == 1);

    d.reset();
    CHECK_FALSE(d);
    CHECK(b.frees == 2);
    d.reset();  // twice is harmless
    CHECK(b.frees == 2);

    std::vector<DeviceBuffer> v;
    for (int i = 0; i < 10; ++i) v.emplace_back(b, size_t(8 + i));  // reallocation moves them
    CHECK(b.live.size() == 10);
  }
  CHECK(b.live.empty());
  CHECK(b.allocs == 12);
  CHECK(b.frees == 12);
  CHECK(b.bad_frees == 0);
}

TEST_CASE("device buffer: allocation errors pass through unchanged", "[device_buffer]") {
  MemoryBackend b;
  b.fail_alloc = true;
  try {
    DeviceBuffer d(b, size_t(1) << 40);
    FAIL("the allocation was made to fail");
  } catch (const Error& e) {
    CHECK(e.status() == SPMV_STATUS_OUT_OF_MEMORY);
    CHECK(std::string(e.what()).find("cannot allocate " + std::to_string(size_t(1) << 40) + " bytes") !=
          std::string::npos);
  }
  CHECK(b.frees == 0);
}

TEST_CASE("device buffer: a failed free is logged, never thrown", "[device_buffer]") {
  MemoryBackend b;
  static std::vector<std::string> logged;
  logged.clear();
  configure_logging(
      SPMV_LOG_WARN, [](int, const char* m, void*) { logged.emplace_back(m); }, nullptr);
  b.fail_free = true;
  CHECK_NOTHROW([&] { DeviceBuffer d(b, 16); }());
  CHECK(b.frees == 1);
  CHECK(b.bad_frees == 0);
  if (log_enabled(SPMV_LOG_WARN)) {  // $SPMVJIT_LOG_LEVEL may silence it
    REQUIRE(logged.size() == 1);
    CHECK(logged[0].find("freeing 16 bytes of device memory failed") != std::string::npos);
    CHECK(logged[0].find("the context is gone") != std::string::npos);
  }
  configure_logging(SPMV_LOG_WARN, nullptr, nullptr);
}
