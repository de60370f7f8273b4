// The HIP backend's compilers: hipRTC (ROCm's, or NVRTC on HIP's NVIDIA platform) and, for AMD
// processors hipRTC does not know, clang 19 through the CPU backend's LLVM plugin (HIP device code
// -> LLVM AMDGPU backend -> lld -> code object). Both make the same code objects from the same
// templates: hip_clang_runtime.h gives clang what hipRTC's built-in headers give the templates.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "codegen/kernel_spec.hpp"
#include "runtime/hip/hip_backend.hpp"

namespace spmvjit {

class HipCompiler {
 public:
  virtual ~HipCompiler() = default;
  // The compiler and its target, part of every cache key ("hiprtc 5.2 ... code object for gfx90a").
  virtual const std::string& version() const = 0;
  virtual std::vector<std::string> options() const = 0;
  // A code object (PTX on HIP's NVIDIA platform); throws COMPILE_FAILED with the compiler's log.
  virtual std::vector<char> compile(const KernelSource& src) const = 0;
};

// The compiler for `t`: with `automatic`, hipRTC where it knows the processor, else clang. Throws
// UNSUPPORTED saying why neither can (hipRTC absent or too old, no LLVM plugin or one without
// AMDGPU code objects, a processor LLVM does not know).
std::unique_ptr<HipCompiler> make_hip_compiler(const HipTarget& t, HipCompilerKind which);

}  // namespace spmvjit
