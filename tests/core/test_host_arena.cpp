// host_alloc's arena (core/host_arena.hpp): mid-size arrays share huge pages, aligned, disjoint,
// and are given back; other sizes never come from it.
#include "core/host_arena.hpp"

#include <catch2/catch.hpp>
#include <cstdint>
#include <cstring>
#include <vector>

#include "core/buffer.hpp"

namespace {

using namespace spmvjit;

TEST_CASE("host arena: mid-size buffers are aligned, disjoint and keep their bytes", "[arena]") {
  std::vector<AlignedBuffer> bufs;
  const size_t sizes[] = {kArenaMin, kArenaMin + 1, 100000, kArenaMax - 1, 300000, 70000, 123457};
  for (int round = 0; round < 8; ++round)  // more than one 2 MiB page
    for (size_t s : sizes) {
      bufs.emplace_back(s);
      std::memset(bufs.back().data(), int(bufs.size() & 0xff), s);
    }
  for (size_t i = 0; i < bufs.size(); ++i) {
    const auto* p = static_cast<const unsigned char*>(bufs[i].data());
    CHECK(reinterpret_cast<uintptr_t>(p) % 64 == 0);
    bool same = true;
    for (size_t k = 0; k < bufs[i].bytes(); ++k) same &= p[k] == ((i + 1) & 0xff);
    CHECK(same);
  }
  // Freed in an order that empties older pages first, then the current one.
  for (size_t i = 0; i < bufs.size(); i += 2) bufs[i] = AlignedBuffer();
  for (size_t i = 1; i < bufs.size(); i += 2) bufs[i] = AlignedBuffer();
  AlignedBuffer again(200000);  // from the reused current page
  std::memset(again.data(), 1, again.bytes());
  CHECK(reinterpret_cast<uintptr_t>(again.data()) % 64 == 0);
}

TEST_CASE("host arena: only mid sizes come from it, and host_free tells them apart", "[arena]") {
  CHECK(arena_alloc(kArenaMin - 1) == nullptr);
  CHECK(arena_alloc(kArenaMax) == nullptr);
  CHECK_FALSE(arena_free(nullptr));
  void* big = host_alloc(kArenaMax);  // its own huge pages
  REQUIRE(big);
  CHECK_FALSE(arena_free(big));
  host_free(big, kArenaMax);
  HostVector<int64_t> v;
  for (int64_t i = 0; i < 200000; ++i) v.push_back(i);  // grows through the arena and beyond
  int64_t sum = 0;
  for (int64_t x : v) sum += x;
  CHECK(sum == int64_t(200000) * 199999 / 2);
}

}  // namespace
