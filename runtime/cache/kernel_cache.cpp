// Kernel cache: memory map of loaded modules, disk entries written by rename with a checksum.
#include "runtime/cache/kernel_cache.hpp"

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>

#include "core/digest.hpp"
#include "core/error.hpp"
#include "core/log.hpp"
#include "core/private_file.hpp"

namespace spmvjit {
namespace {

constexpr char kMagic[8] = {'S', 'P', 'M', 'V', 'J', 'I', 'T', '1'};

using Clock = std::chrono::steady_clock;
double since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

struct MemoryCache {
  std::mutex mu;
  std::map<std::string, std::shared_ptr<LoadedModule>> modules;  // backend-tagged key
  // The same modules by backend-tagged spec: a repeated lookup skips generating the source and
  // hashing it (0.1-0.3 ms a module), which the key needs. Within one process a spec always
  // generates the same source (the templates are compiled in) for the same compiler.
  std::map<std::string, std::pair<std::string, std::shared_ptr<LoadedModule>>> by_spec;  // -> key, module
  std::map<std::string, std::shared_ptr<std::mutex>> inflight;
  // Directories this process uses memory only for (untrusted, uncreatable or unwritable): warned
  // about once each.
  std::map<std::string, std::string> memory_only_dirs;  // -> why
};

MemoryCache& memory() {
  static MemoryCache m;
  return m;
}

void put_u64(std::vector<char>& out, uint64_t v) {
  for (int i = 0; i < 8; ++i) out.push_back(char((v >> (8 * i)) & 0xff));
}
uint64_t get_u64(const char* p) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v |= uint64_t(uint8_t(p[i])) << (8 * i);
  return v;
}

}  // namespace

std::string resolve_cache_dir(const char* requested) {
  if (requested) return requested;
  if (const char* e = std::getenv("SPMVJIT_CACHE_DIR"); e && *e) return e;
  if (const char* e = std::getenv("XDG_CACHE_HOME"); e && *e) return std::string(e) + "/spmvjit";
  if (const char* e = std::getenv("HOME"); e && *e) return std::string(e) + "/.cache/spmvjit";
  return "";
}

std::string cache_entry_path(const std::string& dir, const std::string& key) {
  return dir + "/" + key + ".bin";
}

// Layout (u64 little-endian): magic[8] | key_len u64 | key | spec_len u64 | spec |
//         payload_len u64 | payload_checksum u64 | payload
// Changing it needs a kCacheFormatVersion bump (tests/data/golden/cache_entries.txt pins it).
void write_cache_entry(const std::string& path, const std::string& key, const std::string& spec,
                       const std::vector<char>& payload) {
  std::vector<char> out(kMagic, kMagic + 8);
  put_u64(out, key.size());
  out.insert(out.end(), key.begin(), key.end());
  put_u64(out, spec.size());
  out.insert(out.end(), spec.begin(), spec.end());
  put_u64(out, payload.size());
  put_u64(out, checksum64(payload.data(), payload.size()));
  out.insert(out.end(), payload.begin(), payload.end());
  write_file_atomically(path, out.data(), out.size());
}

bool read_cache_entry(const std::string& path, const std::string& key, std::vector<char>* payload,
                      std::string* why) {
  std::vector<char> all;
  switch (read_private_file(path, kMaxCacheEntryBytes, &all, why)) {
    case ReadStatus::ok: break;
    // ENOTDIR: the cache directory's path runs through a file, so no entry can exist there;
    // the write side reports that directory once.
    case ReadStatus::absent: return *why = "absent", false;
    case ReadStatus::rejected: return false;
  }
  size_t pos = 0;
  // Lengths come from the file: compared with what is left, never added to a position first.
  auto need = [&](uint64_t k) { return pos <= all.size() && k <= all.size() - pos; };
  if (!need(16) || std::memcmp(all.data(), kMagic, 8) != 0)
    return *why = "bad magic or truncated header", false;
  pos = 8;
  const uint64_t key_len = get_u64(&all[pos]);
  pos += 8;
  if (key_len != key.size() || !need(key_len + 8) || std::memcmp(&all[pos], key.data(), key_len) != 0)
    return *why = "key mismatch", false;
  pos += key_len;
  const uint64_t spec_len = get_u64(&all[pos]);
  pos += 8;
  if (spec_len > all.size() || !need(spec_len + 16)) return *why = "truncated header", false;
  pos += spec_len;
  const uint64_t len = get_u64(&all[pos]);
  const uint64_t sum = get_u64(&all[pos + 8]);
  pos += 16;
  if (len > kMaxCacheEntryBytes)
    return *why = "payload of " + std::to_string(len) + " bytes beyond the limit", false;
  if (all.size() - pos != len) return *why = "truncated payload", false;
  if (checksum64(all.data() + pos, len) != sum) return *why = "checksum mismatch", false;
  // The payload in place: no second buffer of its size.
  all.erase(all.begin(), all.begin() + long(pos));
  payload->swap(all);
  return true;
}

