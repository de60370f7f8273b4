// A reader for AMDGPU code objects (the ELF images hipRTC produces): symbols, kernel descriptors
// and the processor in the header. No ROCm library needed: the backend checks a binary before
// loading it, and tests check every compiled module's entries without a device.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace spmvjit::hip {

inline constexpr uint16_t kElfMachineAmdgpu = 224;  // EM_AMDGPU

struct CodeObjectSymbol {
  std::string name;
  int type = 0;  // STT_*: 1 object, 2 function
  uint64_t value = 0, size = 0;
};

// What a kernel descriptor (the 64-byte "<kernel>.kd" object, AMDGPUUsage) says about a kernel.
struct KernelDescriptor {
  uint32_t group_segment_bytes = 0;    // static LDS
  uint32_t private_segment_bytes = 0;  // scratch per lane
  uint32_t kernarg_bytes = 0;          // the argument block, hidden arguments included
  bool wave32 = false;                 // compiled for wavefronts of 32 (else 64)
};

struct CodeObject {
  uint32_t e_flags = 0;
  std::vector<CodeObjectSymbol> symbols;  // .symtab, else .dynsym

  // The processor field of e_flags (EF_AMDGPU_MACH: 0x3f gfx90a, 0x36 gfx1030, ...).
  int mach() const { return int(e_flags & 0xff); }
  // Code object v4+ feature settings in e_flags: 0 unsupported, 1 any, 2 off, 3 on.
  int xnack() const { return int((e_flags >> 8) & 3); }
  int sramecc() const { return int((e_flags >> 10) & 3); }
  const CodeObjectSymbol* find(const std::string& name) const;
};

// Parses `bytes` as a 64-bit little-endian AMDGPU ELF. False with `why` when it is not one or is
// truncated; never reads out of bounds.
bool parse_code_object(const std::vector<char>& bytes, CodeObject* out, std::string* why);

// The kernel descriptor of `kernel` (symbol "<kernel>.kd"); false with `why` if absent or cut.
bool read_kernel_descriptor(const std::vector<char>& bytes, const std::string& kernel, KernelDescriptor* out,
                            std::string* why);

// HIP's NVIDIA platform: whether `bytes` is a PTX module (NUL-terminated text with .version and
// ".target <target>", e.g. sm_90) as hipRTC there returns; false with `why` otherwise.
bool is_ptx_module(const std::vector<char>& bytes, const std::string& target, std::string* why);

}  // namespace spmvjit::hip
