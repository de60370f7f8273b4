// See host_arena.hpp. A plan touches each array it allocates first; on a paravirtualized VM a 4 KiB
// page fault costs 11-15 us, a 2 MiB huge page 0.1-0.5 ms (measured on the 2-vCPU VM): a small
// matrix's plan (sample, conversion, pattern copy: a few hundred KiB in arrays of 16-512 KiB) paid
// more in page faults than in work. The arena bumps through one huge page at a time and gives a
// page back once everything in it is freed; the current page is reused from its start instead
// (its pages stay mapped, so the next plan in the process faults nothing).
#include "core/host_arena.hpp"

#include <sys/mman.h>

#include <cstdint>
#include <cstdlib>
#include <mutex>
#include <vector>

#include "core/sanitizer.hpp"

namespace spmvjit {
namespace {

constexpr size_t kChunk = size_t(2) << 20;  // one huge page (kHugePage in core/buffer.hpp)

// AddressSanitizer should see each array as its own block (core/sanitizer.hpp).
constexpr bool kArenaOn = !kAddressSanitizer;

struct Chunk {
  char* base;
  size_t used;  // bytes handed out from base (bump pointer)
  size_t live;  // allocations not yet freed
};

struct Arena {
  std::mutex mu;
  std::vector<Chunk> chunks;  // the last one is the current one
};

Arena& arena() {
  static Arena* a = new Arena;  // never destroyed: arrays may be freed during static destruction
  return *a;
}

}  // namespace

void* arena_alloc(size_t bytes) {
  if (!kArenaOn || bytes < kArenaMin || bytes >= kArenaMax) return nullptr;
  const size_t need = (bytes + 63) / 64 * 64;
  Arena& a = arena();
  std::lock_guard lock(a.mu);
  if (a.chunks.empty() || kChunk - a.chunks.back().used < need) {
    // A new page costs about 16 small-page faults (0.1-0.3 ms): smaller arrays take one only
    // when the arena has room, so a tiny matrix's plan never pays for a huge page.
    if (bytes < kArenaOpen) return nullptr;
    void* base = std::aligned_alloc(kChunk, kChunk);
    if (!base) return nullptr;
    ::madvise(base, kChunk, MADV_HUGEPAGE);
    a.chunks.push_back(Chunk{static_cast<char*>(base), 0, 0});
  }
  Chunk& c = a.chunks.back();
  void* p = c.base + c.used;
  c.used += need;
  ++c.live;
  return p;
}

bool arena_free(void* p) {
  const uintptr_t base = reinterpret_cast<uintptr_t>(p) & ~uintptr_t(kChunk - 1);
  Arena& a = arena();
  std::lock_guard lock(a.mu);
  for (size_t i = 0; i < a.chunks.size(); ++i) {
    Chunk& c = a.chunks[i];
    if (reinterpret_cast<uintptr_t>(c.base) != base) continue;
    if (--c.live == 0) {
      if (i + 1 == a.chunks.size()) {
        c.used = 0;  // the current page: reused from its start
      } else {
        std::free(c.base);
        a.chunks.erase(a.chunks.begin() + long(i));
      }
    }
    return true;
  }
  return false;
}

}  // namespace spmvjit
