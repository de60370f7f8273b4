// The CPU backend's built-in loader for kernel objects, and the host identity that lets a process
// with a warm disk cache run without loading LLVM at all.
#include <sched.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "tests/test_support.hpp"

#ifdef SPMVJIT_WITH_CPU
#include "runtime/backend.hpp"
#include "runtime/cpu/elf_loader.hpp"
#include "runtime/cpu/host_identity.hpp"
#include "runtime/cpu/llvm_plugin.hpp"

namespace {

using namespace spmvjit;

// Compiles `text` with the CPU backend's own options (the kernels' exact code model).
std::vector<char> compile_cpu(const std::string& text) {
  Backend& b = get_backend(BackendKind::cpu, 0);
  KernelSource src{"test.cpp", text, b.compile_options(KernelSpec{})};
  return b.compile(src);
}

// Constants (.rodata.cst*), calls to memcpy and memset through stubs, a call between functions of
// the object, a writable global (.data) and a zeroed one (.bss).
const char* const kSource = R"(
extern "C" void* memcpy(void*, const void*, unsigned long);
extern "C" void* memset(void*, int, unsigned long);
static double table[8] = {1.5, -2.25, 3.125, 4.0, 0.5, 6.75, -7.0, 8.5};
int counter = 41;
long zeroed[64];
__attribute__((noinline)) static double scale(double v, int i) { return v * table[i & 7] + 0.1; }
extern "C" double spmvjit_test_sum(const double* x, int n, double* tmp) {
  memcpy(tmp, x, sizeof(double) * (unsigned long)n);
  memset(zeroed, 0, sizeof zeroed);
  double s = 0;
  for (int i = 0; i < n; ++i) s += scale(tmp[i], i);
  return s + ++counter + zeroed[3];
}
)";

double expected_sum(const std::vector<double>& x, int counter) {
  const double table[8] = {1.5, -2.25, 3.125, 4.0, 0.5, 6.75, -7.0, 8.5};
  double s = 0;
  for (size_t i = 0; i < x.size(); ++i) s += x[i] * table[i & 7] + 0.1;
  return s + counter;
}

TEST_CASE("elf loader: places, relocates and runs a compiled object", "[cpu][loader]") {
  if (!test::require_cpu_backend()) return;
  const std::vector<char> object = compile_cpu(kSource);
  std::string why;
  auto image = load_elf_object(object.data(), object.size(), &why);
  INFO(why);
  REQUIRE(image);
  using Fn = double (*)(const double*, int, double*);
  auto fn = reinterpret_cast<Fn>(image->symbol("spmvjit_test_sum"));
  REQUIRE(fn);
  CHECK(image->symbol("counter"));
  CHECK_FALSE(image->symbol("scale"));  // static: not exported
  CHECK_FALSE(image->symbol("no_such_symbol"));
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> u(-1, 1);
  for (int n : {0, 1, 7, 100, 1000}) {
    std::vector<double> x(static_cast<size_t>(n)), tmp(static_cast<size_t>(n) + 1, -1.0);
    for (double& v : x) v = u(rng);
    static int counter = 41;
    const double got = fn(x.data(), n, tmp.data());
    CHECK(got == Approx(expected_sum(x, ++counter)).epsilon(1e-12));
    if (n > 0) CHECK(std::memcmp(tmp.data(), x.data(), sizeof(double) * size_t(n)) == 0);
  }
  // Two images of one object are independent (each has its own writable data).
  auto second = load_elf_object(object.data(), object.size(), &why);
  REQUIRE(second);
  std::vector<double> x = {1.0}, tmp(2);
  CHECK(reinterpret_cast<Fn>(second->symbol("spmvjit_test_sum"))(x.data(), 1, tmp.data()) ==
        Approx(1.0 * 1.5 + 0.1 + 42));
}

TEST_CASE("elf loader: refuses what it cannot load, with the reason, and the backend falls back to ORC",
          "[cpu][loader]") {
  if (!test::require_cpu_backend()) return;
  std::string why;
  SECTION("thread-local storage") {
    const std::vector<char> object =
        compile_cpu("thread_local int t; extern \"C\" int spmvjit_test_tls() { return ++t; }");
    CHECK_FALSE(load_elf_object(object.data(), object.size(), &why));
    CHECK(why.find("thread-local") != std::string::npos);
    // The backend loads it anyway, through LLVM's ORC JIT.
    auto m = get_backend(BackendKind::cpu, 0).load(object, "tls-test");
    auto fn = reinterpret_cast<int (*)()>(m->entry("spmvjit_test_tls"));
    CHECK(fn() == 1);
    CHECK(fn() == 2);
  }
  SECTION("a symbol the process does not define") {
    const std::vector<char> object = compile_cpu(
        "extern \"C\" int spmvjit_no_such_function(int);"
        "extern \"C\" int spmvjit_test_ext(int v) { return spmvjit_no_such_function(v) + 1; }");
    CHECK_FALSE(load_elf_object(object.data(), object.size(), &why));
    CHECK(why == "undefined symbol spmvjit_no_such_function is not in the process");
    // ORC cannot resolve it either: the load fails (the cache would recompile), nothing crashes.
    CHECK_THROWS_AS(get_backend(BackendKind::cpu, 0).load(object, "ext-test"), Error);
  }
  SECTION("static constructors") {
    const std::vector<char> object = compile_cpu(
        "volatile int seed = 3; int g = seed + 1; extern \"C\" int spmvjit_test_g() { return g; }");
    CHECK_FALSE(load_elf_object(object.data(), object.size(), &why));
    CHECK(why.find("constructors") != std::string::npos);
  }
  SECTION("not ELF, empty, another machine") {
    const char text[] = "this is not an object file at all, but it is long enough to be a header.....";
    CHECK_FALSE(load_elf_object(text, sizeof text, &why));
    CHECK(why == "not an ELF file");
    CHECK_FALSE(load_elf_object(text, 0, &why));
    CHECK(why == "shorter than an ELF header");
    std::vector<char> object = compile_cpu(kSource);
    object[18] = 0xb7;  // e_machine = EM_AARCH64
    object[19] = 0;
    CHECK_FALSE(load_elf_object(object.data(), object.size(), &why));
    CHECK(why == "not an x86-64 relocatable object");
  }
}

