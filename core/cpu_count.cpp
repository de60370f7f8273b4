// Thread count from the environment and the affinity mask (core/cpu_count.hpp).
#include "core/cpu_count.hpp"

#include <sched.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <thread>

namespace spmvjit {

int affinity_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) == 0) {
    const int n = CPU_COUNT(&set);
    if (n > 0) return n;
  }
  // More CPUs than a cpu_set_t holds (1024), or no affinity support: the hardware's count.
  return int(std::max(1u, std::thread::hardware_concurrency()));
}

std::optional<int> parse_thread_count(const char* value, bool list, std::string* error) {
  if (!value) return std::nullopt;
  const char* p = value;
  while (std::isspace(static_cast<unsigned char>(*p))) ++p;
  if (!*p) return std::nullopt;  // set but empty: as unset
  long long n = 0;
  const char* digits = p;
  while (std::isdigit(static_cast<unsigned char>(*p)) && n <= kMaxThreads) n = n * 10 + (*p++ - '0');
  while (std::isspace(static_cast<unsigned char>(*p))) ++p;
  const bool end = !*p || (list && *p == ',');
  if (p == digits || !end || n < 1 || n > kMaxThreads) {
    if (error)
      *error = std::string("a positive integer up to ") + std::to_string(kMaxThreads) +
               (list ? ", or a list such as 4,2 (its first number counts)" : "");
    return std::nullopt;
  }
  return int(n);
}

int threads_from(const char* spmvjit_num_threads, const char* omp_num_threads, int cpus,
                 std::string* warnings) {
  const struct {
    const char* name;
    const char* value;
    bool list;
  } vars[] = {{"SPMVJIT_NUM_THREADS", spmvjit_num_threads, false},
              {"OMP_NUM_THREADS", omp_num_threads, true}};
  for (const auto& v : vars) {
    std::string why;
    if (auto n = parse_thread_count(v.value, v.list, &why)) return *n;
    if (!why.empty() && warnings)
      *warnings += std::string("spmvjit: ignoring ") + v.name + "=" + v.value + " (" + why + ")\n";
  }
  return std::max(1, cpus);
}

int process_threads() {
  static const int n = [] {
    std::string warnings;
    const int t = threads_from(std::getenv("SPMVJIT_NUM_THREADS"), std::getenv("OMP_NUM_THREADS"),
                               affinity_cpus(), &warnings);
    // Once per process (this runs once), like $SPMVJIT_LOG_LEVEL's warning: before any logger
    // or callback may be configured, so on stderr.
    if (!warnings.empty()) std::fputs(warnings.c_str(), stderr);
    return t;
  }();
  return n;
}

}  // namespace spmvjit
