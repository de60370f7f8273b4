// Warm-up: every kernel a plan may ask for, compiled into the disk cache on all usable cores.
#pragma once

#include <functional>
#include <string>

#include "runtime/backend.hpp"

namespace spmvjit {

// (specs done, specs in all); called after each spec, one call at a time, from whichever thread
// finished it.
using WarmupProgress = std::function<void(int done, int total)>;

// Compiles (or finds on disk) each spec of all_kernel_specs(backend.target()) into `cache_dir`
// exactly once, on min(threads, specs) threads (threads <= 0: process_threads(), core/cpu_count.hpp). The first failure
// is rethrown naming its spec (an Error keeps its status); the other threads take no new spec
// after it. A directory that cannot hold the kernels fails with IO_ERROR before any compile.
// Returns the number of specs, every one of them now on disk. spmv_warmup and `spmvjit warmup`
// both come here.
int warmup_kernels(Backend& backend, const std::string& cache_dir, const WarmupProgress& progress = {},
                   int threads = 0);

}  // namespace spmvjit
