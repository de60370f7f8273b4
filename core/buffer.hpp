// AlignedBuffer: an owning, 64-byte aligned byte array that reports allocation failure clearly.
#pragma once

#include <sys/mman.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <new>
#include <string>
#include <utility>
#include <vector>

#include "core/error.hpp"
#include "core/host_arena.hpp"
#include "core/host_pool.hpp"

namespace spmvjit {

// Host memory for arrays of a plan. Arrays from kHugeThreshold up go on 2 MiB pages where the
// kernel allows it (transparent huge pages, madvise): a plan touches each of its arrays first, and
// on 4 KiB pages a first touch costs one page fault per 4 KiB (measured 11 us each on a
// paravirtualized VM: 2.8 ms per MiB, more than the conversion that writes it).
constexpr size_t kHugePage = size_t(2) << 20;
constexpr size_t kHugeThreshold = size_t(256) << 10;

// Bytes host_alloc reserves for `bytes`: whole huge pages from kHugeThreshold.
inline size_t host_rounded(size_t bytes) {
  const size_t align = bytes >= kHugeThreshold ? kHugePage : 64;
  return (bytes + align - 1) / align * align;
}

// Allocates `bytes` (> 0) 64-byte aligned, on huge pages from kHugeThreshold; nullptr on failure.
// Mid-size arrays share huge pages (core/host_arena.hpp); large ones may be arrays an earlier plan
// freed (core/host_pool.hpp): never zeroed. Free with host_free.
inline void* host_alloc(size_t bytes) {
  if (void* p = arena_alloc(bytes)) return p;
  const size_t rounded = host_rounded(bytes);
  if (bytes >= kArenaMax) {
    if (void* p = pool_take(rounded)) return p;
    pool_release_for(rounded);
  }
  const size_t align = bytes >= kHugeThreshold ? kHugePage : 64;
  void* p = std::aligned_alloc(align, rounded);
  if (!p && pool_kept_bytes() > 0) {  // memory the pool keeps may be what is missing
    pool_release_all();
    p = std::aligned_alloc(align, rounded);
  }
  if (p && align == kHugePage) ::madvise(p, rounded, MADV_HUGEPAGE);
  return p;
}

// Frees what host_alloc(bytes) returned.
inline void host_free(void* p, size_t bytes) {
  if (!p) return;
  if (bytes >= kArenaMin && bytes < kArenaMax && arena_free(p)) return;
  if (bytes >= kArenaMax && pool_give(p, host_rounded(bytes))) return;
  std::free(p);
}

// std::vector's allocator for work arrays that may grow large (host_alloc).
template <class T>
struct HostAllocator {
  using value_type = T;
  HostAllocator() = default;
  template <class U>
  HostAllocator(const HostAllocator<U>&) {}
  T* allocate(size_t n) {
    void* p = n ? host_alloc(n * sizeof(T)) : nullptr;
    if (n && !p) throw std::bad_alloc();
    return static_cast<T*>(p);
  }
  void deallocate(T* p, size_t n) { host_free(p, n * sizeof(T)); }
  friend bool operator==(const HostAllocator&, const HostAllocator&) { return true; }
};
template <class T>
using HostVector = std::vector<T, HostAllocator<T>>;

class AlignedBuffer {
 public:
  AlignedBuffer() = default;
  explicit AlignedBuffer(size_t bytes) : bytes_(bytes) {
    if (bytes == 0) return;
    data_ = host_alloc(bytes);
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
  ~AlignedBuffer() { host_free(data_, bytes_); }

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
