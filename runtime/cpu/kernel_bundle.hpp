// The CPU kernel bundle: the run-time epilogue variant (a plan's first tier) of every CPU kernel a
// plan may ask for, compiled when spmvjit is built for a portable x86-64 processor (x86-64-v3:
// AVX2, FMA, BMI2) and installed beside the library. A plan whose kernel is in no cache starts on
// the bundle's at once, where it would wait for clang (the plugin's load and a first compile,
// 70-95 ms); the host's own specialized module compiles in the background as before and takes
// over. Hosts without those features compile their first tier as before.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "codegen/kernel_spec.hpp"
#include "runtime/cpu/compile_options.hpp"

namespace spmvjit {

inline constexpr const char* kKernelBundleFile = "spmvjit_cpu_kernels.bin";

// The portable processor bundled kernels are compiled for, and the target string of their specs.
CpuCompileTarget bundle_compile_target();
std::string bundle_target_string();

// Whether a host (LLVM's triple and its feature list, "+avx2", ...) runs the bundle's code.
bool host_runs_bundle(const std::string& triple, const std::vector<std::string>& features);

// The bundle's stand-in for `spec` (a CPU spec of any host): the same spec with the portable
// target, its source and options, and its key under `compiler` (the clang that built the bundle).
struct BundledKernel {
  KernelSpec spec;
  KernelSource source;
  std::string key;
};
BundledKernel bundled_kernel(const KernelSpec& spec, const std::string& compiler);

// ---- Writing (`spmvjit warmup --bundle FILE`) ----
struct BundleEntry {
  std::string key;
  std::vector<char> object;
};
// The compiler bundled kernels are keyed by: the LLVM plugin's clang (loads the plugin).
std::string bundle_compiler();
// Compiles `spec`'s stand-in with the plugin at -O3 and checks that the built-in loader places
// it. Throws COMPILE_FAILED (or NO_DEVICE without the plugin).
BundleEntry compile_bundled(const KernelSpec& spec, const std::string& compiler);
// Writes the bundle, entries sorted by key, through write_file_atomically (IO_ERROR on failure).
void write_kernel_bundle(const std::string& path, const std::string& compiler,
                         std::vector<BundleEntry> entries);

// ---- Reading ----
class KernelBundle {
 public:
  // Maps and checks `path` (a regular file no one but its owner, this user or root, may write;
  // its header, index and bounds); nullptr with `why` when it is not a usable bundle.
  static std::unique_ptr<KernelBundle> open(const std::string& path, std::string* why);
  KernelBundle(const KernelBundle&) = delete;
  KernelBundle& operator=(const KernelBundle&) = delete;
  ~KernelBundle();
  const std::string& path() const { return path_; }
  const std::string& compiler() const { return compiler_; }
  size_t size() const { return entries_.size(); }
  // The object of `key`, its checksum verified; false when absent ("absent") or damaged.
  bool find(const std::string& key, std::string_view* object, std::string* why) const;

 private:
  struct Entry {
    uint64_t offset, size, checksum;
  };
  KernelBundle() = default;
  std::string path_;
  const char* base_ = nullptr;
  size_t bytes_ = 0;
  std::string compiler_;
  std::unordered_map<std::string, Entry> entries_;
};

// The process's bundle: $SPMVJIT_KERNEL_BUNDLE (a file; "0" or "" for none), else
// kKernelBundleFile in the LLVM plugin's folders (runtime/cpu/llvm_plugin.hpp). Opened once;
// nullptr when there is none or it is unusable (a warning names the defect).
const KernelBundle* process_kernel_bundle();

}  // namespace spmvjit
