// See elf_loader.hpp. Layout of an image: [code + call stubs | page gap | read-only | writable],
// each part page-aligned so it can be protected on its own; GOT slots sit in the read-only part.
#include "runtime/cpu/elf_loader.hpp"

#include <dlfcn.h>
#include <elf.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <vector>

namespace spmvjit {

ElfImage::~ElfImage() {
  if (base_) ::munmap(base_, bytes_);
}

void* ElfImage::symbol(const std::string& name) const {
  auto it = symbols_.find(name);
  return it == symbols_.end() ? nullptr : it->second;
}

#if defined(__x86_64__) && defined(__linux__)

namespace {

struct Fail {
  std::string why;
};
[[noreturn]] void refuse(const std::string& why) { throw Fail{why}; }

size_t align_up(size_t v, size_t a) { return a ? (v + a - 1) / a * a : v; }

enum Part { kCode, kReadOnly, kWritable, kParts };

// An undefined symbol the object refers to: where the process has it, its call stub (for PLT32)
// and its GOT slot (for GOTPCREL), each made on first use.
struct External {
  uint64_t address = 0;
  size_t stub = SIZE_MAX;
  size_t slot = SIZE_MAX;
};

constexpr size_t kStubBytes = 16;  // jmp *0(%rip); .quad address; 2 bytes of padding

class Loader {
 public:
  Loader(const unsigned char* data, size_t size) : d_(data), size_(size) {}
  Loader(const Loader&) = delete;
  Loader& operator=(const Loader&) = delete;
  ~Loader() {
    if (base_) ::munmap(base_, total_);
  }

  // On success the caller owns the mapping [base, base + bytes).
  void load(void** base, size_t* bytes, std::map<std::string, void*>* symbols) {
    read_headers();
    plan_layout();
    map();
    relocate();
    protect();
    collect_symbols(symbols);
    *base = base_;
    *bytes = total_;
    base_ = nullptr;
  }

 private:
  template <class T>
  const T* at(uint64_t offset, uint64_t count, const char* what) const {
    if (offset > size_ || count > (size_ - offset) / sizeof(T))
      refuse(std::string(what) + " lies outside the object");
    if (offset % alignof(T)) refuse(std::string(what) + " is misaligned");
    return reinterpret_cast<const T*>(d_ + offset);
  }
  const char* string_at(const Elf64_Shdr& table, uint32_t offset) const {
    if (offset >= table.sh_size) refuse("a name lies outside its string table");
    const char* s = reinterpret_cast<const char*>(d_ + table.sh_offset + offset);
    if (!std::memchr(s, 0, table.sh_size - offset)) refuse("an unterminated name");
    return s;
  }

  void read_headers() {
    if (size_ < sizeof(Elf64_Ehdr)) refuse("shorter than an ELF header");
    eh_ = at<Elf64_Ehdr>(0, 1, "the ELF header");
    if (std::memcmp(eh_->e_ident, ELFMAG, SELFMAG) != 0) refuse("not an ELF file");
    if (eh_->e_ident[EI_CLASS] != ELFCLASS64 || eh_->e_ident[EI_DATA] != ELFDATA2LSB)
      refuse("not a 64-bit little-endian ELF file");
    if (eh_->e_type != ET_REL || eh_->e_machine != EM_X86_64) refuse("not an x86-64 relocatable object");
    if (eh_->e_shentsize != sizeof(Elf64_Shdr)) refuse("unexpected section header size");
    sh_ = at<Elf64_Shdr>(eh_->e_shoff, eh_->e_shnum, "the section headers");
    n_ = eh_->e_shnum;
    if (eh_->e_shstrndx >= n_) refuse("no section name table");
    for (size_t i = 0; i < n_; ++i) {
      const Elf64_Shdr& s = sh_[i];
      if (s.sh_type != SHT_NOBITS && s.sh_type != SHT_NULL) at<char>(s.sh_offset, s.sh_size, "a section");
      if (s.sh_addralign > 4096) refuse("a section aligned beyond a page");
      if (s.sh_type == SHT_SYMTAB) {
        if (symtab_) refuse("two symbol tables");
        symtab_ = &s;
      }
    }
    if (!symtab_) refuse("no symbol table");
    if (symtab_->sh_entsize != sizeof(Elf64_Sym) || symtab_->sh_link >= n_ ||
        sh_[symtab_->sh_link].sh_type != SHT_STRTAB)
      refuse("a malformed symbol table");
    syms_ = at<Elf64_Sym>(symtab_->sh_offset, symtab_->sh_size / sizeof(Elf64_Sym), "the symbols");
    nsyms_ = symtab_->sh_size / sizeof(Elf64_Sym);
    strtab_ = &sh_[symtab_->sh_link];
  }

