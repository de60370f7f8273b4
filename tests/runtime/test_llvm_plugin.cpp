// The CPU backend's LLVM plugin: where it is searched, and what a missing or broken one reports.
#include <catch2/catch.hpp>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "tests/test_support.hpp"

#ifdef SPMVJIT_WITH_CPU
#include "runtime/backend.hpp"
#include "runtime/cpu/llvm_plugin.hpp"

namespace {

using namespace spmvjit;

std::string dir_of(const std::string& path) { return path.substr(0, path.rfind('/')); }

TEST_CASE("cpu plugin: found in the build tree, after $SPMVJIT_PLUGIN_DIR and the program's folder",
          "[cpu][plugin]") {
  const LlvmPlugin& plugin = llvm_plugin();
  REQUIRE(plugin.api);
  CHECK(plugin.error.empty());
  CHECK(backend_available(BackendKind::cpu, 0));
  CHECK(std::string(plugin.api->clang_version).find("clang") != std::string::npos);
  const std::string found = dir_of(plugin.path);

  test::TempDir env;
  ::setenv("SPMVJIT_PLUGIN_DIR", env.path().c_str(), 1);
  const std::vector<std::string> dirs = llvm_plugin_dirs();
  ::unsetenv("SPMVJIT_PLUGIN_DIR");
  // $SPMVJIT_PLUGIN_DIR, this test program's folder (build/tests), the build's output folder.
  REQUIRE(dirs.size() == 3);
  CHECK(dirs[0] == env.path());
  CHECK(dirs[1].size() > 6);
  CHECK(dirs[1].substr(dirs[1].size() - 6) == "/tests");
  CHECK(dirs[2] == found);
}

TEST_CASE("cpu plugin: a broken or missing plugin names every place tried, the next one loads",
          "[cpu][plugin]") {
  test::TempDir broken, empty;
  std::ofstream(broken.path() + "/" SPMVJIT_LLVM_PLUGIN_FILE) << "not a shared object";
  const LlvmPlugin none = load_llvm_plugin({broken.path(), empty.path()});
  CHECK_FALSE(none.api);
  INFO(none.error);
  CHECK(none.error.find(SPMVJIT_LLVM_PLUGIN_FILE) != std::string::npos);
  CHECK(none.error.find(broken.path() + "/" SPMVJIT_LLVM_PLUGIN_FILE ": ") != std::string::npos);
  CHECK(none.error.find(empty.path() + "/" SPMVJIT_LLVM_PLUGIN_FILE ": No such file") != std::string::npos);

  const std::string good = dir_of(llvm_plugin().path);
  const LlvmPlugin next = load_llvm_plugin({empty.path(), broken.path(), good});
  REQUIRE(next.api);
  CHECK(next.api == llvm_plugin().api);  // the same file: dlopen hands back the loaded plugin
  CHECK(next.path == good + "/" SPMVJIT_LLVM_PLUGIN_FILE);
}

}  // namespace
#endif
