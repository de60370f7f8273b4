// Mid-size host arrays carved from shared 2 MiB huge pages: one page fault per 2 MiB, not per 4 KiB.
#pragma once

#include <cstddef>

namespace spmvjit {

// Sizes the arena serves (host_alloc in core/buffer.hpp): below, malloc's own pages (mostly touched
// already); from kArenaMax, an array of its own on huge pages.
constexpr size_t kArenaMin = size_t(16) << 10;
constexpr size_t kArenaMax = size_t(512) << 10;
// Only arrays from this size start a new huge page; smaller ones use the current page's room.
constexpr size_t kArenaOpen = size_t(64) << 10;

// `bytes` (in [kArenaMin, kArenaMax)) 64-byte aligned from the arena; nullptr when it cannot (the
// caller allocates elsewhere).
void* arena_alloc(size_t bytes);
// Returns p (from arena_alloc) to the arena; false when p is not the arena's.
bool arena_free(void* p);

}  // namespace spmvjit
