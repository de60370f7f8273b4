// The shared CPU thread pool: its size (environment, affinity mask), one pool for every plan,
// per-plan thread limits, and concurrent callers (correct, never waiting on each other).
#include <sched.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "core/cpu_count.hpp"
#include "engine/gen/generators.hpp"
#include "engine/plan.hpp"
#include "engine/reference.hpp"
#include "spmvjit/spmvjit.hpp"
#include "tests/test_support.hpp"
#ifdef SPMVJIT_WITH_CPU
#include "runtime/cpu/thread_pool.hpp"
#endif

namespace {

using namespace spmvjit;

// Runs f on a thread of its own whose affinity mask is one CPU (one this process may use); a
// child process started from it (popen) inherits that mask, as under `taskset -c N`.
template <class F>
void on_one_cpu(F&& f) {
  std::thread([&] {
    cpu_set_t mine, one;
    REQUIRE(sched_getaffinity(0, sizeof mine, &mine) == 0);
    int cpu = 0;
    while (!CPU_ISSET(cpu, &mine)) ++cpu;
    CPU_ZERO(&one);
    CPU_SET(cpu, &one);
    REQUIRE(sched_setaffinity(0, sizeof one, &one) == 0);
    f();
  }).join();
}

int task_count() {  // threads of this process
  int n = 0;
  for (const auto& e : std::filesystem::directory_iterator("/proc/self/task")) (void)e, ++n;
  return n;
}

// The thread count once threads just joined have left /proc too (a joined thread's entry may
// outlive the join by a moment): the lowest of a few reads 10 ms apart.
int settled_task_count() {
  int n = task_count();
  for (int i = 0; i < 20; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    n = std::min(n, task_count());
  }
  return n;
}

// A matrix big enough for 4+ threads (plans of tiny matrices use fewer: Plan::fit_threads gives
// one thread per 16K rows and entries).
HostCsr<int32_t, double> pool_matrix(uint64_t seed = 1) {
  return generate_matrix("poisson2d:120", seed).cast<int32_t, double>();
}
int threads_for(const HostCsr<int32_t, double>& a, int threads) {
  return int(std::max<int64_t>(1, std::min<int64_t>(threads, (a.nnz() + a.rows) / 16384)));
}

spmv_csr_t view(const HostCsr<int32_t, double>& a) {
  return csr_view<int32_t, double>(a.rows, a.cols, a.nnz(), a.row_ptr.data(), a.col_idx.data(), a.val.data());
}

Options cpu_options(int threads = 0) {
  Options o;
  o.backend = SPMV_BACKEND_CPU;
  o.threads = threads;
  return o;
}

TEST_CASE("thread count: SPMVJIT_NUM_THREADS, then OMP_NUM_THREADS's first number, then the CPUs",
          "[threads]") {
  std::string w;
  CHECK(threads_from(nullptr, nullptr, 6, &w) == 6);
  CHECK(threads_from("", " ", 6, &w) == 6);  // set but empty: as unset
  CHECK(threads_from("3", nullptr, 6, &w) == 3);
  CHECK(threads_from(" 3 ", "5", 6, &w) == 3);
  CHECK(threads_from(nullptr, "5", 6, &w) == 5);
  CHECK(threads_from(nullptr, "4,2,1", 6, &w) == 4);
  CHECK(w.empty());
  CHECK(threads_from(nullptr, nullptr, 0, &w) == 1);
  for (const char* bad : {"0", "-2", "two", "3x", "3,2", "99999", "18446744073709551617"}) {
    INFO(bad);
    w.clear();
    CHECK(threads_from(bad, "5", 6, &w) == 5);
    CHECK(w.find(std::string("ignoring SPMVJIT_NUM_THREADS=") + bad) != std::string::npos);
  }
  for (const char* bad : {"0", "x,2", ",2", "2;3"}) {
    INFO(bad);
    w.clear();
    CHECK(threads_from(nullptr, bad, 6, &w) == 6);
    CHECK(w.find(std::string("ignoring OMP_NUM_THREADS=") + bad) != std::string::npos);
  }
}

TEST_CASE("affinity_cpus counts the affinity mask, not the hardware", "[threads]") {
  CHECK(affinity_cpus() >= 1);
  int restricted = 0;
  on_one_cpu([&] { restricted = affinity_cpus(); });
  CHECK(restricted == 1);
}

// Run in a fresh process by the next test: the shared pool's size and what a plan reports.
TEST_CASE("the shared pool has the expected size", "[.pool-size]") {
  if (!test::require_cpu_backend()) return;
  const char* expect = std::getenv("SPMVJIT_TEST_EXPECT_POOL");
  REQUIRE(expect);
  const auto a = pool_matrix();
  SpmvPlan plan(view(a), cpu_options());
  const Json d = Json::parse(plan.describe());
  CHECK(d["pool_threads"].as_int() == std::atoi(expect));
  CHECK(d["threads"].as_int() == threads_for(a, std::atoi(expect)));
#ifdef SPMVJIT_WITH_CPU
  CHECK(shared_thread_pool().size() == std::atoi(expect));
#endif
}

TEST_CASE("the shared pool's size follows the environment and the affinity mask", "[threads]") {
  if (!test::require_cpu_backend()) return;
  const std::string self = std::filesystem::read_symlink("/proc/self/exe").string();
  auto pool_size_is = [&](const std::string& env, int expect, const std::string& warning = "") {
    std::string out;
    const int rc = test::run_command("env -u SPMVJIT_NUM_THREADS -u OMP_NUM_THREADS " + env +
                                         " SPMVJIT_TEST_EXPECT_POOL=" + std::to_string(expect) + " '" + self +
                                         "' '[.pool-size]'",
                                     &out);
    INFO(env << ": " << out);
    CHECK(rc == 0);
    CHECK(out.find("All tests passed") != std::string::npos);
    if (!warning.empty()) CHECK(out.find(warning) != std::string::npos);
  };
  // One CPU in the mask (as `taskset -c 0` gives): one thread, whatever the hardware has.
  on_one_cpu([&] {
    pool_size_is("", 1);
    pool_size_is("SPMVJIT_NUM_THREADS=3", 3);
    pool_size_is("OMP_NUM_THREADS=3,1", 3);
    pool_size_is("SPMVJIT_NUM_THREADS=2 OMP_NUM_THREADS=3", 2);
    pool_size_is("SPMVJIT_NUM_THREADS=lots", 1, "ignoring SPMVJIT_NUM_THREADS=lots");
    pool_size_is("SPMVJIT_NUM_THREADS=lots OMP_NUM_THREADS=2", 2, "ignoring SPMVJIT_NUM_THREADS=lots");
  });
  pool_size_is("", affinity_cpus());
}

TEST_CASE("plans share one pool: fifty plans start no thread", "[threads]") {
  if (!test::require_cpu_backend()) return;
  const auto a = pool_matrix();
  const spmv_csr_t d = view(a);
  std::vector<std::unique_ptr<SpmvPlan>> plans;
  plans.push_back(std::make_unique<SpmvPlan>(d, cpu_options()));
  plan_impl(plans.front()->get()).wait_for_kernels();  // the background compile, if any, is done
  const int before = settled_task_count();
  for (int i = 0; i < 50; ++i) plans.push_back(std::make_unique<SpmvPlan>(d, cpu_options()));
  CHECK(settled_task_count() == before);  // each used to start a pool of its own
  const auto x = random_vector<double>(a.cols, 1);
  std::vector<double> y(size_t(a.rows));
  for (const auto& p : plans) p->execute(1.0, x.data(), 0.0, y.data());
  CHECK(settled_task_count() == before);
  CHECK(check_spmv(a, reference_spmv(a, 1.0, x.data(), 0.0, y.data()), y.data()) == "");
}

TEST_CASE("four threads executing two plans at once get correct results", "[threads]") {
  if (!test::require_cpu_backend()) return;
  const HostCsr<int32_t, double> m[2] = {pool_matrix(1),
                                         generate_matrix("powerlaw:20000", 2).cast<int32_t, double>()};
  const SpmvPlan plans[2] = {SpmvPlan(view(m[0]), cpu_options()), SpmvPlan(view(m[1]), cpu_options())};
  std::vector<std::string> errors(4);
  std::atomic<int> ready{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      const auto& a = m[t % 2];
      const auto x = random_vector<double>(a.cols, uint64_t(t) + 10);
      const auto y0 = random_vector<double>(a.rows, uint64_t(t) + 20);
      const auto ref = reference_spmv(a, 2.0, x.data(), -1.0, y0.data());
      ready.fetch_add(1);
      while (ready.load() < 4) std::this_thread::yield();  // start together
      for (int it = 0; it < 200 && errors[size_t(t)].empty(); ++it) {
        std::vector<double> y = y0;
        plans[t % 2].execute(2.0, x.data(), -1.0, y.data());
        errors[size_t(t)] = check_spmv(a, ref, y.data());
      }
    });
  for (auto& th : threads) th.join();
  for (int t = 0; t < 4; ++t) CHECK(errors[size_t(t)] == "");
}

