// parallel_for for plan-time passes (validation, statistics, conversion): a few big chunks.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <exception>
#include <thread>
#include <vector>

#include "core/cpu_count.hpp"
#include "core/log.hpp"
#include "core/plan_pool.hpp"

namespace spmvjit {

// Worker count for plan-time passes over `work` items: one thread per ~256K items, capped by
// the process's thread count (core/cpu_count.hpp: the environment, else the affinity mask). Small
// inputs stay on the calling thread (a thread start costs ~30 us).
inline int plan_threads(int64_t work) {
  return int(std::clamp<int64_t>(work / (1 << 18), 1, process_threads()));
}

// Calls f(begin, end, chunk) for `chunks` contiguous pieces of [0, n) in parallel; the first
// exception thrown by any chunk is rethrown on the caller after all have finished.
template <class F>
void parallel_for(int64_t n, int chunks, F&& f) {
  chunks = int(std::max<int64_t>(1, std::min<int64_t>(chunks, n)));
  if (chunks == 1) {
    f(int64_t(0), n, 0);
    return;
  }
  // Up to 64 chunks keep their errors on the stack: a pass allocates nothing of its own (a forked
  // child below runs with nothing but the caller's thread and memory).
  constexpr int kStackChunks = 64;
  std::exception_ptr stack_errors[kStackChunks];
  std::vector<std::exception_ptr> heap_errors(chunks > kStackChunks ? size_t(chunks) : 0);
  std::exception_ptr* errors = chunks > kStackChunks ? heap_errors.data() : stack_errors;
  const LogSink sink = current_log_sink();  // their messages go where the caller's go
  auto run = [&](int c) {
    LogScope scope(sink);
    try {
      f(n * c / chunks, n * (c + 1) / chunks, c);
    } catch (...) {
      errors[c] = std::current_exception();
    }
  };
  if (plan_pool_forked()) {
    // A child forked after the pool started: the caller's thread alone (core/plan_pool.hpp).
    for (int c = 0; c < chunks; ++c) run(c);
  } else if (!plan_pool_run(
                 chunks, [](void* ctx, int c) { (*static_cast<decltype(run)*>(ctx))(c); }, &run)) {
    // The plan pool's helpers (core/plan_pool.hpp) could not take it: threads of this call's own
    // (the pool is busy with another caller's pass, or this is a pass nested in one of its chunks).
    std::vector<std::thread> threads;
    for (int c = 1; c < chunks; ++c) threads.emplace_back(run, c);
    run(0);
    for (auto& t : threads) t.join();
  }
  for (int c = 0; c < chunks; ++c)
    if (errors[c]) std::rethrow_exception(errors[c]);
}

}  // namespace spmvjit

namespace spmvjit {

// memcpy split across plan threads: the destination's first touch (page faults) is split too.
inline void parallel_copy(void* dst, const void* src, size_t bytes) {
  if (!bytes) return;
  parallel_for(int64_t(bytes), plan_threads(int64_t(bytes) / 8), [&](int64_t b, int64_t e, int) {
    std::memcpy(static_cast<char*>(dst) + b, static_cast<const char*>(src) + b, size_t(e - b));
  });
}

}  // namespace spmvjit

namespace spmvjit {

// In-place inclusive prefix sum of v[0, n), in parallel: each chunk sums its own, a serial pass
// over the chunk totals, then each chunk adds its offset while it scans.
inline void parallel_prefix_sum(int64_t* v, int64_t n) {
  const int chunks = int(std::min<int64_t>(plan_threads(n), 64));
  if (chunks <= 1) {
    for (int64_t i = 1; i < n; ++i) v[i] += v[i - 1];
    return;
  }
  int64_t total[65] = {};
  parallel_for(n, chunks, [&](int64_t b, int64_t e, int c) {
    int64_t s = 0;
    for (int64_t i = b; i < e; ++i) s += v[i];
    total[c + 1] = s;
  });
  for (int c = 0; c < chunks; ++c) total[c + 1] += total[c];
  parallel_for(n, chunks, [&](int64_t b, int64_t e, int c) {
    int64_t s = total[c];
    for (int64_t i = b; i < e; ++i) v[i] = s += v[i];
  });
}

}  // namespace spmvjit
