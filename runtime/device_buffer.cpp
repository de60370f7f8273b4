// DeviceBuffer's release: the one place device memory allocated through a Backend is freed.
#include "runtime/device_buffer.hpp"

#include <exception>
#include <string>

#include "core/log.hpp"

namespace spmvjit {

void DeviceBuffer::reset() noexcept {
  if (!ptr_) return;
  void* p = std::exchange(ptr_, nullptr);
  const size_t bytes = std::exchange(bytes_, 0);
  // Called from destructors (at exit, while unwinding): a failed free (e.g. the context is gone)
  // is reported, not thrown. The outer try covers the logging itself (no memory for the message).
  auto report = [bytes](const char* why) {
    log_warn("freeing " + std::to_string(bytes) + " bytes of device memory failed: " + why);
  };
  try {
    try {
      backend_->free(p);
    } catch (const std::exception& e) {
      report(e.what());
    } catch (...) {
      report("unknown exception");
    }
  } catch (...) {
  }
}

}  // namespace spmvjit
