// ThreadPool implementation: generation counter + pending count, spin-then-wait; the shared pool.
#include "runtime/cpu/thread_pool.hpp"

#include <pthread.h>

#include <algorithm>
#include <chrono>

#include "core/cpu_count.hpp"

namespace spmvjit {

ThreadPool::ThreadPool(int threads) {
  threads = std::clamp(threads, 1, kMaxThreads);
  for (int i = 1; i < threads; ++i) workers_.emplace_back([this, i] { worker_loop(i); });
}

ThreadPool::~ThreadPool() {
  stop_.store(true);
  generation_.fetch_add(uint64_t(1) << kHelperBits);  // no helpers: only stop_ is read
  generation_.notify_all();
  for (auto& t : workers_) t.join();
}

void ThreadPool::run(CpuEntry fn, const SpmvArgs* args, int64_t parts, int max_threads) {
  const int64_t n = std::min<int64_t>({size(), max_threads, parts});  // threads this job uses
  if (n <= 1 || orphaned_.load(std::memory_order_relaxed) || busy_.load(std::memory_order_relaxed) ||
      busy_.exchange(true, std::memory_order_acquire)) {
    if (n > 1) ran_alone_.fetch_add(1, std::memory_order_relaxed);
    for (int64_t p = 0; p < parts; ++p) fn(args, p);
    return;
  }
  fn_ = fn;
  args_ = args;
  parts_ = parts;
  next_.store(0, std::memory_order_relaxed);
  pending_.store(int(n - 1), std::memory_order_relaxed);
  // Only the caller holding busy_ writes generation_ (the destructor runs with no caller left).
  const uint64_t g = generation_.load(std::memory_order_relaxed);
  generation_.store((((g >> kHelperBits) + 1) << kHelperBits) | uint64_t(n - 1), std::memory_order_release);
  generation_.notify_all();
  for (int64_t p; (p = next_.fetch_add(1, std::memory_order_relaxed)) < parts;) fn(args, p);
  while (pending_.load(std::memory_order_acquire) != 0) {
    // The caller's share is usually the same size as the others': a short spin suffices.
  }
  busy_.store(false, std::memory_order_release);
}

void ThreadPool::worker_loop(int id) {
  uint64_t seen = 0;
  bool spin = true;  // after a job of its own: the next one is likely close (iterative solvers)
  for (;;) {
    uint64_t g = generation_.load(std::memory_order_acquire);
    const auto t0 = std::chrono::steady_clock::now();
    while (g == seen) {
      // Spin ~50 us for back-to-back SpMVs, then sleep; straight to sleep after a job that
      // used fewer threads than this one's id (a plan with options.threads below the pool's).
      if (!spin || std::chrono::steady_clock::now() - t0 > std::chrono::microseconds(50)) {
        generation_.wait(seen, std::memory_order_acquire);
      }
      g = generation_.load(std::memory_order_acquire);
    }
    seen = g;
    if (stop_.load()) return;
    spin = uint64_t(id) <= (g & kHelperMask);
    if (!spin) continue;
    for (int64_t p; (p = next_.fetch_add(1, std::memory_order_relaxed)) < parts_;) fn_(args_, p);
    pending_.fetch_sub(1, std::memory_order_acq_rel);
  }
}

namespace {

ThreadPool* g_shared_pool = nullptr;

void orphan_shared_pool() {  // pthread_atfork child handler: the child has only the forking thread
  if (g_shared_pool) g_shared_pool->orphan();
}

}  // namespace

ThreadPool& shared_thread_pool() {
  static ThreadPool* pool = [] {
    auto* p = new ThreadPool(process_threads());
    g_shared_pool = p;
    pthread_atfork(nullptr, nullptr, orphan_shared_pool);
    return p;
  }();
  return *pool;
}

}  // namespace spmvjit
