// The CPU kernel bundle (kernel_bundle.hpp): its portable target, its file (written atomically,
// mapped read-only and checked before use) and the compile of its entries.
//
// File layout (little-endian, as the x86-64 hosts that read it):
//   header   magic "SPMVJKB1", u32 layout version, u32 kCacheFormatVersion, u32 entries,
//            u32 compiler bytes, u64 index bytes, u64 XXH3-64 of the compiler and the index
//   compiler the clang version string the keys were made with
//   index    per entry: u32 key bytes, key, u64 offset, u64 size, u64 XXH3-64 of the object
//   objects  each at a 16-byte aligned offset from the file's start
#include "runtime/cpu/kernel_bundle.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "core/digest.hpp"
#include "core/log.hpp"
#include "core/private_file.hpp"
#include "runtime/cpu/elf_loader.hpp"
#include "runtime/cpu/llvm_plugin.hpp"

namespace spmvjit {
namespace {

constexpr char kMagic[8] = {'S', 'P', 'M', 'V', 'J', 'K', 'B', '1'};
constexpr uint32_t kLayoutVersion = 1;
constexpr size_t kHeaderBytes = 40;
constexpr size_t kMaxBundleBytes = size_t(1) << 30;

// x86-64-v3 in LLVM's feature names: what the portable build may use.
constexpr const char* kPortableFeatures[] = {"avx",  "avx2", "bmi",  "bmi2",   "cmov",   "cx16",   "cx8",
                                             "f16c", "fma",  "fxsr", "lzcnt",  "movbe",  "popcnt", "sahf",
                                             "sse",  "sse2", "sse3", "sse4.1", "sse4.2", "ssse3",  "xsave"};

void put_u32(std::string& s, uint32_t v) { s.append(reinterpret_cast<const char*>(&v), 4); }
void put_u64(std::string& s, uint64_t v) { s.append(reinterpret_cast<const char*>(&v), 8); }

// Reads a little-endian field at `at` if it fits before `end`.
template <class T>
bool get(const char* base, size_t end, size_t* at, T* v) {
  if (*at > end || end - *at < sizeof(T)) return false;
  std::memcpy(v, base + *at, sizeof(T));
  *at += sizeof(T);
  return true;
}

}  // namespace

CpuCompileTarget bundle_compile_target() { return CpuCompileTarget{"x86_64-pc-linux-gnu", "x86-64-v3", {}}; }

std::string bundle_target_string() { return "x86_64-pc-linux-gnu:x86-64-v3:portable"; }

bool host_runs_bundle(const std::string& triple, const std::vector<std::string>& features) {
  if (triple.rfind("x86_64-", 0) != 0 || triple.find("linux") == std::string::npos) return false;
  for (const char* need : kPortableFeatures)
    if (std::find(features.begin(), features.end(), std::string("+") + need) == features.end()) return false;
  return true;
}

BundledKernel bundled_kernel(const KernelSpec& spec, const std::string& compiler) {
  BundledKernel k;
  k.spec = spec;
  k.spec.target = bundle_target_string();
  k.source = generate_source(k.spec);
  // The bundle is built once, ahead of time: its first tier gets -O3, not the JIT's -O1.
  k.source.options = cpu_compile_options(bundle_compile_target(), k.spec, "-O3");
  k.key = cache_key(k.spec, k.source, compiler + " portable");
  return k;
}

std::string bundle_compiler() {
  const LlvmPlugin& p = llvm_plugin();
  if (!p.api) fail(SPMV_STATUS_NO_DEVICE, p.error);
  return p.api->clang_version;
}

BundleEntry compile_bundled(const KernelSpec& spec, const std::string& compiler) {
  const LlvmPlugin& p = llvm_plugin();
  if (!p.api) fail(SPMV_STATUS_NO_DEVICE, p.error);
  const BundledKernel k = bundled_kernel(spec, compiler);
  std::vector<const char*> args;
  for (const auto& o : k.source.options) args.push_back(o.c_str());
  spmvjit_llvm_bytes out{};
  const int rc = p.api->compile(args.data(), args.size(), k.source.name.c_str(), k.source.text.data(),
                                k.source.text.size(), &out);
  std::string bytes = out.data ? std::string(out.data, out.size) : std::string("(no message)");
  p.api->release(&out);
  if (rc != 0) fail(SPMV_STATUS_COMPILE_FAILED, "bundle: " + spec.serialize() + ": " + bytes);
  // A bundled kernel is only ever placed by the built-in loader: one it refuses is of no use.
  std::string why;
  if (!load_elf_object(bytes.data(), bytes.size(), &why))
    fail(SPMV_STATUS_INTERNAL_ERROR, "bundle: the built-in loader refuses " + spec.serialize() + ": " + why);
  return BundleEntry{k.key, std::vector<char>(bytes.begin(), bytes.end())};
}

void write_kernel_bundle(const std::string& path, const std::string& compiler,
                         std::vector<BundleEntry> entries) {
  std::sort(entries.begin(), entries.end(),
            [](const BundleEntry& a, const BundleEntry& b) { return a.key < b.key; });
  std::string index;
  size_t index_bytes = 0;
  for (const BundleEntry& e : entries) index_bytes += 4 + e.key.size() + 24;
  auto align = [](uint64_t v) { return (v + 15) & ~uint64_t(15); };
  uint64_t offset = align(kHeaderBytes + compiler.size() + index_bytes);
  for (const BundleEntry& e : entries) {
    put_u32(index, uint32_t(e.key.size()));
    index += e.key;
    put_u64(index, offset);
    put_u64(index, e.object.size());
    put_u64(index, checksum64(e.object.data(), e.object.size()));
    offset = align(offset + e.object.size());
  }
  std::string file(kMagic, sizeof(kMagic));
  put_u32(file, kLayoutVersion);
  put_u32(file, uint32_t(kCacheFormatVersion));
  put_u32(file, uint32_t(entries.size()));
  put_u32(file, uint32_t(compiler.size()));
  put_u64(file, index.size());
  const std::string checked = compiler + index;
  put_u64(file, checksum64(checked.data(), checked.size()));
  file += checked;
  for (const BundleEntry& e : entries) {
    file.resize(align(file.size()), '\0');
    file.append(e.object.data(), e.object.size());
  }
  write_file_atomically(path, file.data(), file.size());
}

std::unique_ptr<KernelBundle> KernelBundle::open(const std::string& path, std::string* why) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    *why = errno == ENOENT ? "absent" : std::string("cannot open: ") + std::strerror(errno);
    return nullptr;
  }
  struct stat st {};
  const bool stat_ok = ::fstat(fd, &st) == 0;
  std::string refused;
  if (!stat_ok)
    refused = std::string("cannot stat: ") + std::strerror(errno);
  else if (!S_ISREG(st.st_mode))
    refused = "not a regular file";
  else if ((st.st_mode & (S_IWGRP | S_IWOTH)) || (st.st_uid != 0 && st.st_uid != ::geteuid()))
    refused = "writable by others than its owner, or owned by another user";  // it holds code we run
  else if (size_t(st.st_size) < kHeaderBytes || size_t(st.st_size) > kMaxBundleBytes)
    refused = "size " + std::to_string(st.st_size) + " bytes is not a bundle's";
  if (!refused.empty()) {
    ::close(fd);
    *why = refused;
    return nullptr;
  }
  const size_t bytes = size_t(st.st_size);
  void* map = ::mmap(nullptr, bytes, PROT_READ, MAP_PRIVATE, fd, 0);
  ::close(fd);
  if (map == MAP_FAILED) {
    *why = std::string("cannot map: ") + std::strerror(errno);
    return nullptr;
  }
  std::unique_ptr<KernelBundle> b(new KernelBundle());
  b->path_ = path;
  b->base_ = static_cast<const char*>(map);
  b->bytes_ = bytes;
  const char* base = b->base_;
  size_t at = sizeof(kMagic);
  uint32_t layout = 0, cache_format = 0, count = 0, compiler_bytes = 0;
  uint64_t index_bytes = 0, index_checksum = 0;
  if (std::memcmp(base, kMagic, sizeof(kMagic)) != 0) {
    *why = "not a spmvjit kernel bundle (magic)";
    return nullptr;
  }
  get(base, bytes, &at, &layout), get(base, bytes, &at, &cache_format), get(base, bytes, &at, &count);
  get(base, bytes, &at, &compiler_bytes), get(base, bytes, &at, &index_bytes),
      get(base, bytes, &at, &index_checksum);
  if (layout != kLayoutVersion || cache_format != uint32_t(kCacheFormatVersion)) {
    *why = "layout " + std::to_string(layout) + ", cache format " + std::to_string(cache_format) +
           " (this library reads " + std::to_string(kLayoutVersion) + ", " +
           std::to_string(kCacheFormatVersion) + ")";
    return nullptr;
  }
  if (compiler_bytes > bytes - at || index_bytes > bytes - at - compiler_bytes) {
    *why = "truncated header";
    return nullptr;
  }
  if (checksum64(base + at, compiler_bytes + index_bytes) != index_checksum) {
    *why = "index checksum mismatch";
    return nullptr;
  }
  b->compiler_.assign(base + at, compiler_bytes);
  at += compiler_bytes;
  const size_t index_end = at + index_bytes;
  for (uint32_t i = 0; i < count; ++i) {
    uint32_t key_bytes = 0;
    Entry e{};
    if (!get(base, index_end, &at, &key_bytes) || key_bytes > index_end - at) {
      *why = "index entry " + std::to_string(i) + " out of bounds";
      return nullptr;
    }
    std::string key(base + at, key_bytes);
    at += key_bytes;
    if (!get(base, index_end, &at, &e.offset) || !get(base, index_end, &at, &e.size) ||
        !get(base, index_end, &at, &e.checksum) || e.offset < index_end || e.offset > bytes ||
        e.size > bytes - e.offset) {
      *why = "index entry " + std::to_string(i) + " out of bounds";
      return nullptr;
    }
    b->entries_.emplace(std::move(key), e);
  }
  if (at != index_end || b->entries_.size() != count) {
    *why = "index size mismatch or repeated keys";
    return nullptr;
  }
  return b;
}