  // Which part each allocatable section goes to, at what offset; externals and their stubs/slots.
  void plan_layout() {
    offset_.assign(n_, SIZE_MAX);
    part_.assign(n_, kParts);
    size_t used[kParts] = {0, 0, 0};
    for (size_t i = 0; i < n_; ++i) {
      const Elf64_Shdr& s = sh_[i];
      const char* name = string_at(sh_[eh_->e_shstrndx], s.sh_name);
      if (s.sh_type == SHT_INIT_ARRAY || s.sh_type == SHT_FINI_ARRAY || s.sh_type == SHT_PREINIT_ARRAY ||
          !std::strcmp(name, ".ctors") || !std::strcmp(name, ".dtors"))
        refuse(std::string("constructors or destructors (") + name + ")");
      if (!(s.sh_flags & SHF_ALLOC)) continue;
      if (s.sh_flags & SHF_TLS) refuse(std::string("thread-local storage (") + name + ")");
      if (s.sh_type != SHT_PROGBITS && s.sh_type != SHT_NOBITS)
        refuse(std::string("an allocatable section of type ") + std::to_string(s.sh_type) + " (" + name +
               ")");
      const Part p = (s.sh_flags & SHF_EXECINSTR) ? kCode : (s.sh_flags & SHF_WRITE) ? kWritable : kReadOnly;
      if (p == kCode && (s.sh_flags & SHF_WRITE)) refuse(std::string("writable code (") + name + ")");
      part_[i] = p;
      offset_[i] = align_up(used[p], s.sh_addralign);
      used[p] = offset_[i] + s.sh_size;
    }
    // Externals: every undefined symbol a relocation names (resolved in the process now).
    for (size_t i = 0; i < n_; ++i) {
      const Elf64_Shdr& r = sh_[i];
      if (r.sh_type == SHT_REL) refuse("REL relocations (x86-64 uses RELA)");
      if (r.sh_type != SHT_RELA) continue;
      if (r.sh_info >= n_ || r.sh_entsize != sizeof(Elf64_Rela) || &sh_[r.sh_link] != symtab_)
        refuse("a malformed relocation section");
      if (part_[r.sh_info] == kParts) continue;  // relocates a section not loaded (debug info)
      const Elf64_Rela* rel = at<Elf64_Rela>(r.sh_offset, r.sh_size / sizeof(Elf64_Rela), "relocations");
      for (size_t k = 0; k < r.sh_size / sizeof(Elf64_Rela); ++k) {
        const uint32_t type = ELF64_R_TYPE(rel[k].r_info);
        const size_t sym = ELF64_R_SYM(rel[k].r_info);
        if (sym >= nsyms_) refuse("a relocation names no symbol");
        const bool got =
            type == R_X86_64_GOTPCREL || type == R_X86_64_GOTPCRELX || type == R_X86_64_REX_GOTPCRELX;
        if (syms_[sym].st_shndx != SHN_UNDEF) {
          if (got && !slot_of_.count(sym)) slot_of_[sym] = slots_++;
          continue;
        }
        const char* name = string_at(*strtab_, syms_[sym].st_name);
        External& e = externals_[name];
        if (!e.address) {
          void* a = ::dlsym(RTLD_DEFAULT, name);
          if (!a) refuse(std::string("undefined symbol ") + name + " is not in the process");
          e.address = reinterpret_cast<uint64_t>(a);
        }
        if (type == R_X86_64_PLT32 && e.stub == SIZE_MAX) e.stub = stubs_++;
        if (got && e.slot == SIZE_MAX) e.slot = slots_++;
      }
    }
    stub_offset_ = align_up(used[kCode], kStubBytes);
    used[kCode] = stub_offset_ + stubs_ * kStubBytes;
    slot_offset_ = align_up(used[kReadOnly], 8);
    used[kReadOnly] = slot_offset_ + slots_ * 8;
    const size_t page = size_t(::sysconf(_SC_PAGESIZE));
    part_start_[kCode] = 0;
    part_start_[kReadOnly] = align_up(used[kCode], page);
    part_start_[kWritable] = part_start_[kReadOnly] + align_up(used[kReadOnly], page);
    part_bytes_[kCode] = part_start_[kReadOnly];
    part_bytes_[kReadOnly] = part_start_[kWritable] - part_start_[kReadOnly];
    part_bytes_[kWritable] = align_up(used[kWritable], page);
    total_ = part_start_[kWritable] + part_bytes_[kWritable];
    if (total_ == 0) total_ = page;
  }

