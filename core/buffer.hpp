// AlignedBuffer: an owning, 64-byte aligned byte array that reports allocation failure clearly.
#pragma once

#include <sys/mman.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <utility>

#include "core/error.hpp"

namespace spmvjit {

class AlignedBuffer {
 public:
  static constexpr size_t kHugePage = size_t(2) << 20;
  static constexpr size_t kHugeThreshold = size_t(4) << 20;

  AlignedBuffer() = default;
  explicit AlignedBuffer(size_t bytes) : bytes_(bytes) {
    if (bytes == 0) return;
    // Large arrays go on 2 MiB pages where the kernel allows it: converting and streaming a
    // matrix then costs a fraction of the page faults (plan time is dominated by them).
    const size_t align = bytes >= kHugeThreshold ? kHugePage : 64;
    data_ = std::aligned_alloc(align, (bytes + align - 1) / align * align);
    if (data_ && align == kHugePage) ::madvise(data_, (bytes + align - 1) / align * align, MADV_HUGEPAGE);
    if (!data_)
      fail(SPMV_STATUS_OUT_OF_MEMORY, "host allocation of " + std::to_string(bytes) + " bytes failed");
  }
  AlignedBuffer(AlignedBuffer&& o) noexcept
      : data_(std::exchange(o.data_, nullptr)), bytes_(std::exchange(o.bytes_, 0)) {}
  AlignedBuffer& operator=(AlignedBuffer&& o) noexcept {
    std::swap(data_, o.data_);
    std::swap(bytes_, o.bytes_);
    return *this;
  }
  AlignedBuffer(const AlignedBuffer&) = delete;
  AlignedBuffer& operator=(const AlignedBuffer&) = delete;
  ~AlignedBuffer() { std::free(data_); }

  void* data() { return data_; }
  const void* data() const { return data_; }
  size_t bytes() const { return bytes_; }
  template <class T>
  T* as() {
    return static_cast<T*>(data_);
  }
  template <class T>
  const T* as() const {
    return static_cast<const T*>(data_);
  }

 private:
  void* data_ = nullptr;
  size_t bytes_ = 0;
};

}  // namespace spmvjit
