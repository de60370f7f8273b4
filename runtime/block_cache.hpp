// BlockCache: freed device blocks kept for reuse, so a plan built after another (or the planner's
// next temporary) takes memory without the driver mapping fresh pages.
#pragma once

#include <cstddef>
#include <functional>
#include <mutex>
#include <unordered_map>
#include <vector>

namespace spmvjit {

// On an H100, cuMemAlloc costs about 1 ms per 100 MB (it maps pages) and cuMemFree waits for the
// device: a warm device plan spent more than half its time there. The cache sits between a GPU
// backend and the driver:
// - alloc(n) takes a cached block of n bytes up to n + n/8 (sizes round up to 1/16 of their
//   power of two), else asks the driver; when the driver is out of memory, the cache gives all
//   its blocks back and asks once more, so caching never turns a fit into an out-of-memory.
// - free(p) keeps the block while the cache holds at most `limit` bytes (the oldest go first),
//   else gives it back at once. A limit of 0 is no cache.
// - A freed block is handed out again at once, without waiting for the device. That is safe for
//   work queued on the default stream (the planner's kernels and copies): later work on that
//   stream starts after earlier work ends. An owner whose memory kernels on other streams may
//   still read synchronizes the device before freeing it (Plan's destructor does; cuMemFree did
//   so implicitly).
class BlockCache {
 public:
  struct Driver {
    std::function<void*(size_t)> alloc;  // nullptr when the device is out of memory; throws else
    std::function<void(void*)> free;     // may wait for the device (cuMemFree does)
  };
  BlockCache(Driver driver, size_t limit) : d_(std::move(driver)), limit_(limit) {}
  BlockCache(const BlockCache&) = delete;
  BlockCache& operator=(const BlockCache&) = delete;

  void* alloc(size_t bytes);  // nullptr: out of memory
  void free(void* p);
  void release();  // gives every cached block back to the driver
  size_t cached_bytes() const;
  size_t limit() const { return limit_; }
  static size_t round(size_t bytes);

 private:
  struct Block {
    void* p;
    size_t bytes;
  };
  void release_locked();

  Driver d_;
  size_t limit_;
  mutable std::mutex mu_;
  std::unordered_map<void*, size_t> live_;  // handed out: rounded size
  std::vector<Block> cached_;               // in the order they were freed
  size_t cached_bytes_ = 0;
};

}  // namespace spmvjit