TEST_CASE("options.threads: a plan's share of the pool", "[threads]") {
  if (!test::require_cpu_backend()) return;
  const auto a = pool_matrix();
  const int pool = process_threads();
  const Json one = Json::parse(SpmvPlan(view(a), cpu_options(1)).describe());
  CHECK(one["threads"].as_int() == 1);
  CHECK(one["threads_requested"].as_int() == 1);
  CHECK(one["pool_threads"].as_int() == pool);
  const Json all = Json::parse(SpmvPlan(view(a), cpu_options(0)).describe());
  CHECK(all["threads"].as_int() == threads_for(a, pool));
  const Json more = Json::parse(SpmvPlan(view(a), cpu_options(pool + 5)).describe());
  CHECK(more["threads"].as_int() == threads_for(a, pool));
  CHECK(more["threads_requested"].as_int() == pool + 5);
  CHECK(more["threads_note"].as_string().find("shared pool has " + std::to_string(pool)) !=
        std::string::npos);
}

#ifdef SPMVJIT_WITH_CPU
// A job for ThreadPool::run: every part counts itself and notes the thread that ran it.
struct Job {
  std::vector<std::atomic<int>> runs;
  std::mutex mu;
  std::set<std::thread::id> ids;
  explicit Job(int64_t parts) : runs(size_t(parts)) {}
  static void part(const SpmvArgs* args, long long p) {
    auto* job = static_cast<Job*>(args->scratch);
    job->runs[size_t(p)].fetch_add(1);
    std::lock_guard lock(job->mu);
    job->ids.insert(std::this_thread::get_id());
  }
  bool each_once() const {
    for (const auto& r : runs)
      if (r.load() != 1) return false;
    return true;
  }
};