namespace {

// Memory only for `dir` from now on, with one warning per directory.
void use_memory_only(const std::string& dir, const std::string& why) {
  MemoryCache& m = memory();
  std::lock_guard lock(m.mu);
  if (m.memory_only_dirs.emplace(dir, why).second)
    log_warn("cache: " + why + "; continuing with the memory cache only");
}

// `dir` when its entries may be read and written, else "" (memory only; `why` says why). Native code is
// loaded only from a directory this user owns and no one else may write (ensure_private_dir creates it 0700);
// checked on each disk lookup, since a directory can be replaced while the process runs.
std::string usable_dir(const std::string& dir, std::string* why = nullptr) {
  if (dir.empty()) return dir;
  {
    MemoryCache& m = memory();
    std::lock_guard lock(m.mu);
    if (auto it = m.memory_only_dirs.find(dir); it != m.memory_only_dirs.end()) {
      if (why) *why = it->second;
      return "";
    }
  }
  if (std::string problem = ensure_private_dir(dir); !problem.empty()) {
    use_memory_only(dir, problem);
    if (why) *why = std::move(problem);
    return "";
  }
  return dir;
}

// Compiles (or reads) the binary for spec; records timings in `o`. Caller holds the key's lock.
std::vector<char> obtain_binary(Backend& backend, const KernelSpec& spec, const KernelSource& src,
                                const std::string& cache_dir, CacheOutcome& o, bool* from_disk,
                                bool compile = true) {
  *from_disk = false;
  const std::string dir = usable_dir(cache_dir);
  const std::string path = dir.empty() ? "" : cache_entry_path(dir, o.key);
  std::vector<char> binary;
  if (!dir.empty()) {
    const auto t0 = Clock::now();
    std::string why;
    if (read_cache_entry(path, o.key, &binary, &why)) {
      o.load_seconds += since(t0);
      *from_disk = true;
      return binary;
    }
    if (why != "absent") {
      // Whatever is there (a FIFO, a symlink, a file of another user's) is never loaded; the
      // write below renames a fresh entry over it, without following a link.
      o.note = "disk entry " + path + " rejected (" + why + "); recompiled";
      log_warn("cache: " + o.note);
    }
  }
  if (!compile) return {};
  const auto t0 = Clock::now();
  binary = backend.compile(src);
  o.compile_seconds = since(t0);
  log_debug("cache: compiled " + spec.serialize() + " in " + std::to_string(o.compile_seconds * 1e3) + " ms");
  if (!dir.empty()) {
    try {
      write_cache_entry(path, o.key, spec.serialize(), binary);
    } catch (const Error& e) {
      use_memory_only(dir, e.what());
    }
  }
  return binary;
}

std::shared_ptr<std::mutex> key_lock(const std::string& tag) {
  MemoryCache& m = memory();
  std::lock_guard lock(m.mu);
  auto& p = m.inflight[tag];
  if (!p) p = std::make_shared<std::mutex>();
  return p;
}

}  // namespace

namespace {

std::string loaded_tag(const Backend& backend, const KernelSpec& spec) {
  return std::to_string(reinterpret_cast<uintptr_t>(&backend)) + ":" + backend.compiler_version() + ":" +
         spec.serialize();
}

}  // namespace

std::shared_ptr<LoadedModule> find_loaded_kernel(Backend& backend, const KernelSpec& spec,
                                                 CacheOutcome* outcome) {
  MemoryCache& m = memory();
  const std::string tag = loaded_tag(backend, spec);
  std::lock_guard guard(m.mu);
  const auto it = m.by_spec.find(tag);
  if (it == m.by_spec.end()) return nullptr;
  if (outcome) {
    *outcome = CacheOutcome{};
    outcome->key = it->second.first;
    outcome->where = "memory";
  }
  return it->second.second;
}

