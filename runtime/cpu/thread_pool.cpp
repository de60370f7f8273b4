// ThreadPool implementation: generation counter + pending count, spin-then-wait.
#include "runtime/cpu/thread_pool.hpp"

#include <chrono>

namespace spmvjit {

ThreadPool::ThreadPool(int threads) {
  for (int i = 1; i < threads; ++i) workers_.emplace_back([this, i] { worker_loop(i); });
}

ThreadPool::~ThreadPool() {
  stop_.store(true);
  generation_.fetch_add(1);
  generation_.notify_all();
  for (auto& t : workers_) t.join();
}

void ThreadPool::run(CpuEntry fn, const SpmvArgs* args, int64_t parts) {
  const int n = size();
  if (n == 1 || parts <= 1) {
    for (int64_t p = 0; p < parts; ++p) fn(args, p);
    return;
  }
  fn_ = fn;
  args_ = args;
  parts_ = parts;
  next_.store(0, std::memory_order_relaxed);
  pending_.store(n - 1, std::memory_order_relaxed);
  generation_.fetch_add(1, std::memory_order_release);
  generation_.notify_all();
  for (int64_t p; (p = next_.fetch_add(1, std::memory_order_relaxed)) < parts;) fn(args, p);
  while (pending_.load(std::memory_order_acquire) != 0) {
    // The caller's share is usually the same size as the others': a short spin suffices.
  }
}

void ThreadPool::worker_loop(int id) {
  uint64_t seen = 0;
  for (;;) {
    uint64_t g = generation_.load(std::memory_order_acquire);
    const auto t0 = std::chrono::steady_clock::now();
    while (g == seen) {
      // Spin ~50 us for back-to-back SpMVs (iterative solvers), then sleep.
      if (std::chrono::steady_clock::now() - t0 > std::chrono::microseconds(50)) {
        generation_.wait(seen, std::memory_order_acquire);
      }
      g = generation_.load(std::memory_order_acquire);
    }
    seen = g;
    if (stop_.load()) return;
    (void)id;
    for (int64_t p; (p = next_.fetch_add(1, std::memory_order_relaxed)) < parts_;) fn_(args_, p);
    pending_.fetch_sub(1, std::memory_order_acq_rel);
  }
}

}  // namespace spmvjit
