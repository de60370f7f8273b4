// See host_pool.hpp.
#include "core/host_pool.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <unordered_map>

#include "core/sanitizer.hpp"

namespace spmvjit {
namespace {

constexpr bool kPoolOn = !kAddressSanitizer;

size_t cap_from_environment() {
  if (!kPoolOn) return 0;
  if (const char* e = std::getenv("SPMVJIT_HOST_MEMORY_CACHE_MB"); e && *e) {
    char* end = nullptr;
    const unsigned long long mb = std::strtoull(e, &end, 10);
    if (end && *end == '\0') return size_t(std::min<unsigned long long>(mb, 1ull << 40)) << 20;
  }
  const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGESIZE);
  const size_t physical = pages > 0 && page > 0 ? size_t(pages) * size_t(page) : size_t(8) << 30;
  return std::min(physical / 8, size_t(2) << 30);
}

// $SPMVJIT_HOST_MEMORY_POISON=1 (the tests set it): a reused block is filled with 0xff bytes (NaN
// values, index -1), so code that takes fresh memory for zeroed memory fails there.
bool poison_from_environment() {
  const char* e = std::getenv("SPMVJIT_HOST_MEMORY_POISON");
  return e && e[0] == '1';
}

struct Pool {
  std::mutex mu;
  size_t cap = cap_from_environment();
  bool poison = poison_from_environment();
  size_t kept = 0;
  uint64_t clock = 0;
  std::multimap<size_t, std::pair<void*, uint64_t>> free_blocks;  // size -> (block, when kept)
  std::unordered_map<void*, size_t> sizes;  // blocks handed out by pool_take: their real size

  // Releases the oldest kept blocks until `need` more bytes fit under the cap.
  void make_room(size_t need) {
    while (kept + need > cap && !free_blocks.empty()) {
      auto oldest = free_blocks.begin();
      for (auto it = free_blocks.begin(); it != free_blocks.end(); ++it)
        if (it->second.second < oldest->second.second) oldest = it;
      std::free(oldest->second.first);
      kept -= oldest->first;
      free_blocks.erase(oldest);
    }
  }
};

Pool& pool() {
  static Pool* p = new Pool;  // never destroyed: arrays may be freed during static destruction
  return *p;
}

}  // namespace

void* pool_take(size_t bytes) {
  Pool& p = pool();
  if (p.cap == 0) return nullptr;
  std::lock_guard lock(p.mu);
  auto it = p.free_blocks.lower_bound(bytes);
  if (it == p.free_blocks.end() || it->first > bytes + std::max(bytes / 4, size_t(2) << 20)) return nullptr;
  void* b = it->second.first;
  p.sizes[b] = it->first;
  p.kept -= it->first;
  p.free_blocks.erase(it);
  if (p.poison) std::memset(b, 0xff, bytes);
  return b;
}

bool pool_give(void* b, size_t bytes) {
  Pool& p = pool();
  if (p.cap == 0 || !b) return false;
  std::lock_guard lock(p.mu);
  size_t size = bytes;
  if (auto it = p.sizes.find(b); it != p.sizes.end()) {
    size = it->second;
    p.sizes.erase(it);
  }
  if (size > p.cap) return false;
  p.make_room(size);
  p.free_blocks.emplace(size, std::make_pair(b, ++p.clock));
  p.kept += size;
  return true;
}

void pool_release_for(size_t bytes) {
  Pool& p = pool();
  std::lock_guard lock(p.mu);
  // Blocks too small for the request, largest first: larger ones may still serve a later request.
  size_t released = 0;
  auto it = p.free_blocks.lower_bound(bytes);
  while (released < bytes && it != p.free_blocks.begin()) {
    --it;
    std::free(it->second.first);
    p.kept -= it->first;
    released += it->first;
    it = p.free_blocks.erase(it);
  }
}

void pool_release_all() {
  Pool& p = pool();
  std::lock_guard lock(p.mu);
  for (auto& [size, block] : p.free_blocks) std::free(block.first);
  p.free_blocks.clear();
  p.kept = 0;
}

size_t pool_kept_bytes() {
  Pool& p = pool();
  std::lock_guard lock(p.mu);
  return p.kept;
}

size_t pool_cap_bytes() { return pool().cap; }

}  // namespace spmvjit
