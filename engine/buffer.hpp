// AlignedBuffer: an owning, 64-byte aligned byte array that reports allocation failure clearly.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <utility>

#include "engine/error.hpp"

namespace spmvjit {

class AlignedBuffer {
 public:
  AlignedBuffer() = default;
  explicit AlignedBuffer(size_t bytes) : bytes_(bytes) {
    if (bytes == 0) return;
    data_ = std::aligned_alloc(64, (bytes + 63) / 64 * 64);
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
  T* as() { return static_cast<T*>(data_); }
  template <class T>
  const T* as() const { return static_cast<const T*>(data_); }

 private:
  void* data_ = nullptr;
  size_t bytes_ = 0;
};

}  // namespace spmvjit
