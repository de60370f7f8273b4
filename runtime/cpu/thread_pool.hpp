// A fixed pool of worker threads; part i of a launch always runs on thread i % size.
#pragma once

#include <atomic>
#include <cstdint>
#include <thread>
#include <vector>

#include "runtime/kernel_args.hpp"

namespace spmvjit {

using CpuEntry = void (*)(const SpmvArgs*, long long);

// Static assignment keeps each thread on the same slice of the matrix every SpMV (warm caches,
// first-touch locality). Workers spin briefly then sleep on an atomic wait.
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
  std::atomic<bool> stop_{false};
  CpuEntry fn_ = nullptr;
  const SpmvArgs* args_ = nullptr;
  int64_t parts_ = 0;
};

}  // namespace spmvjit
