// How many threads spmvjit runs on: $SPMVJIT_NUM_THREADS, $OMP_NUM_THREADS, the affinity mask.
#pragma once

#include <optional>
#include <string>

namespace spmvjit {

// CPUs this process may run on: the size of its affinity mask (taskset, cpusets, an MPI launcher
// binding each rank), else std::thread::hardware_concurrency; at least 1. Read anew each call.
int affinity_cpus();

// A thread-count variable's value: a positive integer (at most kMaxThreads); with `list`, the
// first number of OpenMP's "4,2" form. nullopt when unset or empty, and when invalid (with
// `error` saying why).
inline constexpr int kMaxThreads = 4096;
std::optional<int> parse_thread_count(const char* value, bool list, std::string* error);

// The rule process_threads() applies, for given values: SPMVJIT_NUM_THREADS, else the first number
// of OMP_NUM_THREADS, else `cpus`. An invalid value is skipped, with a line in `warnings`.
int threads_from(const char* spmvjit_num_threads, const char* omp_num_threads, int cpus,
                 std::string* warnings);

// The threads this process uses: the size of the shared CPU pool, the cap of plan-time passes
// (core/parallel.hpp), the generators and the benchmark's CPU peers. threads_from() on the
// environment and affinity_cpus(), computed once (an invalid variable is reported once on stderr).
int process_threads();

}  // namespace spmvjit
