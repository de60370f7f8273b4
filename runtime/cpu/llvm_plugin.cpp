// Loads libspmvjit_llvm.so (clang + ORC behind a C table) with dlopen: LLVM stays out of
// libspmvjit.so, and a missing plugin makes the CPU backend unavailable instead of the library.
#include "runtime/cpu/llvm_plugin.hpp"

#include <dlfcn.h>
#include <link.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>

#include "core/log.hpp"

#ifndef SPMVJIT_PLUGIN_BUILD_DIR
#define SPMVJIT_PLUGIN_BUILD_DIR ""
#endif
#ifndef SPMVJIT_PLUGIN_INSTALL_DIR
#define SPMVJIT_PLUGIN_INSTALL_DIR ""
#endif

namespace spmvjit {
namespace {

std::string real_path(const std::string& path) {
  char* r = ::realpath(path.c_str(), nullptr);
  if (!r) return path;
  std::string s(r);
  std::free(r);
  return s;
}

std::string parent(const std::string& file) {
  const size_t slash = file.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : file.substr(0, slash);
}

// The folder of the shared object or program this function was linked into.
std::string own_module_dir() {
  Dl_info info;
  link_map* map = nullptr;
  if (!::dladdr1(reinterpret_cast<void*>(&own_module_dir), &info, reinterpret_cast<void**>(&map),
                 RTLD_DL_LINKMAP) ||
      !map)
    return {};
  // The main program's link map has an empty name.
  const std::string file = map->l_name && *map->l_name ? map->l_name : "/proc/self/exe";
  return parent(real_path(file));
}

bool inside(const std::string& dir, const std::string& root) {
  return !root.empty() && dir.compare(0, root.size(), root) == 0 &&
         (dir.size() == root.size() || dir[root.size()] == '/');
}

}  // namespace

LlvmPlugin load_llvm_plugin(const std::vector<std::string>& dirs) {
  LlvmPlugin p;
  std::string tried;
  for (const std::string& dir : dirs) {
    const std::string path = dir + "/" SPMVJIT_LLVM_PLUGIN_FILE;
    if (::access(path.c_str(), F_OK) != 0) {
      tried += "\n  " + path + ": " + std::strerror(errno);
      continue;
    }
    const auto t0 = std::chrono::steady_clock::now();
    void* handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
      const char* why = ::dlerror();
      tried += "\n  " + path + ": " + (why ? why : "dlopen failed");
      continue;
    }
    using Getter = const spmvjit_llvm_toolchain_v1_t* (*)();
    auto get = reinterpret_cast<Getter>(::dlsym(handle, SPMVJIT_LLVM_TOOLCHAIN_SYMBOL));
    const spmvjit_llvm_toolchain_v1_t* api = get ? get() : nullptr;
    if (!get) {
      tried += "\n  " + path + ": no " SPMVJIT_LLVM_TOOLCHAIN_SYMBOL " (a plugin of another spmvjit version)";
    } else if (!api) {
      tried += "\n  " + path + ": LLVM could not be initialized for this host";
    } else if (api->abi_version != SPMVJIT_LLVM_TOOLCHAIN_ABI_VERSION || api->size < sizeof(*api)) {
      tried += "\n  " + path + ": ABI version " + std::to_string(api->abi_version) + ", size " +
               std::to_string(api->size) + " (a plugin of another spmvjit version)";
      api = nullptr;
    }
    if (!api) {
      ::dlclose(handle);
      continue;
    }
    p.api = api;
    p.path = path;
    log_debug(
        "CPU backend: LLVM plugin " + path + " (" + api->clang_version + ") loaded in " +
        std::to_string(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() * 1e3) +
        " ms");
    return p;
  }
  p.error = "the CPU backend needs its LLVM plugin " SPMVJIT_LLVM_PLUGIN_FILE
            ", which was not found or did not load (SPMVJIT_PLUGIN_DIR names its folder); tried:" +
            tried;
  return p;
}

std::vector<std::string> llvm_plugin_dirs() {
  std::vector<std::string> dirs;
  auto add = [&](const std::string& d) {
    if (d.empty()) return;
    for (const auto& seen : dirs)
      if (seen == d) return;
    dirs.push_back(d);
  };
  if (const char* env = std::getenv("SPMVJIT_PLUGIN_DIR")) add(env);
  const std::string module = own_module_dir();
  add(module);
  const std::string build = SPMVJIT_PLUGIN_BUILD_DIR;
  add(inside(module, real_path(build)) ? build : std::string(SPMVJIT_PLUGIN_INSTALL_DIR));
  return dirs;
}

const LlvmPlugin& llvm_plugin() {
  static const LlvmPlugin plugin = load_llvm_plugin(llvm_plugin_dirs());
  return plugin;
}

}  // namespace spmvjit
