// The background compile worker: a queue, one thread, and a clean stop before static teardown.
#include "runtime/cache/background.hpp"

#include <condition_variable>
#include <cstdlib>
#include <deque>
#include <mutex>
#include <thread>

#include "core/log.hpp"
#include "runtime/cache/kernel_cache.hpp"

namespace spmvjit {
namespace {

struct Job {
  Backend* backend;
  KernelSpec spec;
  std::string dir;
  std::vector<std::string> entries;
  std::shared_ptr<KernelUpgrade> upgrade;
  LogSink log;  // the queuing plan's: the compile's messages are that plan's
};

struct Worker {
  std::mutex mu;
  std::condition_variable cv, done;
  std::deque<Job> jobs;
  bool stop = false, busy = false;
  std::thread thread;
};

// Created on first use and never destroyed. Its thread is stopped by an atexit handler, which
// runs before the static objects created earlier are destroyed; it is registered again with each
// job, after the compiler's lazily created statics (a compile running at exit must not outlive
// them: registered only once, it ran after LLVM's late statics were gone).
Worker& worker();
void stop_worker();

void run(Worker& w) {
  std::unique_lock lock(w.mu);
  for (;;) {
    w.cv.wait(lock, [&] { return w.stop || !w.jobs.empty(); });
    if (w.stop) return;
    Job job = std::move(w.jobs.front());
    w.jobs.pop_front();
    w.busy = true;
    lock.unlock();
    KernelUpgrade& u = *job.upgrade;
    LogScope scope(job.log);
    try {
      CacheOutcome& o = u.outcome;
      u.module = get_kernel(*job.backend, job.spec, job.dir, &o);
      for (int e = 0; e < kEpilogueVariants; ++e)
        for (const std::string& name : job.entries)
          u.entries[e].push_back(u.module->entry(name + "_" + std::to_string(e)));
      log_debug("background compile of " + job.spec.serialize() + " (" + o.where + ")");
    } catch (const std::exception& ex) {
      u.failed = true;
      u.error = ex.what();
      log_warn(std::string("background compile failed; the plan keeps its run-time epilogue kernel: ") +
               ex.what());
    }
    u.ready.store(true, std::memory_order_release);
    lock.lock();
    w.busy = false;
    w.done.notify_all();
  }
}

void stop_worker() {
  Worker& w = worker();
  {
    std::lock_guard lock(w.mu);
    if (w.stop) return;  // an earlier registration already stopped it
    w.stop = true;
    for (Job& j : w.jobs) {  // never started: their plans keep the quick variant
      j.upgrade->failed = true;
      j.upgrade->error = "process exiting";
      j.upgrade->ready.store(true, std::memory_order_release);
    }
    w.jobs.clear();
  }
  w.cv.notify_all();
  w.done.notify_all();
  if (w.thread.joinable()) w.thread.join();
}

Worker& worker() {
  static Worker* w = [] {
    auto* p = new Worker;
    p->thread = std::thread(run, std::ref(*p));
    return p;
  }();
  return *w;
}

}  // namespace

void compile_in_background(Backend& backend, const KernelSpec& spec, const std::string& cache_dir,
                           std::vector<std::string> entries, std::shared_ptr<KernelUpgrade> upgrade) {
  Worker& w = worker();
  {
    std::lock_guard lock(w.mu);
    if (w.stop) {
      upgrade->failed = true;
      upgrade->error = "process exiting";
      upgrade->ready.store(true, std::memory_order_release);
      return;
    }
    w.jobs.push_back({&backend, spec, cache_dir, std::move(entries), std::move(upgrade), current_log_sink()});
  }
  std::atexit(stop_worker);  // idempotent; see worker()
  w.cv.notify_one();
}

void wait_for_upgrade(const KernelUpgrade& u) {
  Worker& w = worker();
  std::unique_lock lock(w.mu);
  w.done.wait(lock, [&] { return u.ready.load(std::memory_order_acquire) || w.stop; });
}

void release_upgrade(const KernelUpgrade& u) noexcept {
  Worker& w = worker();
  std::unique_lock lock(w.mu);
  for (auto it = w.jobs.begin(); it != w.jobs.end(); ++it)
    if (it->upgrade.get() == &u) {
      it->upgrade->failed = true;
      it->upgrade->error = "plan destroyed";
      it->upgrade->ready.store(true, std::memory_order_release);
      w.jobs.erase(it);
      return;
    }
  w.done.wait(lock, [&] { return u.ready.load(std::memory_order_acquire) || w.stop; });
}

}  // namespace spmvjit
