// Large host arrays kept for reuse after their plan is gone. A plan's arrays are fresh memory, and
// touching fresh memory first costs page faults (the kernel zeroes each page): on the 2-vCPU VM
// poisson2d:1000's sell_diag placement took 44-47 ms into fresh pages and 6 ms into the same
// pages again. Freed arrays from kArenaMax up stay mapped in this pool, up to a byte cap, and the
// next plan's arrays of about the same size take them (best fit), so a process that plans again
// (a new matrix, new time step, a benchmark) faults only for what it has never had.
//
// Cap: $SPMVJIT_HOST_MEMORY_CACHE_MB (0 turns the pool off), else an eighth of physical memory, at most
// 2 GiB (as CUDA memory kept for reuse). Beyond the cap the oldest kept arrays are released. Off under
// AddressSanitizer (each array its own allocation, so use after free is caught).
#pragma once

#include <cstddef>

namespace spmvjit {

// A kept block of at least `bytes` (and at most a quarter, or 2 MiB, more), or nullptr. Its
// contents are whatever its last owner left.
void* pool_take(size_t bytes);
// Keeps p (from host_alloc, `bytes` as requested) for reuse; false when the pool will not (off,
// larger than the cap): the caller frees it.
bool pool_give(void* p, size_t bytes);
// Releases kept blocks smaller than `bytes`, largest first, until `bytes` of them are released:
// called before a request no kept block fits allocates anew, so the memory it gets is likely the
// pages just released, which the machine still has at hand (fresh pages cost far more where a
// hypervisor takes freed memory back: 0.45 GB/s against 11 GB/s on the 2-vCPU VM).
void pool_release_for(size_t bytes);
// Releases every kept block (tests; memory-tight callers).
void pool_release_all();
// Bytes kept now, and the cap.
size_t pool_kept_bytes();
size_t pool_cap_bytes();

}  // namespace spmvjit
