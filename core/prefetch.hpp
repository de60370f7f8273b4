// A software prefetch the optimizer keeps. GCC treats __builtin_prefetch as free of side effects
// and deletes a loop that only prefetches (seen on sell's build: a prefetch-only loop over a few
// rows compiled to nothing), so the hint is an asm statement where the target has one.
#pragma once

namespace spmvjit {

inline void prefetch_line(const void* p) {
#if defined(__x86_64__) || defined(__i386__)
  asm volatile("prefetcht0 %0" : : "m"(*static_cast<const char*>(p)));
#elif defined(__aarch64__)
  asm volatile("prfm pldl1keep, %0" : : "Q"(*static_cast<const char*>(p)));
#else
  __builtin_prefetch(p);
#endif
}

}  // namespace spmvjit
