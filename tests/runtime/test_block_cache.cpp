// BlockCache: reuse by size, the limit and its eviction order, and out-of-memory retried after
// giving the cache back.
#include <catch2/catch.hpp>
#include <cstdlib>
#include <map>
#include <vector>

#include "runtime/block_cache.hpp"

namespace {

using spmvjit::BlockCache;

// A driver over malloc that records every call and can run out of memory above a budget.
struct FakeDriver {
  std::map<void*, size_t> live;
  std::vector<std::pair<char, size_t>> calls;  // 'a' alloc, 'f' free
  size_t budget = size_t(1) << 40, used = 0;

  BlockCache::Driver driver() {
    BlockCache::Driver d;
    d.alloc = [this](size_t n) -> void* {
      calls.push_back({'a', n});
      if (used + n > budget) return nullptr;
      void* p = std::malloc(n);
      live[p] = n;
      used += n;
      return p;
    };
    d.free = [this](void* p) {
      calls.push_back({'f', live.at(p)});
      used -= live.at(p);
      live.erase(p);
      std::free(p);
    };
    return d;
  }
  size_t count(char c) const {
    size_t n = 0;
    for (const auto& x : calls) n += x.first == c;
    return n;
  }
};

}  // namespace

TEST_CASE("block cache rounds sizes up by at most a sixteenth", "[runtime][block_cache]") {
  for (size_t n : {size_t(1), size_t(511), size_t(512), size_t(513), size_t(4097), size_t(1) << 20,
                   (size_t(1) << 20) + 1, size_t(160) << 20, (size_t(160) << 20) + 12345}) {
    const size_t r = BlockCache::round(n);
    CHECK(r >= n);
    CHECK(r % 512 == 0);
    CHECK(double(r) <= std::max(double(n) * 1.0625, double(n) + 512));
  }
}

TEST_CASE("block cache hands a freed block of about the same size out again", "[runtime][block_cache]") {
  FakeDriver fd;
  {
    BlockCache c(fd.driver(), size_t(64) << 20);
    void* a = c.alloc(1000000);
    REQUIRE(a);
    c.free(a);
    CHECK(c.cached_bytes() == BlockCache::round(1000000));
    CHECK(fd.count('f') == 0);
    void* b = c.alloc(990000);  // within an eighth: the same block, no driver call
    CHECK(b == a);
    CHECK(fd.count('a') == 1);
    CHECK(c.cached_bytes() == 0);
    c.free(b);
    void* d = c.alloc(400000);  // much smaller than the cached block: a new one
    CHECK(d != a);
    CHECK(fd.count('a') == 2);
    void* e = c.alloc(1100000);  // larger than the cached block: a new one
    CHECK(e != a);
    void* f = c.alloc(1000000);  // two blocks could serve; the cached one of the right size does
    CHECK(f == a);
    CHECK(fd.count('a') == 3);
    c.free(d), c.free(e), c.free(f);
    CHECK(fd.count('f') == 0);
    c.release();
    CHECK(c.cached_bytes() == 0);
    CHECK(fd.live.empty());
  }
  CHECK(fd.live.empty());
}

TEST_CASE("block cache keeps at most its limit, the oldest blocks going first", "[runtime][block_cache]") {
  FakeDriver fd;
  BlockCache c(fd.driver(), 3 * 4096);
  void* p[4];
  for (void*& x : p) x = c.alloc(4096);
  for (void* x : p) c.free(x);  // the fourth pushes the first out
  CHECK(c.cached_bytes() == 3 * 4096);
  REQUIRE(fd.count('f') == 1);
  CHECK(fd.live.count(p[0]) == 0);
  void* big = c.alloc(4 * 4096);  // larger than the limit: given back at once when freed
  c.free(big);
  CHECK(fd.live.count(big) == 0);
  c.release();
  CHECK(fd.live.empty());

  FakeDriver off;
  BlockCache none(off.driver(), 0);  // limit 0: no cache at all
  void* q = none.alloc(100);
  none.free(q);
  CHECK(off.live.empty());
  CHECK(none.cached_bytes() == 0);
}

TEST_CASE("block cache gives its blocks back before reporting out of memory", "[runtime][block_cache]") {
  FakeDriver fd;
  fd.budget = 3 << 20;
  BlockCache c(fd.driver(), size_t(64) << 20);
  void* a = c.alloc(size_t(2) << 20);
  REQUIRE(a);
  c.free(a);                           // cached: the device holds it
  void* b = c.alloc(size_t(5) << 19);  // 2.5 MiB: does not fit beside it
  REQUIRE(b);
  CHECK(fd.live.count(a) == 0);                // the cache gave its block back, then the driver had room
  CHECK(c.alloc(size_t(4) << 20) == nullptr);  // really too large: out of memory, nothing cached
  c.free(b);
  c.release();
  CHECK(fd.live.empty());
}
