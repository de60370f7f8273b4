// Helper threads for plan-time passes (core/parallel.hpp's parallel_for): started on first use and
// kept, so a pass costs a wake-up instead of a thread start (on a 2-vCPU VM a parallel_for of two
// chunks took 42-69 us, four 79-160 us, most of it starting and joining threads).
#pragma once

namespace spmvjit {

// Calls fn(ctx, c) for every c in [0, chunks), on the calling thread and the pool's helpers (a
// chunk to whoever comes first); returns once all have returned. False, with nothing called,
// when the pool cannot take the job: another caller's job holds it, the caller is one of its
// helpers (a nested pass), the process forked after the pool started (the child has no helpers),
// or the process has one thread. fn must not throw.
bool plan_pool_run(int chunks, void (*fn)(void* ctx, int chunk), void* ctx);

// A hint that a job comes within about half a millisecond: on machines where helpers spin
// between jobs (8 threads or more), sleeping helpers wake now and spin for it, so the job does not
// wait for their wake-up (tens of microseconds each). Nothing elsewhere.
void plan_pool_warm();

// True in a child forked after the pool started: its passes run on the calling thread alone, as
// the CPU executes do (runtime/cpu/thread_pool.hpp). POSIX leaves a forked child of a threaded
// process nothing but async-signal-safe calls until it execs; starting threads there is what
// hung a CI run of the fork test (1800 s, not reproduced in 1,500 runs on the 2-vCPU VM).
bool plan_pool_forked();

}  // namespace spmvjit
