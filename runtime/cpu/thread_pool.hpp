// A fixed pool of worker threads; parts of a launch are handed out in order, first come first served.
#pragma once

#include <atomic>
#include <cstdint>
#include <thread>
#include <vector>

#include "core/kernel_args.hpp"

namespace spmvjit {

using CpuEntry = void (*)(const SpmvArgs*, long long);

// Dynamic hand-out (an atomic counter over ~4 parts per thread) balances cores that run at
// different speeds, which static assignment cannot (measured on a 2-vCPU VM: random 1-40 rows,
// static 13.0 ms vs OpenMP-dynamic Eigen 10.3 ms). Workers spin briefly, then sleep.
//
// One job at a time: a run() that finds the pool busy with another caller's job runs all its
// parts on its own thread instead of waiting. The caller's thread is running anyway, so the
// process never has more busy threads than the pool plus the callers (no oversubscription by
// the library); nobody waits for a job that could itself wait (no deadlock, whatever the callers
// hold); and a blocked caller would wait for a whole SpMV, about what running it alone costs on
// the few cores that the busy job leaves idle.
class ThreadPool {
 public:
  explicit ThreadPool(int threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int size() const { return int(workers_.size()) + 1; }
  // Runs fn(args, p) for p in [0, parts) on at most `max_threads` threads, the caller's among
  // them; alone on the caller's thread when the pool is busy (above). Blocks until all are done.
  void run(CpuEntry fn, const SpmvArgs* args, int64_t parts, int max_threads);
  // Runs that found the pool busy and ran alone (tests).
  int64_t ran_alone() const { return ran_alone_.load(std::memory_order_relaxed); }
  // From now on every run() works alone (in a forked child the workers stayed in the parent).
  void orphan() { orphaned_.store(true, std::memory_order_relaxed); }

 private:
  void worker_loop(int id);

  // generation_ = (job counter << kHelperBits) | helpers: the workers with id 1..helpers take
  // part in the job. One word, so a worker decides from what it loaded, without reading fields
  // the next job's caller may be writing.
  static constexpr int kHelperBits = 16;
  static constexpr uint64_t kHelperMask = (uint64_t(1) << kHelperBits) - 1;

  std::vector<std::thread> workers_;
  std::atomic<uint64_t> generation_{0};
  std::atomic<int> pending_{0};
  std::atomic<bool> busy_{false};      // a caller's job owns fn_, args_, parts_ and the workers
  std::atomic<bool> orphaned_{false};  // in a forked child: the workers stayed in the parent
  std::atomic<int64_t> ran_alone_{0};
  alignas(64) std::atomic<int64_t> next_{0};  // next part to run; own cache line
  std::atomic<bool> stop_{false};
  CpuEntry fn_ = nullptr;
  const SpmvArgs* args_ = nullptr;
  int64_t parts_ = 0;
};

// The process's pool, shared by every CPU plan: created on first use with process_threads()
// threads (core/cpu_count.hpp) and never destroyed (its workers sleep through exit; joining them
// in static destruction would race a plan still executing on another thread). In a child forked
// after it exists, run() works on the caller's thread alone.
ThreadPool& shared_thread_pool();

}  // namespace spmvjit
