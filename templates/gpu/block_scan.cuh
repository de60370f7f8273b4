// A block-wide exclusive scan for device builds that cooperate within a block (not for the CPU
// emulation, which runs a block's threads one after another).
#ifndef SPMVJIT_BLOCK_SCAN_INCLUDED
#define SPMVJIT_BLOCK_SCAN_INCLUDED
#include "prelude.h"

// Exclusive scan of one value per thread over a block of kThreads threads (a multiple of
// SPMVJIT_WARP, at most SPMVJIT_WARP warps); *total gets the block's sum. `warps` is shared memory
// of kThreads / SPMVJIT_WARP slots. Every thread of the block calls it; it ends at a barrier, so
// the caller may reuse `warps` and read what others wrote before the call.
template <int kThreads, class T>
SPMVJIT_DEVICE T spmvjit_block_exclusive(T x, T* warps, T* total) {
  static_assert(kThreads % SPMVJIT_WARP == 0 && kThreads / SPMVJIT_WARP <= SPMVJIT_WARP, "block shape");
  constexpr int kWarps = kThreads / SPMVJIT_WARP;
  const int lane = spmvjit_lane(), w = int(threadIdx.x) / SPMVJIT_WARP;
  T inc = x;
  for (int d = 1; d < SPMVJIT_WARP; d <<= 1) {
    const T o = spmvjit_shfl_up(inc, d);
    if (lane >= d) inc += o;
  }
  if (lane == SPMVJIT_WARP - 1) warps[w] = inc;
  spmvjit_sync_block();
  if (w == 0) {
    T ws = lane < kWarps ? warps[lane] : T(0);
    for (int d = 1; d < SPMVJIT_WARP; d <<= 1) {
      const T o = spmvjit_shfl_up(ws, d);
      if (lane >= d) ws += o;
    }
    if (lane < kWarps) warps[lane] = ws;  // inclusive sums of the warps
  }
  spmvjit_sync_block();
  const T before = (w ? warps[w - 1] : T(0)) + inc - x;
  *total = warps[kWarps - 1];
  spmvjit_sync_block();
  return before;
}
#endif
