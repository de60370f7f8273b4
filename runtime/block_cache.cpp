// BlockCache: best fit among freed blocks, the oldest evicted first.
#include "runtime/block_cache.hpp"

#include <algorithm>
#include <bit>

namespace spmvjit {

size_t BlockCache::round(size_t bytes) {
  // 512-byte steps for small blocks, else 1/16 of the size's power of two (at most 6% more).
  const size_t step = std::max<size_t>(512, std::bit_floor(std::max<size_t>(bytes, 1)) / 16);
  return (bytes + step - 1) / step * step;
}

void* BlockCache::alloc(size_t bytes) {
  const size_t want = round(bytes);
  std::lock_guard lock(mu_);
  auto best = cached_.end();
  for (auto it = cached_.begin(); it != cached_.end(); ++it)
    if (it->bytes >= want && it->bytes <= want + want / 8 &&
        (best == cached_.end() || it->bytes < best->bytes))
      best = it;
  if (best != cached_.end()) {
    void* p = best->p;
    live_.emplace(p, best->bytes);
    cached_bytes_ -= best->bytes;
    cached_.erase(best);
    return p;
  }
  void* p = d_.alloc(want);
  if (!p && !cached_.empty()) {
    release_locked();
    p = d_.alloc(want);
  }
  if (p) live_.emplace(p, want);
  return p;
}

void BlockCache::free(void* p) {
  if (!p) return;
  std::lock_guard lock(mu_);
  const auto it = live_.find(p);
  const size_t bytes = it == live_.end() ? 0 : it->second;
  if (it != live_.end()) live_.erase(it);
  if (bytes == 0 || bytes > limit_) {  // unknown (not ours) or too large to keep
    d_.free(p);
    return;
  }
  cached_.push_back({p, bytes});
  cached_bytes_ += bytes;
  while (cached_bytes_ > limit_) {  // the oldest first (cached_ is in freeing order)
    d_.free(cached_.front().p);
    cached_bytes_ -= cached_.front().bytes;
    cached_.erase(cached_.begin());
  }
}

void BlockCache::release() {
  std::lock_guard lock(mu_);
  release_locked();
}

void BlockCache::release_locked() {
  for (const Block& b : cached_) d_.free(b.p);
  cached_.clear();
  cached_bytes_ = 0;
}

size_t BlockCache::cached_bytes() const {
  std::lock_guard lock(mu_);
  return cached_bytes_;
}

}  // namespace spmvjit
