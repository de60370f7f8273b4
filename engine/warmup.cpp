// warmup_kernels and build_cpu_kernel_bundle: a shared index over the spec list, one compile per
// spec, the first error wins.
#include "engine/warmup.hpp"

#include <algorithm>
#include <atomic>
#include <exception>
#include <map>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "core/parallel.hpp"
#include "engine/device_plan.hpp"
#include "runtime/cache/kernel_cache.hpp"
#ifdef SPMVJIT_WITH_CPU
#include "runtime/cpu/kernel_bundle.hpp"
#endif

namespace spmvjit {
namespace {

// Runs work(k) for every k < specs.size() exactly once on min(threads, specs) threads, reporting
// progress after each; the first failure is rethrown naming its spec and no thread takes another
// spec after it.
void for_each_spec(const std::vector<KernelSpec>& specs, int threads, const WarmupProgress& progress,
                   const std::function<void(size_t)>& work) {
  const int total = int(specs.size());
  if (threads <= 0) threads = process_threads();
  threads = std::max(1, std::min(threads, total));
  std::atomic<size_t> next{0};
  std::atomic<bool> failed{false};
  std::mutex mu;  // done, the first error, and the progress calls
  int done = 0;
  std::exception_ptr error;
  const KernelSpec* error_spec = nullptr;
  auto run = [&] {
    // Each index is taken by exactly one thread; after a failure no thread takes another.
    for (size_t k; !failed.load(std::memory_order_relaxed) && (k = next.fetch_add(1)) < specs.size();) {
      const KernelSpec* at = &specs[k];
      try {
        work(k);
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
    for (int t = 1; t < threads; ++t) pool.emplace_back(run);
  } catch (...) {  // no more threads (resource limits): the ones started and this one do the work
  }
  run();
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
}

}  // namespace

int warmup_kernels(Backend& backend, const std::string& cache_dir, const WarmupProgress& progress,
                   int threads) {
  // Once, on this thread: a directory that cannot hold kernels is one error, not one per thread.
  require_disk_cache(cache_dir);
  backend.use_cache_dir(cache_dir);  // a CPU backend remembers its host there
  const std::vector<KernelSpec> specs = all_kernel_specs(backend.target());
  for_each_spec(specs, threads, progress, [&](size_t k) {
    CacheOutcome o;
    ensure_cached(backend, specs[k], cache_dir, &o);
  });
  return int(specs.size());
}

std::vector<KernelSpec> cpu_bundle_specs(const TargetInfo& cpu) {
  // The run-time epilogue variant of every spec a host of any vector width may ask for (slice
  // heights follow the width), once each.
  std::map<std::string, KernelSpec> unique;
  for (int simd : {16, 32, 64}) {
    TargetInfo t = cpu;
    t.simd_bytes = simd;
    for (KernelSpec s : all_kernel_specs(t)) {
      s.constants["RUNTIME_EPILOGUE"] = 1;
      unique.emplace(s.serialize(), s);
    }
  }
  std::vector<KernelSpec> out;
  for (auto& [name, s] : unique) out.push_back(std::move(s));
  return out;
}

BundleBuild build_kernel_bundle(const std::vector<KernelSpec>& specs, const std::string& path,
                                const WarmupProgress& progress, int threads) {
#ifdef SPMVJIT_WITH_CPU
  const std::string compiler = bundle_compiler();
  // Entries of the bundle already at `path` whose keys (source, options, compiler) are still
  // wanted are taken as they are: a rebuild after a change that leaves the kernels alone
  // compiles nothing.
  std::string why;
  std::unique_ptr<KernelBundle> old = KernelBundle::open(path, &why);
  if (old && old->compiler() != compiler) old.reset();
  std::vector<BundleEntry> entries(specs.size());
  std::atomic<int> compiled{0};
  for_each_spec(specs, threads, progress, [&](size_t k) {
    std::string_view object;
    std::string absent;
    if (old) {
      const std::string key = bundled_kernel(specs[k], compiler).key;
      if (old->find(key, &object, &absent)) {
        entries[k] = BundleEntry{key, std::vector<char>(object.begin(), object.end())};
        return;
      }
    }
    entries[k] = compile_bundled(specs[k], compiler);
    ++compiled;
  });
  old.reset();
  write_kernel_bundle(path, compiler, std::move(entries));
  return BundleBuild{int(specs.size()), compiled.load()};
#else
  (void)specs, (void)path, (void)progress, (void)threads;
  fail(SPMV_STATUS_UNSUPPORTED, "this build has no CPU backend");
#endif
}

BundleBuild build_cpu_kernel_bundle(Backend& cpu, const std::string& path, const WarmupProgress& progress,
                                    int threads) {
  if (cpu.kind() != BackendKind::cpu)
    fail(SPMV_STATUS_INVALID_VALUE, "a kernel bundle is for the CPU backend");
  return build_kernel_bundle(cpu_bundle_specs(cpu.target()), path, progress, threads);
}

}  // namespace spmvjit