KernelBundle::~KernelBundle() {
  if (base_) ::munmap(const_cast<char*>(base_), bytes_);
}

bool KernelBundle::find(const std::string& key, std::string_view* object, std::string* why) const {
  const auto it = entries_.find(key);
  if (it == entries_.end()) {
    *why = "absent";
    return false;
  }
  const Entry& e = it->second;
  if (checksum64(base_ + e.offset, e.size) != e.checksum) {
    *why = "checksum mismatch in " + path_;
    return false;
  }
  *object = std::string_view(base_ + e.offset, e.size);
  return true;
}

const KernelBundle* process_kernel_bundle() {
  static const std::unique_ptr<KernelBundle> bundle = []() -> std::unique_ptr<KernelBundle> {
    std::vector<std::string> paths;
    const char* env = std::getenv("SPMVJIT_KERNEL_BUNDLE");
    if (env) {
      if (!*env || std::strcmp(env, "0") == 0) return nullptr;
      paths.push_back(env);
    } else {
      for (const std::string& dir : llvm_plugin_dirs()) paths.push_back(dir + "/" + kKernelBundleFile);
    }
    for (const std::string& path : paths) {
      std::string why;
      if (auto b = KernelBundle::open(path, &why)) {
        log_debug("CPU backend: kernel bundle " + path + " (" + std::to_string(b->size()) + " kernels)");
        return b;
      }
      if (why != "absent" || env) {  // a file named by the environment must be there
        log_warn("CPU backend: kernel bundle " + path + " not used: " + why);
        return nullptr;
      }
    }
    return nullptr;
  }();
  return bundle.get();
}

}  // namespace spmvjit
