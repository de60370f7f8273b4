// The kernel cache: loaded modules in memory, binaries on disk, the compiler as last resort.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "runtime/backend.hpp"

namespace spmvjit {

struct CacheOutcome {
  std::string key;
  std::string where;  // "memory", "disk", "compiled" or (set by the plan) "built-in"
  double generate_seconds = 0;
  double compile_seconds = 0;  // 0 unless compiled
  double load_seconds = 0;     // reading + loading the binary
  std::string note;            // e.g. why a disk entry was rejected
};

// The directory a plan uses: `requested` if non-null ("" = memory only), else
// $SPMVJIT_CACHE_DIR, $XDG_CACHE_HOME/spmvjit, ~/.cache/spmvjit. Whether it may be used (ours,
// not writable by others; created 0700) is checked by each lookup, not here.
std::string resolve_cache_dir(const char* requested);

// Memory -> disk -> compile. Thread-safe; concurrent requests for one key compile once.
// A corrupt or unloadable disk entry is logged and recompiled; an unwritable directory degrades
// to memory only with one warning per directory. With compile = false, a kernel in neither cache,
// or one another thread is compiling right now, gives nullptr (outcome->where "absent").
std::shared_ptr<LoadedModule> get_kernel(Backend& backend, const KernelSpec& spec,
                                         const std::string& cache_dir, CacheOutcome* outcome,
                                         bool compile = true);

// The module of `spec` when this process already loaded it (no source generation, no disk),
// else nullptr.
std::shared_ptr<LoadedModule> find_loaded_kernel(Backend& backend, const KernelSpec& spec,
                                                 CacheOutcome* outcome = nullptr);

// Compiles into the disk cache without loading (warmup). Returns true if it compiled. Throws
// IO_ERROR when `cache_dir` is not usable (not ours, writable by others, cannot be created, or a
// write there failed, this one included), where get_kernel goes on with memory only. Thread-safe:
// distinct specs compile concurrently, one spec once.
bool ensure_cached(Backend& backend, const KernelSpec& spec, const std::string& cache_dir,
                   CacheOutcome* outcome);
// Throws as ensure_cached does when `cache_dir` cannot hold kernels on disk; INVALID_VALUE for "".
void require_disk_cache(const std::string& cache_dir);

// The largest disk entry read: a bigger file (or a header claiming more) is refused unread.
constexpr size_t kMaxCacheEntryBytes = size_t(256) << 20;

// Disk entry I/O, exposed for tests. read returns false and sets `why` on any defect, a file
// that is not a regular one of this user's (read_private_file) included; "absent" when none.
bool read_cache_entry(const std::string& path, const std::string& key, std::vector<char>* payload,
                      std::string* why);
// Throws IO_ERROR on failure; never leaves a partial file under the final name, nor a temporary.
void write_cache_entry(const std::string& path, const std::string& key, const std::string& spec,
                       const std::vector<char>& payload);
std::string cache_entry_path(const std::string& dir, const std::string& key);

}  // namespace spmvjit