TEST_CASE("ThreadPool: at most max_threads threads, each part once", "[threads]") {
  ThreadPool pool(4);
  for (int limit : {1, 2, 4, 9}) {
    INFO("max_threads " << limit);
    for (int rep = 0; rep < 50; ++rep) {
      Job job(64);
      SpmvArgs args{};
      args.scratch = &job;
      pool.run(&Job::part, &args, 64, limit);
      REQUIRE(job.each_once());
      REQUIRE(int(job.ids.size()) <= std::min(limit, 4));
      if (limit == 1) REQUIRE(job.ids == std::set<std::thread::id>{std::this_thread::get_id()});
    }
  }
}

// A job whose parts wait until released: it keeps the pool busy for as long as a test needs.
struct HeldJob {
  std::atomic<int> started{0};
  std::atomic<bool> release{false};
  static void part(const SpmvArgs* args, long long) {
    auto* job = static_cast<HeldJob*>(args->scratch);
    job->started.fetch_add(1);
    while (!job->release.load()) std::this_thread::yield();
  }
};

TEST_CASE("ThreadPool: a caller that finds the pool busy runs its parts alone, at once", "[threads]") {
  ThreadPool pool(2);
  HeldJob held;
  SpmvArgs held_args{};
  held_args.scratch = &held;
  std::thread holder([&] { pool.run(&HeldJob::part, &held_args, 2, 2); });
  while (held.started.load() < 2) std::this_thread::yield();  // both threads of the pool are in it
  Job job(16);
  SpmvArgs args{};
  args.scratch = &job;
  pool.run(&Job::part, &args, 16, 2);  // returns while the other job still holds the pool
  CHECK(held.release.load() == false);
  CHECK(job.each_once());
  CHECK(job.ids == std::set<std::thread::id>{std::this_thread::get_id()});
  CHECK(pool.ran_alone() == 1);
  held.release = true;
  holder.join();
  // Free again: the next job gets the pool.
  Job after(64);
  args.scratch = &after;
  pool.run(&Job::part, &args, 64, 2);
  CHECK(after.each_once());
  CHECK(pool.ran_alone() == 1);
}

TEST_CASE("ThreadPool: concurrent callers never wait on each other's jobs", "[threads]") {
  ThreadPool pool(3);
  std::atomic<bool> failed{false};
  std::vector<std::thread> callers;
  for (int c = 0; c < 4; ++c)
    callers.emplace_back([&] {
      for (int rep = 0; rep < 300 && !failed; ++rep) {
        Job job(37);
        SpmvArgs args{};
        args.scratch = &job;
        pool.run(&Job::part, &args, 37, 3);
        if (!job.each_once()) failed = true;
      }
    });
  for (auto& t : callers) t.join();
  CHECK(!failed);
}

// Counts parts in a static array: the forked child below allocates nothing (another thread may
// have held the allocator's lock at the fork).
std::atomic<int> g_fork_parts[8];
void count_fork_part(const SpmvArgs*, long long p) { g_fork_parts[p].fetch_add(1); }

TEST_CASE("ThreadPool: in a child forked after the shared pool started, runs use the caller alone",
          "[threads]") {
  ThreadPool& pool = shared_thread_pool();
  (void)pool;
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {  // the pool's workers stayed in the parent: waiting for them would hang
    SpmvArgs args{};
    shared_thread_pool().run(&count_fork_part, &args, 8, kMaxThreads);
    for (auto& c : g_fork_parts)
      if (c.load() != 1) ::_exit(1);
    ::_exit(0);
  }
  int status = 0;
  pid_t done = 0;
  for (int i = 0; i < 3000 && (done = ::waitpid(pid, &status, WNOHANG)) == 0; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  if (done == 0) {
    ::kill(pid, SIGKILL);
    ::waitpid(pid, &status, 0);
    FAIL("the forked child hung in ThreadPool::run");
  }
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
}
#endif

}  // namespace