TEST_CASE("elf loader: truncated and corrupted objects are refused or loaded, never read out of bounds",
          "[cpu][loader]") {
  if (!test::require_cpu_backend()) return;
  const std::vector<char> object = compile_cpu(kSource);
  std::string why;
  int refused = 0;
  // Every truncation: a copy of exactly that size, so a read past it is caught by ASan.
  for (size_t n = 0; n < object.size(); n += (n < 256 ? 1 : 13)) {
    std::vector<char> cut(object.begin(), object.begin() + std::ptrdiff_t(n));
    refused += !load_elf_object(cut.data(), cut.size(), &why);
  }
  CHECK(refused > 0);
  // Random byte flips in the headers, section headers, symbols and relocations.
  std::mt19937 rng(11);
  for (int trial = 0; trial < 3000; ++trial) {
    std::vector<char> bad = object;
    for (int k = 0; k < 1 + trial % 4; ++k) bad[rng() % bad.size()] ^= char(1 << (rng() % 8));
    auto image = load_elf_object(bad.data(), bad.size(), &why);  // must not crash; may load
    (void)image;
  }
}

TEST_CASE("host identity: one fingerprint on every CPU, remembered in the cache folder, checked",
          "[cpu][loader]") {
  if (!test::require_cpu_backend()) return;
  const std::string plugin = find_llvm_plugin_file();
  REQUIRE(!plugin.empty());
  const std::string fp = host_fingerprint(plugin);
#if defined(__x86_64__)
  REQUIRE(fp.size() == 32);
  // Every CPU of the affinity mask gives the same fingerprint (APIC ids are masked out).
  cpu_set_t set;
  REQUIRE(::sched_getaffinity(0, sizeof set, &set) == 0);
  for (int c = 0; c < CPU_SETSIZE; ++c) {
    if (!CPU_ISSET(c, &set)) continue;
    std::string there;
    std::thread([&] {
      cpu_set_t one;
      CPU_ZERO(&one);
      CPU_SET(c, &one);
      ::sched_setaffinity(0, sizeof one, &one);
      there = host_fingerprint(plugin);
    }).join();
    CHECK(there == fp);
  }
#endif
  CHECK(host_fingerprint("") == "");
  CHECK(host_fingerprint("/no/such/plugin.so") == "");

  test::TempDir dir;
  HostIdentity id{"x86_64-pc-linux-gnu", "testcpu", "+avx,-avx512f", "clang version 0 (test)"}, got;
  CHECK_FALSE(read_host_identity(dir.path(), "0123", &got));
  write_host_identity(dir.path(), "0123", id);
  REQUIRE(read_host_identity(dir.path(), "0123", &got));
  CHECK(got.triple == id.triple);
  CHECK(got.cpu == id.cpu);
  CHECK(got.features == id.features);
  CHECK(got.clang_version == id.clang_version);
  CHECK_FALSE(read_host_identity(dir.path(), "0124", &got));  // another host
  CHECK_FALSE(read_host_identity("", "0123", &got));          // memory-only cache
  // A flipped byte fails the entry's checksum: not used.
  for (const auto& e : std::filesystem::directory_iterator(dir.path())) {
    std::string bytes;
    {
      std::ifstream in(e.path(), std::ios::binary);
      bytes.assign(std::istreambuf_iterator<char>(in), {});
    }
    REQUIRE(bytes.size() > 3);
    bytes[bytes.size() - 3] ^= 1;
    std::ofstream(e.path(), std::ios::binary | std::ios::trunc) << bytes;
  }
  CHECK_FALSE(read_host_identity(dir.path(), "0123", &got));
}

// A fresh process plans on the CPU with an empty cache folder (compiles: LLVM loaded, the host
// remembered), then again with the same folder: the second finds host and kernels on disk and
// never loads the plugin.
TEST_CASE("cpu: a warm cache plans and runs without loading LLVM", "[cpu][loader][cli]") {
#ifdef SPMVJIT_CLI_PATH
  test::TempDir dir;
  const std::string cmd = std::string("SPMVJIT_CACHE_DIR=") + dir.path() + " SPMVJIT_LOG_LEVEL=debug " +
                          SPMVJIT_CLI_PATH + " run --gen poisson2d:40 --backend cpu --iters 3 2>&1";
  std::string cold, warm;
  REQUIRE(test::run_command(cmd, &cold) == 0);
  INFO(cold);
  CHECK(cold.find("LLVM plugin") != std::string::npos);
  REQUIRE(test::run_command(cmd, &warm) == 0);
  INFO(warm);
  CHECK(warm.find("LLVM plugin") == std::string::npos);
  CHECK(warm.find("as remembered in " + dir.path()) != std::string::npos);
  CHECK(warm.find("loaded by ORC") == std::string::npos);
  // With ORC forced, the same run loads the plugin and still verifies.
  std::string orc;
  REQUIRE(test::run_command("SPMVJIT_CPU_LOADER=orc " + cmd, &orc) == 0);
  INFO(orc);
  CHECK(orc.find("loaded by ORC: forced by SPMVJIT_CPU_LOADER=orc") != std::string::npos);
#else
  SUCCEED("no CLI in this build");
#endif
}

}  // namespace
#endif
