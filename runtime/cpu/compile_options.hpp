// The clang options of a CPU kernel for one target, the host's or the kernel bundle's portable
// one (runtime/cpu/kernel_bundle.hpp): part of every CPU kernel's cache key.
#pragma once

#include <string>
#include <vector>

#include "codegen/kernel_spec.hpp"

namespace spmvjit {

struct CpuCompileTarget {
  std::string triple;                 // x86_64-pc-linux-gnu
  std::string cpu;                    // LLVM's processor name: znver4, x86-64-v3
  std::vector<std::string> features;  // "+avx2", "-avx512f", ...: none takes the processor's own
};

// cc1 options for `spec`: the target, the optimization level (-O1 for the run-time epilogue
// variant, a plan's first tier, unless `first_tier_level` says otherwise; -O3 for the
// specialized module) and the language and floating-point options every CPU kernel shares.
std::vector<std::string> cpu_compile_options(const CpuCompileTarget& target, const KernelSpec& spec,
                                             const char* first_tier_level = "-O1");

}  // namespace spmvjit
