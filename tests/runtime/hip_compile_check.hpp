// The HIP compile-everything check: every kernel spec of a target through hipRTC, many specs to a
// program, each spec's kernels found and checked in the code object, its cache entry round-tripped.
#pragma once
#ifdef SPMVJIT_WITH_HIP
#include <set>
#include <string>
#include <vector>

#include "runtime/backend.hpp"
#include "runtime/hip/hip_backend.hpp"

namespace spmvjit::test {

struct HipCompileJob {
  KernelSpec spec;
  std::string error;   // "" when the spec compiled and every check passed
  double seconds = 0;  // its share of its program's compile
  int kernels = 0;
  bool alone = false;  // compiled on its own through ensure_cached (one per template and codec)
};

// The kernels a generated source defines: `extern "C" __global__` functions and the four (or the
// one run-time) epilogue variants of each SPMVJIT_EXPORT_KERNEL(fn, entry, BLOCK) line.
std::set<std::string> hip_expected_kernels(const KernelSpec& spec, const std::string& text);

// `text` (one spec's generated source) made to share a program with other specs' sources: inside
// a namespace of its own, its kernel entries renamed `prefix` + entry, and every macro it defines
// (include guards among them) undefined after it, so the next source compiles as it would alone.
std::string hip_isolate_source(const std::string& text, const std::string& prefix);

// The specs of `b`'s target with values of type `value` (a share of `share`: compile_share in
// tests/test_support.hpp) compiled by hipRTC and checked: its code object is an AMDGPU ELF for the target's
// processor and features and holds every kernel its source defines, with a descriptor for the target's
// wavefront, static LDS within the target's and room for SpmvArgs. The first spec of each
// template and value codec goes the product's way, alone through ensure_cached into `dir`, and is
// checked from its cache entry; the others are compiled `batch` to a program and checked there,
// and each one's entry is written under its own key with that code object and must read back
// unchanged. A program that fails is compiled again spec by spec, to name the spec at fault.
// `code_bytes`: the code objects of the batched programs.
std::vector<HipCompileJob> hip_compile_all(Backend& b, const std::string& dir, ValueType value,
                                           unsigned share, size_t batch, size_t* code_bytes);

// hip_compile_all into a temporary folder, every job checked (Catch assertions): no errors, every
// format with kernels for the target and the device-planning modules among them, one cache file
// per spec. Prints the compile times per format.
void check_compile_everything(Backend& b, ValueType value, unsigned share, size_t batch);

}  // namespace spmvjit::test
#endif
