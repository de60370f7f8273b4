// KernelSpec (what to compile, as a plain value) and KernelSource (the text that compiles it).
#pragma once

#include <string>
#include <vector>

#include "engine/csr.hpp"
#include "engine/formats/format.hpp"

namespace spmvjit {

// Everything baked into one kernel module. Matrix sizes and pointers are never part of it,
// so the set of specs is finite and `warmup` can enumerate it.
struct KernelSpec {
  BackendKind backend = BackendKind::cpu;
  std::string target;  // exact device: "sm_90", "gfx90a", host CPU name + features
  std::string format;
  std::string template_name;
  IndexType index = IndexType::i32;
  ValueType value = ValueType::f64;
  FormatParams constants;  // baked as #define SPMVJIT_<NAME>

  // Canonical one-line form; equal specs serialize equally.
  std::string serialize() const;
};

struct KernelSource {
  std::string name;  // "<format>.cpp" / "<format>.cu": the compiler's file name
  std::string text;
  std::vector<std::string> options;  // compiler options, part of the cache key
};

// Epilogue variants compiled into every module: entry names end in _<e>.
inline constexpr int kEpilogueBetaZero = 1;
inline constexpr int kEpilogueAlphaOne = 2;
inline constexpr int kEpilogueVariants = 4;

// Constants header + backend prelude + format template. Throws INTERNAL_ERROR if the template
// does not exist.
KernelSource generate_source(const KernelSpec& spec);

// Hex digest of (source, options, backend, target, compiler version, cache-format version).
std::string cache_key(const KernelSpec& spec, const KernelSource& src,
                      const std::string& compiler_version);

// Embedded template text by relative path ("cpu/csr.cpp"); nullptr if absent.
const char* find_template(const std::string& path);
std::vector<std::string> template_names();

// 128-bit non-cryptographic digest as 32 hex characters.
std::string digest_hex(const void* data, size_t bytes);
uint64_t checksum64(const void* data, size_t bytes);

}  // namespace spmvjit
