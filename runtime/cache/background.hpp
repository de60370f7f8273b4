// Background compiles: one process-wide worker builds kernels into the cache while plans already
// run on a quickly compiled variant (templates/contract/spmv_args.h, SPMVJIT_RUNTIME_EPILOGUE).
#pragma once

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "runtime/backend.hpp"
#include "runtime/cache/kernel_cache.hpp"

namespace spmvjit {

// What a plan waits for: the module and its entry points, published once (ready, release order)
// and never changed after. `failed` when the compile threw (the plan keeps its quick variant).
struct KernelUpgrade {
  std::atomic<bool> ready{false};
  bool failed = false;
  std::string error;
  CacheOutcome outcome;  // of the specialized module's get_kernel (compiled, or read from disk)
  std::shared_ptr<LoadedModule> module;
  std::vector<void*> entries[kEpilogueVariants];  // [epilogue][step]
};

// Queues `spec` for the worker: it goes through the cache (get_kernel, so the entry lands on
// disk), resolves `<entry>_<e>` for each of `entries` and each epilogue into upgrade->entries,
// then sets upgrade->ready. Jobs run in order, one at a time; at process exit jobs not yet begun
// are dropped and the one running is waited for. The job logs to the caller's current sink
// (core/log.hpp: the plan's callback when it has one).
void compile_in_background(Backend& backend, const KernelSpec& spec, const std::string& cache_dir,
                           std::vector<std::string> entries, std::shared_ptr<KernelUpgrade> upgrade);

// Blocks until `u` is ready (or the worker dropped it at exit).
void wait_for_upgrade(const KernelUpgrade& u);

// For a plan going away: drops `u`'s job if it has not begun, else waits for it to end. Once
// every plan is destroyed no compile runs, so none is in flight while the process's statics
// (the compiler's among them) are destroyed at exit.
void release_upgrade(const KernelUpgrade& u) noexcept;

}  // namespace spmvjit
