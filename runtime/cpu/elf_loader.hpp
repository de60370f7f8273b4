// A small loader for the CPU kernels' relocatable objects, so that a kernel found in the disk
// cache runs without loading LLVM (libLLVM + libclang-cpp take ~100 ms to map and relocate).
//
// Kernel objects are simple: .text and .rodata.cst* sections, PC-relative relocations, calls to
// memcpy/memset. The loader accepts exactly what it can place and relocate safely (x86-64,
// allocatable PROGBITS/NOBITS sections, PC32/PLT32/PC64/64/GOTPCREL relocations, undefined symbols
// the process defines) and refuses anything else with the reason, for the ORC JIT to load instead.
#pragma once

#include <cstddef>
#include <map>
#include <memory>
#include <string>
#include <utility>

namespace spmvjit {

class ElfImage {
 public:
  ElfImage(const ElfImage&) = delete;
  ElfImage& operator=(const ElfImage&) = delete;
  ~ElfImage();
  // The address of a global function or object the image defines, or nullptr.
  void* symbol(const std::string& name) const;

 private:
  friend std::unique_ptr<ElfImage> load_elf_object(const void*, size_t, std::string*);
  ElfImage(void* base, size_t bytes, std::map<std::string, void*> symbols)
      : base_(base), bytes_(bytes), symbols_(std::move(symbols)) {}
  void* base_ = nullptr;
  size_t bytes_ = 0;
  std::map<std::string, void*> symbols_;
};

// Maps, relocates and protects (code read+execute, constants read-only) one relocatable object.
// nullptr with `why` when the object is malformed or uses anything the loader does not handle
// (another machine, TLS, constructors, an unresolved symbol, an out-of-range relocation, ...).
std::unique_ptr<ElfImage> load_elf_object(const void* data, size_t size, std::string* why);

}  // namespace spmvjit
