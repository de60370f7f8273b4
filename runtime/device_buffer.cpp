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
  // is reported, not thrown.
  try {
    backend_->free(p);
  } catch (const std::exception& e) {
    try {
      log_warn("freeing " + std::to_string(bytes) + " bytes of device memory failed: " + e.what());
    } catch (...) {  // logging itself failed (no memory for the message): nothing left to do
    }
  }
}

}  // namespace spmvjit
