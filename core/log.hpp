// Logging facade: spdlog stays private to log.cpp; the API exposes a level and a callback.
#pragma once

#include <chrono>
#include <string>

#include "spmvjit/spmvjit.h"

namespace spmvjit {

// Where messages go. The process-wide setting (spmv_set_logging, configure_logging) is the
// default; a plan's options may name their own callback and level, which apply to every message
// logged while working for that plan: the C API's entry points for it, its constructor, and the
// threads that work for it (kernel lookup, background compile, plan-time passes), which take the
// sink of the thread that started their work (current_log_sink + LogScope).
struct LogSink {
  spmv_log_level_t level = SPMV_LOG_DEFAULT;  // DEFAULT: the process-wide level
  spmv_log_callback_t callback = nullptr;     // null: the process-wide callback (or stderr)
  void* user = nullptr;
};

// The process-wide level (DEFAULT: warn), callback (null: stderr) and user pointer.
void configure_logging(spmv_log_level_t level, spmv_log_callback_t callback, void* user);
// Messages at `level` are logged here and now: $SPMVJIT_LOG_LEVEL (trace/debug/info/warn/error/
// off or 0..5) when set, else this thread's sink's level, else the process-wide one.
bool log_enabled(spmv_log_level_t level);
// To this thread's sink's callback, else the process-wide callback, else stderr. Callbacks are
// called one at a time (under one lock), so they must not call spmvjit.
void log_message(spmv_log_level_t level, const std::string& message);

// This thread's sink: the process-wide one unless a LogScope is open.
LogSink current_log_sink();
// Makes `sink` this thread's for the scope's lifetime (nested scopes restore the outer one).
class LogScope {
 public:
  explicit LogScope(const LogSink& sink);
  ~LogScope();
  LogScope(const LogScope&) = delete;
  LogScope& operator=(const LogScope&) = delete;

 private:
  LogSink saved_;
};

inline void log_debug(const std::string& m) { log_message(SPMV_LOG_DEBUG, m); }
inline void log_info(const std::string& m) { log_message(SPMV_LOG_INFO, m); }
inline void log_warn(const std::string& m) { log_message(SPMV_LOG_WARN, m); }

// Step timings at trace level (SPMVJIT_LOG_LEVEL=trace): each step() logs "<scope>: <what> <ms>"
// with the time since the previous step (or since begin(), which logs nothing: an operation's
// own time). Costs one branch when tracing is off.
class TraceSteps {
 public:
  explicit TraceSteps(const char* scope)
      : scope_(scope), on_(log_enabled(SPMV_LOG_TRACE)), last_(on_ ? Clock::now() : Clock::time_point()) {}
  void step(const char* what) {
    if (!on_) return;
    const auto now = Clock::now();
    log_message(SPMV_LOG_TRACE, std::string(scope_) + ": " + what + " " +
                                    std::to_string(std::chrono::duration<double>(now - last_).count() * 1e3) +
                                    " ms");
    last_ = now;
  }
  void step(const std::string& what) { step(what.c_str()); }
  void begin() {
    if (on_) last_ = Clock::now();
  }

 private:
  using Clock = std::chrono::steady_clock;
  const char* scope_;
  bool on_;
  Clock::time_point last_;
};

}  // namespace spmvjit
