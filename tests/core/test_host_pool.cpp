// host_alloc's pool of large arrays (core/host_pool.hpp): freed arrays are handed out again to
// requests of about their size, poisoned in the tests, within the byte cap.
#include "core/host_pool.hpp"

#include <catch2/catch.hpp>
#include <cstdint>
#include <cstdlib>
#include <vector>

#include "core/buffer.hpp"

namespace {

using namespace spmvjit;

constexpr size_t kMiB = size_t(1) << 20;

TEST_CASE("host pool: a freed large array is reused by a request of about its size", "[arena]") {
  if (pool_cap_bytes() == 0) {
    WARN("host pool off in this build or environment");
    CHECK(pool_take(8 * kMiB) == nullptr);
    return;
  }
  pool_release_all();
  CHECK(pool_kept_bytes() == 0);
  void* a = host_alloc(6 * kMiB);
  REQUIRE(a);
  static_cast<char*>(a)[0] = 7;
  host_free(a, 6 * kMiB);
  CHECK(pool_kept_bytes() == host_rounded(6 * kMiB));
  // Far smaller requests do not take it (it would hold their memory many times over).
  void* small = host_alloc(kMiB);
  CHECK(small != a);
  host_free(small, kMiB);
  CHECK(pool_kept_bytes() == host_rounded(6 * kMiB) + host_rounded(kMiB));
  // About its size does, 64-byte aligned, filled with 0xff (SPMVJIT_HOST_MEMORY_POISON, set by the
  // test runner): code that read it as zeroed would fail.
  void* b = host_alloc(5 * kMiB + 12345);
  CHECK(b == a);
  CHECK(reinterpret_cast<uintptr_t>(b) % 64 == 0);
  CHECK(static_cast<unsigned char*>(b)[0] == 0xff);
  CHECK(static_cast<unsigned char*>(b)[5 * kMiB + 12344] == 0xff);
  CHECK(pool_kept_bytes() == host_rounded(kMiB));
  // Given back with the size it was asked for: the pool still knows the block's own.
  host_free(b, 5 * kMiB + 12345);
  CHECK(pool_kept_bytes() == host_rounded(6 * kMiB) + host_rounded(kMiB));
  // A request beyond every kept block gets new memory, after the kept blocks smaller than it are
  // released (their pages are the likeliest to come back to it).
  void* c = host_alloc(40 * kMiB);
  CHECK(pool_kept_bytes() == 0);
  host_free(c, 40 * kMiB);
  CHECK(pool_kept_bytes() == host_rounded(40 * kMiB));
  // A larger kept block stays for a later request of its size.
  void* d = host_alloc(4 * kMiB);
  CHECK(pool_kept_bytes() == host_rounded(40 * kMiB));
  void* e = host_alloc(36 * kMiB);
  CHECK(e == c);
  host_free(d, 4 * kMiB);
  host_free(e, 36 * kMiB);
  pool_release_all();
  CHECK(pool_kept_bytes() == 0);
}

TEST_CASE("host pool: an allocation that fails releases the kept blocks, then fails cleanly", "[arena]") {
  if (pool_cap_bytes() == 0) return;
  pool_release_all();
  void* a = host_alloc(4 * kMiB);
  REQUIRE(a);
  host_free(a, 4 * kMiB);
  REQUIRE(pool_kept_bytes() > 0);
  CHECK(host_alloc(size_t(1) << 56) == nullptr);  // more than any machine has
  CHECK(pool_kept_bytes() == 0);
  CHECK_THROWS_AS(AlignedBuffer(size_t(1) << 56), Error);
}

TEST_CASE("host pool: kept bytes stay within the cap, the oldest released first", "[arena]") {
  const size_t cap = pool_cap_bytes();
  if (cap == 0 || cap > (size_t(4) << 30)) {
    WARN("host pool off or its cap too large to fill here");
    return;
  }
  pool_release_all();
  // Untouched blocks (no memory behind them yet), each an eighth of the cap: ten of them.
  const size_t size = host_rounded(cap / 8);
  std::vector<void*> blocks;
  for (int i = 0; i < 10; ++i) blocks.push_back(host_alloc(size));
  for (void* p : blocks) host_free(p, size);
  CHECK(pool_kept_bytes() <= cap);
  CHECK(pool_kept_bytes() >= cap - size);
  // The first two (oldest) were released: the next requests get later ones.
  void* again = host_alloc(size);
  CHECK(again != blocks[0]);
  CHECK(again != blocks[1]);
  host_free(again, size);
  // Larger than the cap: never kept.
  void* huge = host_alloc(cap + kHugePage);
  const size_t before = pool_kept_bytes();
  host_free(huge, cap + kHugePage);
  CHECK(pool_kept_bytes() == before);
  pool_release_all();
}

}  // namespace
