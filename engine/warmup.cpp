// warmup_kernels: a shared index over the spec list, one compile per spec, the first error wins.
#include "engine/warmup.hpp"

#include <algorithm>
#include <atomic>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

#include "core/parallel.hpp"
#include "engine/device_plan.hpp"
#include "runtime/cache/kernel_cache.hpp"

namespace spmvjit {

int warmup_kernels(Backend& backend, const std::string& cache_dir, const WarmupProgress& progress,
                   int threads) {
  // Once, on this thread: a directory that cannot hold kernels is one error, not one per thread.
  require_disk_cache(cache_dir);
  const std::vector<KernelSpec> specs = all_kernel_specs(backend.target());
  const int total = int(specs.size());
  if (threads <= 0) threads = process_threads();
  threads = std::max(1, std::min(threads, total));

  std::atomic<size_t> next{0};
  std::atomic<bool> failed{false};
  std::mutex mu;  // done, the first error, and the progress calls
  int done = 0;
  std::exception_ptr error;
  const KernelSpec* error_spec = nullptr;
  auto work = [&] {
    // Each index is taken by exactly one thread; after a failure no thread takes another.
    for (size_t k; !failed.load(std::memory_order_relaxed) && (k = next.fetch_add(1)) < specs.size();) {
      const KernelSpec* at = &specs[k];
      try {
        CacheOutcome o;
        ensure_cached(backend, specs[k], cache_dir, &o);
        at = nullptr;  // an exception from here on is the progress callback's
        std::lock_guard lock(mu);
        ++done;
        if (progress && !failed) progress(done, total);
      } catch (...) {
        std::lock_guard lock(mu);
        if (!error) error = std::current_exception(), error_spec = at;
        failed = true;
        return;
      }
    }
  };
  std::vector<std::thread> pool;
  try {
    for (int t = 1; t < threads; ++t) pool.emplace_back(work);
  } catch (...) {  // no more threads (resource limits): the ones started and this one do the work
  }
  work();
  for (auto& t : pool) t.join();
  if (error) {
    try {
      std::rethrow_exception(error);
    } catch (const Error& e) {
      if (!error_spec) throw;
      fail(e.status(), "warmup: kernel " + error_spec->serialize() + ": " + e.what());
    }
  }
  SPMVJIT_ASSERT(done == total,
                 "warmup finished with " + std::to_string(done) + " of " + std::to_string(total));
  return total;
}

}  // namespace spmvjit
