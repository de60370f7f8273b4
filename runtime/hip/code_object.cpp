// AMDGPU code object reader: just enough ELF64 for symbols and kernel descriptors.
#include "runtime/hip/code_object.hpp"

#include <cstring>

namespace spmvjit::hip {
namespace {

struct Reader {
  const std::vector<char>& b;
  bool ok = true;
  uint64_t u(uint64_t off, int n) {
    if (off > b.size() || uint64_t(n) > b.size() - off) {
      ok = false;
      return 0;
    }
    uint64_t v = 0;
    for (int i = 0; i < n; ++i) v |= uint64_t(uint8_t(b[size_t(off) + i])) << (8 * i);
    return v;
  }
};

struct Section {
  uint32_t name = 0, type = 0, link = 0;
  uint64_t addr = 0, offset = 0, size = 0, entsize = 0;
};

constexpr uint32_t kShtSymtab = 2, kShtDynsym = 11;

bool sections(const std::vector<char>& b, std::vector<Section>* out, uint32_t* flags, std::string* why) {
  Reader r{b};
  if (b.size() < 64 || std::memcmp(b.data(), "\177ELF", 4) != 0) {
    *why = "not an ELF image";
    return false;
  }
  if (b[4] != 2 || b[5] != 1) {
    *why = "not a 64-bit little-endian ELF";
    return false;
  }
  const uint64_t machine = r.u(18, 2);
  if (machine != kElfMachineAmdgpu) {
    *why = "ELF for machine " + std::to_string(machine) + ", not AMDGPU (224)";
    return false;
  }
  *flags = uint32_t(r.u(48, 4));
  const uint64_t shoff = r.u(40, 8), shentsize = r.u(58, 2), shnum = r.u(60, 2);
  if (shentsize < 64 || shnum == 0 || shoff >= b.size() || shnum > (b.size() - shoff) / shentsize) {
    *why = "truncated or malformed section headers";
    return false;
  }
  for (uint64_t i = 0; i < shnum; ++i) {
    const uint64_t h = shoff + i * shentsize;
    Section s;
    s.name = uint32_t(r.u(h, 4));
    s.type = uint32_t(r.u(h + 4, 4));
    s.addr = r.u(h + 16, 8);
    s.offset = r.u(h + 24, 8);
    s.size = r.u(h + 32, 8);
    s.link = uint32_t(r.u(h + 40, 4));
    s.entsize = r.u(h + 56, 8);
    out->push_back(s);
  }
  return r.ok;
}

}  // namespace

const CodeObjectSymbol* CodeObject::find(const std::string& name) const {
  for (const CodeObjectSymbol& s : symbols)
    if (s.name == name) return &s;
  return nullptr;
}

bool parse_code_object(const std::vector<char>& b, CodeObject* out, std::string* why) {
  std::vector<Section> sh;
  *out = CodeObject{};
  if (!sections(b, &sh, &out->e_flags, why)) return false;
  const Section* tab = nullptr;
  for (uint32_t want : {kShtSymtab, kShtDynsym}) {
    for (const Section& s : sh)
      if (s.type == want) tab = &s;
    if (tab) break;
  }
  if (!tab) {
    *why = "no symbol table";
    return false;
  }
  if (tab->link >= sh.size() || tab->entsize < 24 || tab->offset > b.size() ||
      tab->size > b.size() - tab->offset) {
    *why = "malformed symbol table";
    return false;
  }
  const Section& strtab = sh[tab->link];
  if (strtab.offset > b.size() || strtab.size > b.size() - strtab.offset) {
    *why = "malformed string table";
    return false;
  }
  Reader r{b};
  for (uint64_t off = tab->offset; off + tab->entsize <= tab->offset + tab->size; off += tab->entsize) {
    const uint64_t name = r.u(off, 4);
    if (name >= strtab.size) continue;
    const char* p = b.data() + strtab.offset + name;
    const size_t n = strnlen(p, size_t(strtab.size - name));
    if (n == 0 || n == strtab.size - name) continue;  // unnamed, or not terminated inside the table
    CodeObjectSymbol s;
    s.name.assign(p, n);
    s.type = int(r.u(off + 4, 1) & 0xf);
    s.value = r.u(off + 8, 8);
    s.size = r.u(off + 16, 8);
    out->symbols.push_back(std::move(s));
  }
  return r.ok;
}

bool read_kernel_descriptor(const std::vector<char>& b, const std::string& kernel, KernelDescriptor* out,
                            std::string* why) {
  CodeObject co;
  if (!parse_code_object(b, &co, why)) return false;
  const CodeObjectSymbol* kd = co.find(kernel + ".kd");
  if (!kd) {
    *why = "no kernel descriptor " + kernel + ".kd";
    return false;
  }
  std::vector<Section> sh;
  uint32_t flags = 0;
  sections(b, &sh, &flags, why);
  // The descriptor's file offset: its address within the allocated section that holds it.
  for (const Section& s : sh) {
    if (s.addr == 0 || s.type == 8 /* SHT_NOBITS */ || kd->value < s.addr || kd->value + 64 > s.addr + s.size)
      continue;
    Reader r{b};
    const uint64_t at = s.offset + (kd->value - s.addr);
    out->group_segment_bytes = uint32_t(r.u(at, 4));
    out->private_segment_bytes = uint32_t(r.u(at + 4, 4));
    out->kernarg_bytes = uint32_t(r.u(at + 8, 4));
    out->wave32 = (r.u(at + 56, 2) >> 10) & 1;  // kernel_code_properties: ENABLE_WAVEFRONT_SIZE32
    if (!r.ok) *why = "kernel descriptor " + kernel + ".kd lies past the end of the image";
    return r.ok;
  }
  *why = "kernel descriptor " + kernel + ".kd is in no section";
  return false;
}

bool is_ptx_module(const std::vector<char>& bytes, const std::string& target, std::string* why) {
  auto no = [&](const std::string& w) {
    if (why) *why = w;
    return false;
  };
  if (bytes.empty() || bytes.back() != '\0') return no("not NUL-terminated text");
  const std::string text(bytes.data(), bytes.size() - 1);
  if (text.find('\0') != std::string::npos) return no("binary data, not text");
  if (text.find(".version ") == std::string::npos) return no("no .version directive");
  // ".target sm_90" or, from a virtual architecture, ".target sm_90" as well (PTX names it so).
  const size_t t = text.find(".target ");
  if (t == std::string::npos) return no("no .target directive");
  const std::string named = text.substr(t + 8, text.find_first_of(", \n", t + 8) - (t + 8));
  if (named != target) return no("compiled for " + named + ", not " + target);
  return true;
}

}  // namespace spmvjit::hip
