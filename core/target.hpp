// What a kernel runs on and how it is launched: backend kinds, the target description, launch steps.
#pragma once

#include <cstdint>
#include <map>
#include <string>

namespace spmvjit {

enum class BackendKind { cpu, cuda, hip };
inline const char* to_string(BackendKind b) {
  switch (b) {
    case BackendKind::cpu: return "cpu";
    case BackendKind::cuda: return "cuda";
    case BackendKind::hip: return "hip";
  }
  return "?";
}

// What the planner, the converters and codegen know about the device a plan targets. GPU
// templates never assume a width: codegen bakes warp_size into the prelude (SPMVJIT_WARP).
struct TargetInfo {
  BackendKind backend = BackendKind::cpu;
  // "x86_64-...:znver4:<features digest>" for CPU, "sm_90"; on AMD GPUs the processor and its
  // feature flags, exactly as hipRTC's --offload-arch takes them ("gfx90a:sramecc+:xnack-").
  std::string target;
  int simd_bytes = 32;  // CPU vector register width
  int threads = 1;      // CPU worker threads (partitions)
  int warp_size = 32;   // GPU threads that run in lockstep (32 on NVIDIA and RDNA, 64 on CDNA)
  int sm_count = 0;     // GPU multiprocessors / compute units (0: unknown, a device-less compiler)
  int shared_bytes = 0;      // GPU shared memory (LDS on AMD) a block may use; 0: unknown
  double bandwidth_gbs = 0;  // measured or nominal memory bandwidth, for the cost model
  bool gpu() const { return backend != BackendKind::cpu; }
};

// Parameters of one format instance, and the constants a kernel bakes. Sorted: serialization is
// canonical.
using FormatParams = std::map<std::string, int64_t>;

// One kernel launch of an SpMV. CPU: `grid` parts run on the thread pool. GPU: grid x block.
struct LaunchStep {
  std::string entry;  // "spmvjit_part", "spmvjit_fixup", "spmvjit_scale", ... (+ "_<epilogue>")
  int64_t grid = 1;
  int block = 1;
  size_t shmem = 0;
  // GPU: may start before the previous step ends (programmatic dependent launch where the device
  // has it); the kernel calls spmvjit_grid_wait() before it touches what earlier steps write.
  bool early = false;
};

}  // namespace spmvjit
