// See host_identity.hpp.
#include "runtime/cpu/host_identity.hpp"

#include <sys/stat.h>

#include <cstdint>
#include <cstring>
#include <vector>

#if defined(__x86_64__)
#include <cpuid.h>
#endif

#include <spmvjit/version.h>

#include "core/digest.hpp"
#include "core/error.hpp"
#include "core/log.hpp"
#include "core/private_file.hpp"
#include "runtime/cache/kernel_cache.hpp"

namespace spmvjit {
namespace {

#if defined(__x86_64__)
// The leaves llvm::sys::getHostCPUName and getHostCPUFeatures read (LLVM 19, Host.cpp), and XCR0.
std::string cpuid_words() {
  std::string out;
  auto put = [&](uint32_t v) { out.append(reinterpret_cast<const char*>(&v), sizeof v); };
  unsigned a, b, c, d;
  if (!__get_cpuid_count(0, 0, &a, &b, &c, &d)) return {};
  const unsigned max_leaf = a;
  put(a), put(b), put(c), put(d);
  __cpuid_count(0x80000000u, 0, a, b, c, d);
  const unsigned max_ext = a;
  struct Leaf {
    unsigned leaf, sub;
  };
  const Leaf leaves[] = {{1, 0},           {7, 0},           {7, 1},           {0xd, 1},
                         {0x14, 0},        {0x19, 0},        {0x24, 0},        {0x80000001u, 0},
                         {0x80000002u, 0}, {0x80000003u, 0}, {0x80000004u, 0}, {0x80000008u, 0}};
  unsigned leaf1_ecx = 0;
  for (const Leaf& l : leaves) {
    if (l.leaf < 0x80000000u ? l.leaf > max_leaf : l.leaf > max_ext) {
      put(0), put(0), put(0), put(0);
      continue;
    }
    __cpuid_count(l.leaf, l.sub, a, b, c, d);
    if (l.leaf == 1) {
      b &= 0x00ffffffu;  // bits 24-31: this core's initial APIC id
      leaf1_ecx = c;
    }
    put(a), put(b), put(c), put(d);
  }
  if (leaf1_ecx & (1u << 27)) {  // OSXSAVE: XGETBV is there
    uint32_t lo, hi;
    __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    put(lo), put(hi);
  }
  return out;
}
#else
std::string cpuid_words() { return {}; }
#endif

std::string identity_path(const std::string& dir, const std::string& key) {
  return dir + "/" + key + ".host";
}
std::string identity_key(const std::string& fingerprint) {
  return digest_hex("cpu host identity\n" + fingerprint);
}

}  // namespace

std::string host_fingerprint(const std::string& plugin_path) {
  const std::string words = cpuid_words();
  struct stat st;
  if (words.empty() || plugin_path.empty() || ::stat(plugin_path.c_str(), &st) != 0) return {};
  std::string s = words;
  s += "\nplugin " + plugin_path + " " + std::to_string(st.st_dev) + " " + std::to_string(st.st_ino) + " " +
       std::to_string(st.st_size) + " " + std::to_string(st.st_mtim.tv_sec) + "." +
       std::to_string(st.st_mtim.tv_nsec);
  s += "\nspmvjit " SPMVJIT_VERSION_STRING;
  return digest_hex(s);
}

bool read_host_identity(const std::string& dir, const std::string& fingerprint, HostIdentity* id) {
  if (dir.empty() || fingerprint.empty()) return false;
  try {
    if (!ensure_private_dir(dir).empty()) return false;
    const std::string key = identity_key(fingerprint);
    std::vector<char> payload;
    std::string why;
    if (!read_cache_entry(identity_path(dir, key), key, &payload, &why)) {
      if (why != "absent") log_debug("CPU backend: host identity in " + dir + " not used: " + why);
      return false;
    }
    // Four lines: triple, cpu, features, clang version.
    std::vector<std::string> lines(1);
    for (char ch : payload)
      if (ch == '\n')
        lines.emplace_back();
      else
        lines.back() += ch;
    if (lines.size() != 5 || !lines[4].empty() || lines[0].empty() || lines[1].empty() || lines[3].empty())
      return false;
    *id = HostIdentity{lines[0], lines[1], lines[2], lines[3]};
    return true;
  } catch (const std::exception& e) {
    log_debug(std::string("CPU backend: host identity not read: ") + e.what());
    return false;
  }
}

void write_host_identity(const std::string& dir, const std::string& fingerprint, const HostIdentity& id) {
  if (dir.empty() || fingerprint.empty()) return;
  for (const std::string* f : {&id.triple, &id.cpu, &id.features, &id.clang_version})
    if (f->find('\n') != std::string::npos) return;
  try {
    if (!ensure_private_dir(dir).empty()) return;
    const std::string key = identity_key(fingerprint);
    const std::string text = id.triple + "\n" + id.cpu + "\n" + id.features + "\n" + id.clang_version + "\n";
    write_cache_entry(identity_path(dir, key), key, "cpu host identity",
                      std::vector<char>(text.begin(), text.end()));
  } catch (const std::exception& e) {
    log_debug(std::string("CPU backend: host identity not remembered: ") + e.what());
  }
}

}  // namespace spmvjit
