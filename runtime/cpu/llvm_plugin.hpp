// Finds and loads the CPU backend's LLVM plugin (libspmvjit_llvm.so), once per process.
#pragma once

#include <string>
#include <vector>

#include "runtime/cpu/llvm_toolchain_abi.h"

namespace spmvjit {

struct LlvmPlugin {
  const spmvjit_llvm_toolchain_v1_t* api = nullptr;  // null: not found, or found but unusable
  std::string path;                                  // the file loaded
  std::string error;                                 // why api is null: every file tried and why
};

// The folders searched for the plugin, in order: $SPMVJIT_PLUGIN_DIR; the folder of the module
// that holds this code (libspmvjit.so, or a program linked with the objects); then, for code in
// the build tree, the build's output folder, else the install libdir. Never both: a build-tree
// program must not load an older installed plugin, nor an installed library a build tree's.
std::vector<std::string> llvm_plugin_dirs();

// Tries `dirs` in order: the first plugin that loads and has the expected table, or none and
// `error` naming the file and every place tried with the reason. Loaded plugins stay loaded.
LlvmPlugin load_llvm_plugin(const std::vector<std::string>& dirs);

// The plugin, loaded by the first call (thread-safe); never throws, never unloads it. Loading
// relocates libLLVM and libclang-cpp: about 100 ms, paid by the first CPU plan of a process.
const LlvmPlugin& llvm_plugin();

}  // namespace spmvjit
