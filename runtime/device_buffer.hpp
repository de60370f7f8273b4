// DeviceBuffer: the one owner of device memory allocated through a Backend.
#pragma once

#include <cstddef>
#include <utility>

#include "runtime/backend.hpp"

namespace spmvjit {

// Owns `bytes` of a backend's device memory (Backend::alloc) and frees it (Backend::free) when it
// goes. Every holder of device memory in the engine, tools and tests uses this type, so a plan or a
// benchmark that throws halfway (a failed allocation, a missing kernel entry) leaves nothing
// behind without try/catch. Rules:
// - Allocation failure propagates unchanged: whatever Backend::alloc throws (OUT_OF_MEMORY with
//   the backend's message, NO_DEVICE from a compiler-only backend).
// - A failed free is logged with log_warn, never thrown: destructors run at exit and during
//   unwinding after another error.
// - `bytes == 0` holds nothing (get() is null) and never calls Backend::alloc.
// - Move-only, like AlignedBuffer beside it in HostArray: one owner, freed exactly where that owner
//   goes, no reference count and no copy that silently keeps memory alive. The one place that
//   used to share device memory (a plan's kept CSR pattern, which for CSR-layout formats is the
//   format's own row_ptr and col_idx) now borrows the pointer explicitly from arrays the same
//   Plan owns for its whole life (Plan::device_pattern).
// The backend must outlive the buffer: backends are process-lifetime singletons (tests keep their
// fakes static).
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  DeviceBuffer(Backend& backend, size_t bytes)
      : backend_(&backend), ptr_(bytes ? backend.alloc(bytes) : nullptr), bytes_(ptr_ ? bytes : 0) {}
  DeviceBuffer(DeviceBuffer&& o) noexcept
      : backend_(o.backend_), ptr_(std::exchange(o.ptr_, nullptr)), bytes_(std::exchange(o.bytes_, 0)) {}
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept {
    if (this != &o) {
      reset();  // the memory held so far goes now, not whenever `o` happens to go
      backend_ = o.backend_;
      ptr_ = std::exchange(o.ptr_, nullptr);
      bytes_ = std::exchange(o.bytes_, 0);
    }
    return *this;
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  ~DeviceBuffer() { reset(); }

  // Frees the memory now (logged, never thrown, on failure); the buffer then holds nothing.
  void reset() noexcept;

  void* get() const { return ptr_; }
  template <class T>
  T* as() const {
    return static_cast<T*>(ptr_);
  }
  size_t bytes() const { return bytes_; }
  explicit operator bool() const { return ptr_ != nullptr; }

 private:
  Backend* backend_ = nullptr;
  void* ptr_ = nullptr;
  size_t bytes_ = 0;
};

}  // namespace spmvjit
