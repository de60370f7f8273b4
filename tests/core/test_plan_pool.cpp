// The plan-time helper pool behind parallel_for (core/plan_pool.hpp): every chunk runs exactly
// once, exceptions reach the caller, nested passes and concurrent callers finish (the ones the
// pool cannot take run on threads of their own).
#include <pthread.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <stdexcept>
#include <thread>
#include <vector>

#include "core/parallel.hpp"
#include "core/plan_pool.hpp"

using namespace spmvjit;

namespace {

// parallel_for(n, chunks) over a counter per item: each item must be visited once.
bool each_once(int64_t n, int chunks) {
  std::vector<std::atomic<int>> seen(static_cast<size_t>(n));
  parallel_for(n, chunks, [&](int64_t b, int64_t e, int) {
    for (int64_t i = b; i < e; ++i) seen[size_t(i)].fetch_add(1);
  });
  for (auto& s : seen)
    if (s.load() != 1) return false;
  return true;
}

}  // namespace

TEST_CASE("plan pool: every chunk once, any chunk count, many passes in a row", "[parallel]") {
  for (int chunks : {1, 2, 3, 7, 64, 200})
    for (int64_t n : {int64_t(1), int64_t(5), int64_t(1000)}) {
      INFO(chunks << " chunks over " << n);
      CHECK(each_once(n, chunks));
    }
  int bad = 0;
  for (int rep = 0; rep < 2000; ++rep) bad += !each_once(64, 4);
  CHECK(bad == 0);
  // The pool itself: chunk numbers, each once.
  std::vector<std::atomic<int>> hits(16);
  auto body = [](void* ctx, int c) { (*static_cast<std::vector<std::atomic<int>>*>(ctx))[size_t(c)]++; };
  if (plan_pool_run(16, body, &hits))
    for (auto& h : hits) CHECK(h.load() == 1);
  CHECK_FALSE(plan_pool_run(1, body, &hits));  // one chunk: the caller's alone
}

TEST_CASE("plan pool: a chunk's exception reaches the caller, and the pool goes on", "[parallel]") {
  for (int rep = 0; rep < 20; ++rep) {
    std::atomic<int> ran{0};
    CHECK_THROWS_WITH(parallel_for(8, 8,
                                   [&](int64_t b, int64_t, int) {
                                     ran++;
                                     if (b == 5) throw std::runtime_error("chunk 5 failed");
                                   }),
                      "chunk 5 failed");
    CHECK(ran.load() == 8);  // the other chunks still ran
  }
  CHECK(each_once(100, 4));
}

TEST_CASE("plan pool: nested passes and concurrent callers finish", "[parallel]") {
  // A pass inside a chunk (on a helper, or on the caller while its own job holds the pool).
  std::atomic<int64_t> total{0};
  parallel_for(6, 6, [&](int64_t, int64_t, int) {
    parallel_for(100, 3, [&](int64_t b, int64_t e, int) { total += e - b; });
  });
  CHECK(total.load() == 600);
  // Callers on several threads at once: one holds the pool, the others run on their own threads.
  std::atomic<int> bad{0};
  std::vector<std::thread> callers;
  for (int t = 0; t < 4; ++t)
    callers.emplace_back([&] {
      for (int rep = 0; rep < 300; ++rep) bad += !each_once(256, 3);
    });
  for (auto& t : callers) t.join();
  CHECK(bad.load() == 0);
}

// The forked child below allocates nothing and starts no thread (POSIX allows it only
// async-signal-safe calls): its counters are static, and parallel_for keeps up to 64 chunks'
// errors on the stack.
namespace {

std::atomic<int> g_child_items[1000];
std::atomic<int> g_child_other_thread{0};

bool child_each_once(int64_t n, int chunks) {
  for (auto& s : g_child_items) s.store(0);
  const pthread_t self = pthread_self();
  parallel_for(n, chunks, [&](int64_t b, int64_t e, int) {
    if (!pthread_equal(pthread_self(), self)) g_child_other_thread.fetch_add(1);
    for (int64_t i = b; i < e; ++i) g_child_items[i].fetch_add(1);
  });
  for (int64_t i = 0; i < n; ++i)
    if (g_child_items[i].load() != 1) return false;
  return g_child_other_thread.load() == 0;
}

}  // namespace

TEST_CASE("plan pool: a child forked after it started runs its passes on the caller alone", "[parallel]") {
  REQUIRE(each_once(1000, 4));  // the pool has started
  REQUIRE_FALSE(plan_pool_forked());
  const pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0)  // the child: no helpers, and no threads of its own either
    _exit(plan_pool_forked() && child_each_once(1000, 4) && child_each_once(77, 3) ? 0 : 1);
  // Waits 30 s at most: a child that hangs fails the test instead of holding it to ctest's limit.
  int status = 0;
  pid_t done = 0;
  for (int i = 0; i < 3000 && (done = waitpid(pid, &status, WNOHANG)) == 0; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  if (done == 0) {
    kill(pid, SIGKILL);
    waitpid(pid, &status, 0);
    FAIL("the forked child hung in parallel_for");
  }
  REQUIRE(done == pid);
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  CHECK_FALSE(plan_pool_forked());
  CHECK(each_once(1000, 4));  // the parent's pool goes on
}
