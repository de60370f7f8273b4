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
class ThreadPool {
 public:
  explicit ThreadPool(int threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int size() const { return int(workers_.size()) + 1; }
  // Runs fn(args, p) for p in [0, parts); the caller works too. Blocks until all are done.
  void run(CpuEntry fn, const SpmvArgs* args, int64_t parts);

 private:
  void worker_loop(int id);

  std::vector<std::thread> workers_;
  std::atomic<uint64_t> generation_{0};
  std::atomic<int> pending_{0};
  alignas(64) std::atomic<int64_t> next_{0};  // next part to run; own cache line
  std::atomic<bool> stop_{false};
  CpuEntry fn_ = nullptr;
  const SpmvArgs* args_ = nullptr;
  int64_t parts_ = 0;
};

}  // namespace spmvjit
