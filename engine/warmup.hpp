// Warm-up: every kernel a plan may ask for, compiled into the disk cache on all usable cores.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "runtime/backend.hpp"

namespace spmvjit {

// (specs done, specs in all); called after each spec, one call at a time, from whichever thread
// finished it.
using WarmupProgress = std::function<void(int done, int total)>;

// Compiles (or finds on disk) each spec of all_kernel_specs(backend.target()) into `cache_dir`
// exactly once, on min(threads, specs) threads (threads <= 0: process_threads(), core/cpu_count.hpp). The
// first failure is rethrown naming its spec (an Error keeps its status); the other threads take no new spec
// after it. A directory that cannot hold the kernels fails with IO_ERROR before any compile.
// Returns the number of specs, every one of them now on disk. spmv_warmup and `spmvjit warmup`
// both come here.
int warmup_kernels(Backend& backend, const std::string& cache_dir, const WarmupProgress& progress = {},
                   int threads = 0);

// The specs of the CPU kernel bundle (runtime/cpu/kernel_bundle.hpp): the run-time epilogue
// variant of every spec all_kernel_specs gives a CPU of 16-, 32- or 64-byte vectors, once each.
std::vector<KernelSpec> cpu_bundle_specs(const TargetInfo& cpu);

// Compiles cpu_bundle_specs for the bundle's portable processor (-O3) on min(threads, specs)
// threads and writes the bundle to `path` (CMake does, after the LLVM plugin is built, for
// installing beside the library); the entries of a bundle already there whose keys are wanted
// are kept rather than compiled again. Throws as warmup_kernels does.
struct BundleBuild {
  int kernels = 0;   // in the bundle written
  int compiled = 0;  // of them, compiled now (the others came from the bundle that was there)
};
BundleBuild build_cpu_kernel_bundle(Backend& cpu, const std::string& path,
                                    const WarmupProgress& progress = {}, int threads = 0);
// The same for the run-time epilogue variants `specs` (CPU specs).
BundleBuild build_kernel_bundle(const std::vector<KernelSpec>& specs, const std::string& path,
                                const WarmupProgress& progress = {}, int threads = 0);

}  // namespace spmvjit
