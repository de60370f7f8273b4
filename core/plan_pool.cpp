// The plan-time helper pool (core/plan_pool.hpp): one job at a time, handed out under a mutex.
#include "core/plan_pool.hpp"

#include <pthread.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdlib>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "core/cpu_count.hpp"

namespace spmvjit {
namespace {

thread_local bool t_helper = false;  // this thread is one of the pool's helpers
std::atomic<bool> g_forked{false};   // set in a child forked after the pool started

// A helper that finished a job waits this long for the next one before it sleeps, on machines
// with at least kSpinMinThreads threads: a plan's passes come in bursts (the statistics, the
// estimates' two phases, a conversion's passes) a few tens of microseconds apart, and a helper
// woken from a futex sleep starts tens of microseconds late. Not on small machines, where a
// spinning helper takes the core the caller needs.
constexpr auto kSpin = std::chrono::microseconds(200);
// A helper woken by plan_pool_warm spins this long for the job announced.
constexpr auto kWarmSpin = std::chrono::microseconds(500);
constexpr int kSpinMinThreads = 8;

void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

// SPMVJIT_POOL_SPIN=0: helpers sleep as soon as a job ends (a measuring knob).
bool spin_allowed() {
  const char* e = std::getenv("SPMVJIT_POOL_SPIN");
  return !e || std::string(e) != "0";
}

class PlanPool {
 public:
  explicit PlanPool(int helpers) : spin_(helpers + 1 >= kSpinMinThreads && spin_allowed()) {
    for (int i = 0; i < helpers; ++i) threads_.emplace_back([this] { helper(); });
  }
  bool has_helpers() const { return !threads_.empty(); }

  void warm() {
    if (!spin_) return;
    {
      std::lock_guard<std::mutex> lk(m_);
      ++warm_;
    }
    work_.notify_all();
  }

  bool run(int chunks, void (*fn)(void*, int), void* ctx) {
    if (busy_.exchange(true, std::memory_order_acquire)) return false;
    {
      std::lock_guard<std::mutex> lk(m_);
      fn_ = fn, ctx_ = ctx, chunks_ = chunks;
      next_.store(0, std::memory_order_relaxed);
      ++job_;
      open_ = true;
      published_.store(job_, std::memory_order_release);
    }
    // Wake only as many helpers as the other chunks can use: the caller then waits for no helper
    // that has nothing to run (each woken one joins and leaves through the mutex).
    for (int i = std::min(chunks - 1, int(threads_.size())); i > 0; --i) work_.notify_one();
    for (int c; (c = next_.fetch_add(1, std::memory_order_relaxed)) < chunks;) fn(ctx, c);
    {
      // Every chunk is taken: close the job (a helper that has not joined it yet no longer can)
      // and wait for the helpers still running one.
      std::unique_lock<std::mutex> lk(m_);
      open_ = false;
      done_.wait(lk, [&] { return inside_ == 0; });
    }
    busy_.store(false, std::memory_order_release);
    return true;
  }

 private:
  void helper() {
    t_helper = true;
    uint64_t seen = 0, warm_seen = 0;
    auto spin_for = std::chrono::microseconds(kSpin);
    std::unique_lock<std::mutex> lk(m_);
    for (;;) {
      if (spin_ && !(open_ && job_ != seen)) {
        // Spin (outside the mutex) on the published job number; joining is still under the mutex.
        lk.unlock();
        const auto until = std::chrono::steady_clock::now() + spin_for;
        for (int i = 0; published_.load(std::memory_order_acquire) == seen; ++i) {
          cpu_relax();
          if ((i & 63) == 63 && std::chrono::steady_clock::now() > until) break;
        }
        lk.lock();
      }
      spin_for = kSpin;
      work_.wait(lk, [&] { return (open_ && job_ != seen) || warm_ != warm_seen; });
      if (warm_ != warm_seen) {
        warm_seen = warm_;
        if (!(open_ && job_ != seen)) {  // woken ahead of a job: spin for it
          spin_for = kWarmSpin;
          continue;
        }
      }
      seen = job_;
      ++inside_;
      void (*fn)(void*, int) = fn_;
      void* ctx = ctx_;
      const int chunks = chunks_;
      lk.unlock();
      for (int c; (c = next_.fetch_add(1, std::memory_order_relaxed)) < chunks;) fn(ctx, c);
      lk.lock();
      if (--inside_ == 0) done_.notify_one();
    }
  }

  std::mutex m_;
  std::condition_variable work_, done_;
  uint64_t job_ = 0;  // the job number; a helper joins each open job once
  uint64_t warm_ = 0;  // plan_pool_warm's calls
  bool open_ = false;
  int inside_ = 0;  // helpers running the job's chunks
  void (*fn_)(void*, int) = nullptr;
  void* ctx_ = nullptr;
  int chunks_ = 0;
  std::atomic<int> next_{0};
  std::atomic<bool> busy_{false};
  std::atomic<uint64_t> published_{0};  // job_, for helpers that spin instead of waiting on work_
  const bool spin_;
  std::vector<std::thread> threads_;  // never joined: the pool lives until the process exits
};

// Created on first use with a helper per thread of the process but the caller's, and never
// destroyed (its helpers sleep through exit).
PlanPool& pool() {
  static PlanPool* p = [] {
    pthread_atfork(nullptr, nullptr, [] { g_forked.store(true, std::memory_order_relaxed); });
    return new PlanPool(std::clamp(process_threads() - 1, 0, 63));
  }();
  return *p;
}

}  // namespace

void plan_pool_warm() {
  if (t_helper || g_forked.load(std::memory_order_relaxed)) return;
  pool().warm();
}

bool plan_pool_forked() { return g_forked.load(std::memory_order_relaxed); }

bool plan_pool_run(int chunks, void (*fn)(void*, int), void* ctx) {
  if (chunks <= 1 || t_helper || g_forked.load(std::memory_order_relaxed)) return false;
  PlanPool& p = pool();
  return p.has_helpers() && p.run(chunks, fn, ctx);
}

}  // namespace spmvjit
