// spdlog-backed logger with user callback sinks: one process-wide, and per plan (LogScope).
#include "core/log.hpp"

#ifdef SPMVJIT_HAVE_SPDLOG
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>
#endif

#include <strings.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>

namespace spmvjit {
namespace {

// $SPMVJIT_LOG_LEVEL, read once: it overrides every level, the process's and each plan's.
int env_level() {
  static const int level = [] {
    const char* e = std::getenv("SPMVJIT_LOG_LEVEL");
    if (!e || !*e) return -1;
    const char* names[] = {"trace", "debug", "info", "warn", "error", "off"};
    for (int i = 0; i < 6; ++i)
      if (strcasecmp(e, names[i]) == 0) return i;
    if (e[0] >= '0' && e[0] <= '5' && e[1] == 0) return e[0] - '0';
    std::fprintf(stderr,  // once per process (this runs once), before any callback can be set
                 "spmvjit: ignoring SPMVJIT_LOG_LEVEL=%s (trace, debug, info, warn, error, off or 0-5)\n", e);
    return -1;
  }();
  return level;
}

struct State {
  State() { (void)env_level(); }  // a bad $SPMVJIT_LOG_LEVEL is reported on first use
  std::mutex mu;                  // held while a message is written or a callback runs
  std::atomic<int> level{SPMV_LOG_WARN};
  spmv_log_callback_t callback = nullptr;  // under mu
  void* user = nullptr;
#ifdef SPMVJIT_HAVE_SPDLOG
  std::shared_ptr<spdlog::logger> logger;
#endif
};

State& state() {
  static State s;
  return s;
}

thread_local LogSink t_sink;  // default: the process-wide sink

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
  s.level.store(level == SPMV_LOG_DEFAULT ? SPMV_LOG_WARN : level, std::memory_order_relaxed);
  s.callback = callback;
  s.user = user;
}

bool log_enabled(spmv_log_level_t level) {
  if (level >= SPMV_LOG_OFF) return false;
  int threshold = env_level();
  if (threshold < 0)
    threshold =
        t_sink.level != SPMV_LOG_DEFAULT ? int(t_sink.level) : state().level.load(std::memory_order_relaxed);
  return int(level) >= threshold;
}

void log_message(spmv_log_level_t level, const std::string& message) {
  if (!log_enabled(level)) return;
  State& s = state();
  std::lock_guard lock(s.mu);
  spmv_log_callback_t callback = t_sink.callback ? t_sink.callback : s.callback;
  void* user = t_sink.callback ? t_sink.user : s.user;
  if (callback) {
    callback(int(level), message.c_str(), user);
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

LogSink current_log_sink() { return t_sink; }

LogScope::LogScope(const LogSink& sink) : saved_(t_sink) { t_sink = sink; }
LogScope::~LogScope() { t_sink = saved_; }

}  // namespace spmvjit
