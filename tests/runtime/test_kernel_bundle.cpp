// The CPU kernel bundle (runtime/cpu/kernel_bundle.hpp): its file checked before use, the build's
// bundle holding every first tier a plan may ask for, and plans starting on it.
#include <sys/stat.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "tests/test_support.hpp"

#ifdef SPMVJIT_WITH_CPU
#include "engine/device_plan.hpp"
#include "engine/warmup.hpp"
#include "runtime/cpu/kernel_bundle.hpp"

namespace {

using namespace spmvjit;

std::string read_all(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}
void write_all(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
  ::chmod(path.c_str(), 0600);
}

// Whether this host runs the bundle's x86-64-v3 code (what the backend checks through LLVM's
// feature list, here through the compiler's).
bool host_has_portable_features() {
#if defined(__x86_64__)
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && __builtin_cpu_supports("bmi2") &&
         __builtin_cpu_supports("avx");
#else
  return false;
#endif
}

TEST_CASE("kernel bundle: written, mapped, and refused whole or per entry when damaged", "[cpu][bundle]") {
  test::TempDir dir;
  const std::string path = dir.path() + "/bundle.bin";
  std::vector<BundleEntry> entries = {
      {"bbbb", {'o', 'n', 'e'}}, {"aaaa", std::vector<char>(1000, 'x')}, {"cc", {}}};
  write_kernel_bundle(path, "clang test", entries);
  std::string why;
  auto b = KernelBundle::open(path, &why);
  REQUIRE(b);
  CHECK(b->size() == 3);
  CHECK(b->compiler() == "clang test");
  std::string_view obj;
  REQUIRE(b->find("bbbb", &obj, &why));
  CHECK(obj == "one");
  REQUIRE(b->find("aaaa", &obj, &why));
  CHECK(obj == std::string(1000, 'x'));
  REQUIRE(b->find("cc", &obj, &why));
  CHECK(obj.empty());
  CHECK_FALSE(b->find("dddd", &obj, &why));
  CHECK(why == "absent");
  b.reset();

  const std::string good = read_all(path);
  auto refused = [&](const std::string& bytes) {
    write_all(path, bytes);
    std::string w;
    auto r = KernelBundle::open(path, &w);
    INFO("why: " << w);
    CHECK(r == nullptr);
    CHECK(w != "");
    return w;
  };
  // The header, the compiler and the index are checksummed; every length is bounded by the file.
  CHECK(refused(good.substr(0, 20)).find("size") != std::string::npos);
  CHECK(refused("XXXXXXXX" + good.substr(8)).find("magic") != std::string::npos);
  for (size_t at :
       {size_t(8), size_t(12), size_t(16), size_t(20), size_t(24), size_t(32), size_t(45), size_t(60)}) {
    std::string bad = good;
    bad[at] ^= 0x5a;
    INFO("byte " << at);
    refused(bad);
  }
  CHECK(refused(good.substr(0, good.size() - 1000)).find("out of bounds") != std::string::npos);
  // An object's byte: the bundle opens, that entry is refused, the others are served.
  {
    std::string bad = good;
    bad[good.find(std::string(100, 'x')) + 500] ^= 1;  // inside "aaaa"'s object
    write_all(path, bad);
    auto r = KernelBundle::open(path, &why);
    REQUIRE(r);
    int damaged = 0;
    for (const char* k : {"aaaa", "bbbb", "cc"})
      damaged += !r->find(k, &obj, &why) && why.find("checksum") != std::string::npos;
    CHECK(damaged == 1);
  }
  // A file others may write holds code anyone could plant: refused; so is what is not a file.
  write_all(path, good);
  ::chmod(path.c_str(), 0620);
  CHECK(KernelBundle::open(path, &why) == nullptr);
  CHECK(why.find("writable") != std::string::npos);
  ::chmod(path.c_str(), 0644);
  CHECK(KernelBundle::open(path, &why) != nullptr);
  CHECK(KernelBundle::open(dir.path(), &why) == nullptr);
  CHECK(KernelBundle::open(dir.path() + "/none", &why) == nullptr);
  CHECK(why == "absent");
}

TEST_CASE("kernel bundle: the portable target runs on hosts with its features only", "[cpu][bundle]") {
  std::vector<std::string> v3 = {"+avx",  "+avx2", "+bmi",  "+bmi2",   "+cmov",   "+cx16",   "+cx8",
                                 "+f16c", "+fma",  "+fxsr", "+lzcnt",  "+movbe",  "+popcnt", "+sahf",
                                 "+sse",  "+sse2", "+sse3", "+sse4.1", "+sse4.2", "+ssse3",  "+xsave"};
  CHECK(host_runs_bundle("x86_64-pc-linux-gnu", v3));
  CHECK(host_runs_bundle("x86_64-unknown-linux-gnu", v3));
  CHECK_FALSE(host_runs_bundle("aarch64-unknown-linux-gnu", v3));
  CHECK_FALSE(host_runs_bundle("x86_64-apple-darwin", v3));
  for (size_t drop = 0; drop < v3.size(); ++drop) {
    auto f = v3;
    f[drop][0] = '-';  // LLVM lists a missing feature with a minus
    INFO(v3[drop]);
    CHECK_FALSE(host_runs_bundle("x86_64-pc-linux-gnu", f));
  }
  // The stand-in differs from the host's spec in its target only, so its key is the host's own
  // neither for another compiler nor for another host.
  KernelSpec s =
      spec_for(get_backend(BackendKind::cpu, 0).target(), "csr", "csr", IndexType::i32, ValueType::f64);
  s.constants["RUNTIME_EPILOGUE"] = 1;
  const BundledKernel k = bundled_kernel(s, "clang X");
  CHECK(k.spec.target == bundle_target_string());
  CHECK(k.key != bundled_kernel(s, "clang Y").key);
  KernelSpec other = s;
  other.target = "x86_64-pc-linux-gnu:znver9:0123";
  CHECK(bundled_kernel(other, "clang X").key == k.key);
  CHECK(std::find(k.source.options.begin(), k.source.options.end(), "x86-64-v3") != k.source.options.end());
  CHECK(std::find(k.source.options.begin(), k.source.options.end(), "-O3") != k.source.options.end());
}

TEST_CASE("kernel bundle: a rebuild compiles only the kernels it does not hold", "[cpu][bundle]") {
  Backend& cpu = get_backend(BackendKind::cpu, 0);
  std::vector<KernelSpec> specs;
  for (const char* f : {"csr", "ell", "coo"}) {
    KernelSpec s = spec_for(cpu.target(), f, f, IndexType::i32, ValueType::f64);
    s.constants["RUNTIME_EPILOGUE"] = 1;
    specs.push_back(s);
  }
  test::TempDir dir;
  const std::string path = dir.path() + "/b.bin";
  BundleBuild b = build_kernel_bundle({specs[0], specs[1]}, path, {}, 2);
  CHECK(b.kernels == 2);
  CHECK(b.compiled == 2);
  const std::string first = read_all(path);
  b = build_kernel_bundle(specs, path, {}, 2);
  CHECK(b.kernels == 3);
  CHECK(b.compiled == 1);  // coo's
  b = build_kernel_bundle({specs[2], specs[0]}, path, {}, 1);
  CHECK(b.compiled == 0);
  std::string why;
  auto bundle = KernelBundle::open(path, &why);
  REQUIRE(bundle);
  CHECK(bundle->size() == 2);  // what was asked for, not what was there
  std::string_view obj;
  CHECK_FALSE(bundle->find(bundled_kernel(specs[1], bundle->compiler()).key, &obj, &why));
  REQUIRE(bundle->find(bundled_kernel(specs[0], bundle->compiler()).key, &obj, &why));
  CHECK(first.find(std::string(obj)) != std::string::npos);  // csr's object, kept as it was
  bundle.reset();
  // A damaged bundle there is no help, and no harm: everything compiles again.
  write_all(path, "garbage");
  CHECK(build_kernel_bundle({specs[0]}, path, {}, 1).compiled == 1);
}

TEST_CASE("kernel bundle: the build's bundle holds every CPU kernel's first tier, each loadable",
          "[cpu][bundle]") {
#ifndef SPMVJIT_TEST_KERNEL_BUNDLE
  SPMVJIT_SKIP("this build makes no CPU kernel bundle (SPMVJIT_CPU_KERNEL_BUNDLE)");
#else
  std::string why;
  auto bundle = KernelBundle::open(SPMVJIT_TEST_KERNEL_BUNDLE, &why);
  INFO(why);
  REQUIRE(bundle);
  Backend& cpu = get_backend(BackendKind::cpu, 0);
  const std::vector<KernelSpec> specs = cpu_bundle_specs(cpu.target());
  CHECK(bundle->size() == specs.size());
  int missing = 0;
  for (KernelSpec s : all_kernel_specs(cpu.target())) {
    s.constants["RUNTIME_EPILOGUE"] = 1;
    std::string_view obj;
    if (!bundle->find(bundled_kernel(s, bundle->compiler()).key, &obj, &why)) {
      ++missing;
      UNSCOPED_INFO("missing: " << s.serialize() << " (" << why << ")");
    }
  }
  CHECK(missing == 0);
  // The process's own bundle is the build's (found beside the plugin), served by the backend.
  if (!host_has_portable_features()) SPMVJIT_SKIP("this host lacks x86-64-v3's features");
  REQUIRE(process_kernel_bundle() != nullptr);
  KernelSpec s;
  for (const KernelSpec& k : all_kernel_specs(cpu.target()))
    if (k.format == "sell" && k.index == IndexType::i64 && k.value == ValueType::f32) s = k;
  REQUIRE(s.format == "sell");
  s.constants["RUNTIME_EPILOGUE"] = 1;
  INFO(s.serialize());
  std::string key;
  auto mod = cpu.prebuilt(s, &key);
  REQUIRE(mod);
  CHECK(mod->entry("spmvjit_part_r") != nullptr);
  CHECK(key == bundled_kernel(s, bundle->compiler()).key);
  CHECK(cpu.prebuilt(s, &key) == mod);  // placed once per process
  s.constants["C"] = 7;                 // no such kernel: none, and nothing compiles
  CHECK(cpu.prebuilt(s, &key) == nullptr);
#endif
}

// With SPMVJIT_KERNEL_BUNDLE=0 (read once per process: a second process) a plan of a kernel in no
// cache compiles its first tier; with the bundle it starts on the bundle's.
TEST_CASE("kernel bundle: a plan whose kernel is in no cache starts on it, or compiles without it",
          "[cpu][bundle][cli]") {
#if defined(SPMVJIT_CLI_PATH) && defined(SPMVJIT_TEST_KERNEL_BUNDLE)
  if (!host_has_portable_features()) SPMVJIT_SKIP("this host lacks x86-64-v3's features");
  test::TempDir dir;
  // SPMVJIT_TIERED_COMPILE=quick: the plan keeps its first tier, so describe names it.
  const std::string cmd = std::string("SPMVJIT_CACHE_DIR=") + dir.path() +
                          "/c SPMVJIT_TIERED_COMPILE=quick " + SPMVJIT_CLI_PATH +
                          " run --gen powerlaw:2000 --backend cpu --iters 3 --describe";
  std::string with, without;
  REQUIRE(test::run_command(cmd, &with) == 0);
  INFO(with);
  CHECK(with.find("\"cache\":\"built-in\"") != std::string::npos);
  CHECK(with.find("verified yes") != std::string::npos);
  REQUIRE(test::run_command("SPMVJIT_KERNEL_BUNDLE=0 SPMVJIT_CACHE_DIR=" + dir.path() + "/d " +
                                cmd.substr(cmd.find(' ') + 1),
                            &without) == 0);
  INFO(without);
  CHECK(without.find("\"cache\":\"compiled\"") != std::string::npos);
  CHECK(without.find("verified yes") != std::string::npos);
  // A bundle named by the environment that is not one: a warning, and the plan compiles.
  write_all(dir.path() + "/bad.bin", "not a bundle at all, but long enough for a header");
  std::string bad;
  REQUIRE(test::run_command("SPMVJIT_KERNEL_BUNDLE=" + dir.path() + "/bad.bin SPMVJIT_CACHE_DIR=" +
                                dir.path() + "/e " + cmd.substr(cmd.find(' ') + 1),
                            &bad) == 0);
  INFO(bad);
  CHECK(bad.find("kernel bundle") != std::string::npos);
  CHECK(bad.find("magic") != std::string::npos);
  CHECK(bad.find("\"cache\":\"compiled\"") != std::string::npos);
#else
  SPMVJIT_SKIP("needs the command line and the build's kernel bundle");
#endif
}

}  // namespace
#endif