std::shared_ptr<LoadedModule> get_kernel(Backend& backend, const KernelSpec& spec,
                                         const std::string& cache_dir, CacheOutcome* outcome, bool compile) {
  if (auto mod = find_loaded_kernel(backend, spec, outcome)) return mod;
  CacheOutcome o;
  MemoryCache& m = memory();
  const std::string backend_tag = std::to_string(reinterpret_cast<uintptr_t>(&backend)) + ":";
  const std::string spec_tag = loaded_tag(backend, spec);
  TraceSteps trace("kernel lookup");
  auto t0 = Clock::now();
  const KernelSource src = generate_source_for(backend, spec);
  o.key = cache_key(spec, src, backend.compiler_version());
  o.generate_seconds = since(t0);
  trace.step("source and key");
  const std::string tag = backend_tag + o.key;
  auto lock = key_lock(tag);
  std::unique_lock key_guard(*lock, std::defer_lock);
  if (compile) {
    key_guard.lock();
  } else if (!key_guard.try_lock()) {
    // Another thread is compiling (or loading) this kernel, e.g. the background tier: a lookup
    // that may not compile does not wait for it either (its plan takes the quick variant).
    o.where = "absent";
    if (outcome) *outcome = o;
    return nullptr;
  }
  {
    std::lock_guard guard(m.mu);
    if (auto it = m.modules.find(tag); it != m.modules.end()) {
      m.by_spec[spec_tag] = {o.key, it->second};
      o.where = "memory";
      if (outcome) *outcome = o;
      return it->second;
    }
  }
  bool from_disk = false;
  trace.begin();
  std::vector<char> binary = obtain_binary(backend, spec, src, cache_dir, o, &from_disk, compile);
  trace.step(from_disk ? "disk entry read" : "binary obtained");
  if (binary.empty() && !compile) {
    o.where = "absent";
    if (outcome) *outcome = o;
    return nullptr;
  }
  std::shared_ptr<LoadedModule> mod;
  t0 = Clock::now();
  try {
    mod = backend.load(binary, o.key);
  } catch (const Error& e) {
    if (!from_disk) throw;
    // A disk entry that passed its checksum but does not load (e.g. written by a different
    // toolchain build with the same version string): recompile and overwrite it.
    o.note = std::string("disk entry failed to load (") + e.what() + "); recompiled";
    log_warn("cache: " + o.note);
    const auto t1 = Clock::now();
    binary = backend.compile(src);
    o.compile_seconds = since(t1);
    if (!cache_dir.empty()) {
      try {
        write_cache_entry(cache_entry_path(cache_dir, o.key), o.key, spec.serialize(), binary);
      } catch (const Error&) {
      }
    }
    from_disk = false;
    mod = backend.load(binary, o.key);
  }
  o.load_seconds += since(t0);
  trace.step("loaded");
  o.where = from_disk ? "disk" : "compiled";
  {
    std::lock_guard guard(m.mu);
    m.modules[tag] = mod;
    m.by_spec[spec_tag] = {o.key, mod};
  }
  if (outcome) *outcome = o;
  return mod;
}

void require_disk_cache(const std::string& cache_dir) {
  if (cache_dir.empty()) fail(SPMV_STATUS_INVALID_VALUE, "warmup needs a cache directory");
  if (std::string why; usable_dir(cache_dir, &why).empty())
    fail(SPMV_STATUS_IO_ERROR, "cannot cache kernels on disk: " + why);
}

bool ensure_cached(Backend& backend, const KernelSpec& spec, const std::string& cache_dir,
                   CacheOutcome* outcome) {
  // Warmup exists to fill the disk: compiling into memory only would be time spent for nothing.
  if (!cache_dir.empty()) require_disk_cache(cache_dir);
  CacheOutcome o;
  const KernelSource src = generate_source_for(backend, spec);
  o.key = cache_key(spec, src, backend.compiler_version());
  auto lock = key_lock(std::to_string(reinterpret_cast<uintptr_t>(&backend)) + ":" + o.key);
  std::lock_guard key_guard(*lock);
  bool from_disk = false;
  obtain_binary(backend, spec, src, cache_dir, o, &from_disk);
  // A failed write turned the directory to memory only (warned once): this kernel is not on disk.
  if (!cache_dir.empty()) require_disk_cache(cache_dir);
  o.where = from_disk ? "disk" : "compiled";
  if (outcome) *outcome = o;
  return !from_disk;
}

}  // namespace spmvjit
