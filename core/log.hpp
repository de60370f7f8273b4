// Logging facade: spdlog stays private to log.cpp; the API exposes a level and a callback.
#pragma once

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

}  // namespace spmvjit