  void map() {
    void* p = ::mmap(nullptr, total_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) refuse(std::string("mmap: ") + std::strerror(errno));
    base_ = static_cast<unsigned char*>(p);
    for (size_t i = 0; i < n_; ++i)
      if (part_[i] != kParts && sh_[i].sh_type == SHT_PROGBITS)
        std::memcpy(section(i), d_ + sh_[i].sh_offset, sh_[i].sh_size);  // NOBITS stay zero
    for (const auto& [name, e] : externals_) {
      if (e.stub != SIZE_MAX) {
        unsigned char* s = base_ + stub_offset_ + e.stub * kStubBytes;
        const unsigned char jmp[6] = {0xff, 0x25, 0, 0, 0, 0};  // jmp *0(%rip): the address follows
        std::memcpy(s, jmp, 6);
        std::memcpy(s + 6, &e.address, 8);
      }
      if (e.slot != SIZE_MAX) std::memcpy(slot(e.slot), &e.address, 8);
    }
    for (const auto& [sym, k] : slot_of_) {
      const uint64_t a = symbol_address(sym);
      std::memcpy(slot(k), &a, 8);
    }
  }

  unsigned char* section(size_t i) const { return base_ + part_start_[part_[i]] + offset_[i]; }
  unsigned char* slot(size_t k) const { return base_ + part_start_[kReadOnly] + slot_offset_ + k * 8; }

  // A defined symbol's address (section symbols included); undefined ones are externals.
  uint64_t symbol_address(size_t sym) const {
    const Elf64_Sym& s = syms_[sym];
    if (s.st_shndx == SHN_ABS) return s.st_value;
    if (s.st_shndx == SHN_COMMON) refuse("a common symbol");
    if (s.st_shndx >= n_ || part_[s.st_shndx] == kParts) refuse("a symbol in a section not loaded");
    if (s.st_value > sh_[s.st_shndx].sh_size) refuse("a symbol beyond its section");
    return reinterpret_cast<uint64_t>(section(s.st_shndx)) + s.st_value;
  }

