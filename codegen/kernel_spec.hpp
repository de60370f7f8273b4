// KernelSpec (what to compile, as a plain value) and KernelSource (the text that compiles it).
#pragma once

#include <string>
#include <vector>

#include "core/target.hpp"
#include "core/types.hpp"

namespace spmvjit {

// Everything baked into one kernel module. Matrix sizes and pointers are never part of it,
// so the set of specs is finite and `warmup` can enumerate it. Codegen reads nothing but this.
struct KernelSpec {
  BackendKind backend = BackendKind::cpu;
  std::string target;         // exact device: "sm_90", "gfx90a:sramecc+:xnack-", host CPU name + features
  int warp_size = 0;          // GPU: threads per warp/wavefront (SPMVJIT_WARP); 0 on the CPU
  std::string format;         // the format (or other module, e.g. "device_plan") it serves
  std::string template_name;  // templates/<cpu|gpu>/<template_name>.<cpp|cu>, or a path under templates/
  IndexType index = IndexType::i32;
  ValueType value = ValueType::f64;
  FormatParams constants;  // baked as #define SPMVJIT_<NAME>

  // Canonical one-line form; equal specs serialize equally.
  std::string serialize() const;
};

// The spec's exact target from a backend's description (backend, target string, warp size).
KernelSpec spec_for(const TargetInfo& t, const std::string& format, const std::string& template_name,
                    IndexType index, ValueType value, FormatParams constants = {});

struct KernelSource {
  std::string name;  // "<format>.cpp" / "<format>.cu": the compiler's file name
  std::string text;
  std::vector<std::string> options;  // compiler options, part of the cache key
};

// Constants, then the template with its #include "..." lines resolved from the embedded
// templates (each file once; "gpu/prelude.h" stands for the backend's own prelude). Throws
// INTERNAL_ERROR if a template or an included file does not exist.
KernelSource generate_source(const KernelSpec& spec);

// Bump when the kernel ABI (templates/contract/spmv_args.h, arrays.h), the cache-key derivation
// or the disk entry layout (runtime/cache/kernel_cache.cpp) changes, so no old entry is ever
// taken for a new one. The golden test (tests/codegen/test_golden.cpp) fails until you do.
inline constexpr int kCacheFormatVersion = 8;  // 8: SpmvArgs carries alpha_im, beta_im

// Hex digest of (source, options, backend, target, compiler version, cache-format version).
std::string cache_key(const KernelSpec& spec, const KernelSource& src,
                      const std::string& compiler_version);

// Embedded template text by relative path ("cpu/csr.cpp"); nullptr if absent.
const char* find_template(const std::string& path);
std::vector<std::string> template_names();

}  // namespace spmvjit
