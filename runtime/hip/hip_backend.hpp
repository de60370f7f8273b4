// HIP backend entry points beyond runtime/backend.hpp: target strings, the device-less compiler,
// and the pieces the tests check without a device (argument packing, target parsing).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "runtime/backend.hpp"

namespace spmvjit {

// An AMD GPU target as hipRTC's --offload-arch takes it: a processor ("gfx90a") and optional
// feature settings ("sramecc+", "xnack-").
struct HipTarget {
  std::string processor;              // "gfx90a", "gfx1030", "gfx942"
  std::vector<std::string> features;  // sorted by name: "sramecc+", "xnack-"
  int wavefront = 64;                 // 64 on GCN and CDNA (gfx6-gfx9), 32 on RDNA (gfx10+)
  // The canonical string (features sorted): the TargetInfo target and part of every cache key.
  std::string str() const;
};

// Parses "gfx90a", "gfx90a:sramecc+:xnack-", "gfx1030", ... Throws INVALID_VALUE saying what is
// wrong: a malformed processor, an unknown feature, a feature twice, or one the processor does
// not have (xnack: gfx8 APUs, gfx9, gfx101x; sramecc: gfx906, gfx908, gfx90a, gfx94x, gfx950).
HipTarget parse_hip_target(const std::string& target);

// Which compiler makes the code objects: hipRTC where it knows the processor, else clang 19 through
// the LLVM plugin (automatic); or one of them (tests compile every kernel with both).
enum class HipCompilerKind { automatic, hiprtc, clang };

// The backend of a HIP device. Throws NO_DEVICE "no HIP device: ...".
Backend& hip_backend(int device);
// True if the runtime loads, finds the device, and hipRTC loads. Never throws.
bool hip_available(int device);
// A backend that compiles for `target` without any device: warmup and CI use it. It refuses
// load/alloc/launch with NO_DEVICE. Throws INVALID_VALUE for a malformed target, UNSUPPORTED when
// neither hipRTC nor clang (the LLVM plugin) can compile for the processor.
Backend& hip_compiler(const std::string& target);
// A new compiler-only backend with the compiler `which` (tests; hip_compiler picks automatically).
std::unique_ptr<Backend> hip_compiler_with(const std::string& target, HipCompilerKind which);
// Whether the runtime loaded with a device / hipRTC loaded (never throw; why not otherwise).
bool hip_runtime_loaded(std::string* why = nullptr);
bool hip_rtc_loaded(std::string* why = nullptr);

// The kernel-argument buffer of one launch: the SpmvArgs block, by value, as the kernel's only
// parameter (offset 0, 8-byte aligned), handed to hipModuleLaunchKernel through `extra`
// (HIP_LAUNCH_PARAM_BUFFER_POINTER / _SIZE / _END), which every HIP version takes (ROCm 5.2's
// header: kernelParams "is not yet implemented in HIP. Please use extra instead"). Lives on
// the caller's stack for the launch call; `config` points into it, so it is neither copied nor
// moved.
struct HipLaunchArgs {
  alignas(8) unsigned char bytes[sizeof(SpmvArgs)];
  size_t size = sizeof(SpmvArgs);
  void* config[5];
  explicit HipLaunchArgs(const SpmvArgs& args);
  HipLaunchArgs(const HipLaunchArgs&) = delete;
  HipLaunchArgs& operator=(const HipLaunchArgs&) = delete;
};

}  // namespace spmvjit