  void relocate() {
    for (size_t i = 0; i < n_; ++i) {
      const Elf64_Shdr& r = sh_[i];
      if (r.sh_type != SHT_RELA || part_[r.sh_info] == kParts) continue;
      const Elf64_Shdr& target = sh_[r.sh_info];
      unsigned char* base = section(r.sh_info);
      const Elf64_Rela* rel = at<Elf64_Rela>(r.sh_offset, r.sh_size / sizeof(Elf64_Rela), "relocations");
      for (size_t k = 0; k < r.sh_size / sizeof(Elf64_Rela); ++k) {
        const uint32_t type = ELF64_R_TYPE(rel[k].r_info);
        const size_t sym = ELF64_R_SYM(rel[k].r_info);
        if (type == R_X86_64_NONE) continue;
        const size_t width = (type == R_X86_64_64 || type == R_X86_64_PC64) ? 8 : 4;
        if (target.sh_type == SHT_NOBITS || rel[k].r_offset > target.sh_size ||
            width > target.sh_size - rel[k].r_offset)
          refuse("a relocation outside its section");
        unsigned char* place = base + rel[k].r_offset;
        const uint64_t P = reinterpret_cast<uint64_t>(place);
        const int64_t A = rel[k].r_addend;
        const bool undefined = syms_[sym].st_shndx == SHN_UNDEF;
        const External* e = undefined ? &externals_.at(string_at(*strtab_, syms_[sym].st_name)) : nullptr;
        const uint64_t S = e ? e->address : symbol_address(sym);
        switch (type) {
          case R_X86_64_64: write64(place, S + A); break;
          case R_X86_64_PC64: write64(place, S + A - P); break;
          case R_X86_64_PC32: write32(place, int64_t(S + A - P)); break;
          case R_X86_64_PLT32: {
            const uint64_t to =
                e ? reinterpret_cast<uint64_t>(base_ + stub_offset_ + e->stub * kStubBytes) : S;
            write32(place, int64_t(to + A - P));
            break;
          }
          case R_X86_64_GOTPCREL:
          case R_X86_64_GOTPCRELX:
          case R_X86_64_REX_GOTPCRELX: {
            const size_t k2 = e ? e->slot : slot_of_.at(sym);
            write32(place, int64_t(reinterpret_cast<uint64_t>(slot(k2)) + A - P));
            break;
          }
          default: refuse("relocation type " + std::to_string(type));
        }
      }
    }
  }
  static void write64(unsigned char* p, uint64_t v) { std::memcpy(p, &v, 8); }
  static void write32(unsigned char* p, int64_t v) {
    if (v < INT32_MIN || v > INT32_MAX) refuse("a 32-bit relocation out of range");
    const int32_t w = int32_t(v);
    std::memcpy(p, &w, 4);
  }

  void protect() {
    const int prot[kParts] = {PROT_READ | PROT_EXEC, PROT_READ, PROT_READ | PROT_WRITE};
    for (int p = 0; p < kParts; ++p)
      if (part_bytes_[p] && ::mprotect(base_ + part_start_[p], part_bytes_[p], prot[p]) != 0)
        refuse(std::string("mprotect: ") + std::strerror(errno));
  }

  void collect_symbols(std::map<std::string, void*>* out) const {
    for (size_t i = 0; i < nsyms_; ++i) {
      const Elf64_Sym& s = syms_[i];
      const int bind = ELF64_ST_BIND(s.st_info), type = ELF64_ST_TYPE(s.st_info);
      if ((bind != STB_GLOBAL && bind != STB_WEAK) || s.st_shndx == SHN_UNDEF) continue;
      if (type != STT_FUNC && type != STT_OBJECT && type != STT_NOTYPE) continue;
      (*out)[string_at(*strtab_, s.st_name)] = reinterpret_cast<void*>(symbol_address(i));
    }
  }

  const unsigned char* d_;
  size_t size_;
  const Elf64_Ehdr* eh_ = nullptr;
  const Elf64_Shdr* sh_ = nullptr;
  size_t n_ = 0;
  const Elf64_Shdr* symtab_ = nullptr;
  const Elf64_Shdr* strtab_ = nullptr;
  const Elf64_Sym* syms_ = nullptr;
  size_t nsyms_ = 0;
  std::vector<size_t> offset_;
  std::vector<Part> part_;
  std::map<std::string, External> externals_;
  std::map<size_t, size_t> slot_of_;  // GOT slots of defined symbols
  size_t stubs_ = 0, slots_ = 0, stub_offset_ = 0, slot_offset_ = 0;
  size_t part_start_[kParts] = {}, part_bytes_[kParts] = {}, total_ = 0;
  unsigned char* base_ = nullptr;  // the mapping until load() hands it over
};

}  // namespace

std::unique_ptr<ElfImage> load_elf_object(const void* data, size_t size, std::string* why) {
  try {
    void* base = nullptr;
    size_t bytes = 0;
    std::map<std::string, void*> symbols;
    Loader(static_cast<const unsigned char*>(data), size).load(&base, &bytes, &symbols);
    return std::unique_ptr<ElfImage>(new ElfImage(base, bytes, std::move(symbols)));
  } catch (const Fail& f) {
    if (why) *why = f.why;
  } catch (const std::exception& e) {
    if (why) *why = e.what();
  }
  return nullptr;
}

#else

std::unique_ptr<ElfImage> load_elf_object(const void*, size_t, std::string* why) {
  if (why) *why = "the built-in loader handles x86-64 Linux objects only";
  return nullptr;
}

#endif

}  // namespace spmvjit
