// spdlog-backed logger with an optional user callback sink.
#include "core/log.hpp"

#ifdef SPMVJIT_HAVE_SPDLOG
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>
#endif

#include <strings.h>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>

namespace spmvjit {
namespace {

spmv_log_level_t env_level(spmv_log_level_t fallback) {
  const char* e = std::getenv("SPMVJIT_LOG_LEVEL");
  if (!e || !*e) return fallback;
  const char* names[] = {"trace", "debug", "info", "warn", "error", "off"};
  for (int i = 0; i < 6; ++i)
    if (strcasecmp(e, names[i]) == 0) return spmv_log_level_t(i);
  if (e[0] >= '0' && e[0] <= '5' && e[1] == 0) return spmv_log_level_t(e[0] - '0');
  static std::once_flag warned;  // said once per process, not per plan
  std::call_once(warned, [e] {
    std::fprintf(stderr,
                 "spmvjit: ignoring SPMVJIT_LOG_LEVEL=%s (trace, debug, info, warn, error, off or 0-5)\n", e);
  });
  return fallback;
}

struct State {
  std::mutex mu;
  // The environment's level applies from the start; no lazy default may later override what
  // configure_logging set (that used to drop the first plan's callback).
  spmv_log_level_t level = env_level(SPMV_LOG_WARN);
  spmv_log_callback_t callback = nullptr;
  void* user = nullptr;
#ifdef SPMVJIT_HAVE_SPDLOG
  std::shared_ptr<spdlog::logger> logger;
#endif
};

State& state() {
  static State s;
  return s;
}

#ifdef SPMVJIT_HAVE_SPDLOG
std::shared_ptr<spdlog::logger> make_logger() {
  auto sink = std::make_shared<spdlog::sinks::stderr_color_sink_mt>();
  auto logger = std::make_shared<spdlog::logger>("spmvjit", sink);
  logger->set_pattern("[spmvjit %l] %v");
  logger->set_level(spdlog::level::trace);  // filtering happens in log_enabled()
  return logger;
}
#endif

}  // namespace

void configure_logging(spmv_log_level_t level, spmv_log_callback_t callback, void* user) {
  State& s = state();
  std::lock_guard lock(s.mu);
  s.level = env_level(level);
  s.callback = callback;
  s.user = user;
}

bool log_enabled(spmv_log_level_t level) { return level >= state().level && level < SPMV_LOG_OFF; }

void log_message(spmv_log_level_t level, const std::string& message) {
  if (!log_enabled(level)) return;
  State& s = state();
  std::lock_guard lock(s.mu);
  if (s.callback) {
    s.callback(int(level), message.c_str(), s.user);
    return;
  }
#ifdef SPMVJIT_HAVE_SPDLOG
  if (!s.logger) s.logger = make_logger();
  s.logger->log(spdlog::level::level_enum(int(level)), "{}", message);
#else
  // Builds without spdlog (e.g. a bare GPU machine) still report to stderr.
  static const char* names[] = {"trace", "debug", "info", "warning", "error"};
  std::fprintf(stderr, "[spmvjit %s] %s\n", names[int(level)], message.c_str());
#endif
}

}  // namespace spmvjit
