// What the CPU backend needs to know about its host before it can look a kernel up: LLVM's name
// for the processor, its feature list and the compiler's version (all part of every cache key).
// LLVM answers in ~100 ms (loading the plugin); the answer is remembered in the kernel cache under
// a fingerprint of everything LLVM's host detection reads, so a process whose kernels are all on
// disk never loads LLVM.
#pragma once

#include <string>

namespace spmvjit {

struct HostIdentity {
  std::string triple;         // x86_64-pc-linux-gnu
  std::string cpu;            // znver4
  std::string features;       // "+avx2,-avx512f,...", sorted by name
  std::string clang_version;  // the plugin's compiler
};

// A digest of the CPUID leaves LLVM's host detection reads (APIC ids masked, so every core of a
// processor agrees), XCR0 (what the OS enabled), the plugin file (path, device, inode, size,
// modification time) and this library's version. "" where there is nothing to fingerprint (not
// x86-64, no plugin file): the identity then always comes from LLVM.
std::string host_fingerprint(const std::string& plugin_path);

// The remembered identity for `fingerprint` in cache folder `dir` (a checked cache entry beside
// the kernels, "<digest>.host"), or false when there is none or it is unusable (never throws).
bool read_host_identity(const std::string& dir, const std::string& fingerprint, HostIdentity* id);
// Remembers it; failures (unusable folder, full disk) are logged at debug level and ignored.
void write_host_identity(const std::string& dir, const std::string& fingerprint, const HostIdentity& id);

}  // namespace spmvjit
