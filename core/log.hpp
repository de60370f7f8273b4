// Logging facade: spdlog stays private to log.cpp; the API exposes a level and a callback.
#pragma once

#include <chrono>
#include <string>

#include "spmvjit/spmvjit.h"

namespace spmvjit {

// Level from $SPMVJIT_LOG_LEVEL (trace/debug/info/warn/error/off or 0..5) wins over `level`.
void configure_logging(spmv_log_level_t level, spmv_log_callback_t callback, void* user);
bool log_enabled(spmv_log_level_t level);
void log_message(spmv_log_level_t level, const std::string& message);

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
