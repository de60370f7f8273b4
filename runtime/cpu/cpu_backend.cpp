// CPU backend: kernels compiled by clang in process (the LLVM plugin, runtime/cpu/llvm_plugin.hpp),
// loaded by the built-in ELF loader (ORC LLJIT, also in the plugin, for what it refuses), and run
// by a thread pool here.
#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>

#include "core/cpu_count.hpp"
#include "core/digest.hpp"
#include "core/log.hpp"
#include "runtime/backend.hpp"
#include "runtime/cpu/compile_options.hpp"
#include "runtime/cpu/elf_loader.hpp"
#include "runtime/cpu/host_identity.hpp"
#include "runtime/cpu/kernel_bundle.hpp"
#include "runtime/cpu/llvm_plugin.hpp"
#include "runtime/cpu/thread_pool.hpp"

namespace spmvjit {
namespace {

struct HostTarget {
  std::string triple;
  std::string cpu;
  std::vector<std::string> features;  // "+avx2", "-avx512f", ...
  int simd_bytes = 16;
};

HostTarget parse_host(const HostIdentity& id) {
  HostTarget h;
  h.triple = id.triple;
  h.cpu = id.cpu;
  // The plugin lists every feature LLVM reports, sorted by name (canonical for the cache key).
  std::map<std::string, bool> on;
  for (const char *f = id.features.c_str(), *end; *f; f = *end ? end + 1 : end) {
    end = f + std::strcspn(f, ",");
    if (end > f + 1) {
      h.features.emplace_back(f, end);
      on[std::string(f + 1, end)] = *f == '+';
    }
  }
  auto has = [&](const char* f) { return on.count(f) && on[f]; };
  // 512-bit vectors only where the CPU has them; clang otherwise prefers 256 on AVX-512 parts.
  h.simd_bytes = has("avx512f") ? 64 : has("avx") ? 32 : 16;
  return h;
}

// Takes a message the plugin allocated.
std::string take(const spmvjit_llvm_toolchain_v1_t& llvm, spmvjit_llvm_bytes& b) {
  std::string s = b.data ? std::string(b.data, b.size) : std::string("(no message)");
  llvm.release(&b);
  return s;
}

class OrcModule final : public LoadedModule {
 public:
  OrcModule(const spmvjit_llvm_toolchain_v1_t& llvm, spmvjit_llvm_jit* jit, spmvjit_llvm_module* jd)
      : llvm_(llvm), jit_(jit), jd_(jd) {}
  void* entry(const std::string& name) const override {
    std::lock_guard lock(mu_);
    if (auto it = cache_.find(name); it != cache_.end()) return it->second;
    spmvjit_llvm_bytes error{};
    void* p = llvm_.jit_lookup(jit_, jd_, name.c_str(), &error);
    if (!p) fail(SPMV_STATUS_INTERNAL_ERROR, take(llvm_, error));
    cache_[name] = p;
    return p;
  }

 private:
  const spmvjit_llvm_toolchain_v1_t& llvm_;
  spmvjit_llvm_jit* jit_;
  spmvjit_llvm_module* jd_;
  mutable std::mutex mu_;
  mutable std::map<std::string, void*> cache_;
};

// A kernel object placed by the built-in loader (runtime/cpu/elf_loader.hpp).
class ElfModule final : public LoadedModule {
 public:
  explicit ElfModule(std::unique_ptr<ElfImage> image) : image_(std::move(image)) {}
  void* entry(const std::string& name) const override {
    void* p = image_->symbol(name);
    if (!p) fail(SPMV_STATUS_INTERNAL_ERROR, "CPU kernel object has no entry " + name);
    return p;
  }

 private:
  std::unique_ptr<ElfImage> image_;
};

// $SPMVJIT_CPU_LOADER=orc loads every kernel with LLVM's ORC JIT instead of the built-in loader.
bool orc_forced() {
  const char* e = std::getenv("SPMVJIT_CPU_LOADER");
  return e && std::strcmp(e, "orc") == 0;
}

// A plan's share of the process's one pool (runtime/cpu/thread_pool.hpp): at most `threads` of
// its threads, so many plans (or MPI ranks with their own affinity masks) never multiply threads.
class CpuExecutor final : public Executor {
 public:
  explicit CpuExecutor(int threads) : pool_(shared_thread_pool()), threads_(threads) {}
  void run(void* fn, const LaunchStep& step, const SpmvArgs& args, void*) override {
    pool_.run(reinterpret_cast<CpuEntry>(fn), &args, step.grid, threads_);
  }

 private:
  ThreadPool& pool_;
  int threads_;
};

// LLVM (the plugin) is loaded only when needed: to compile, to name a host not seen before, or to
// load an object the built-in loader refuses. A process whose kernels are in the disk cache, on a
// host remembered there, never loads it.
class CpuBackend final : public Backend {
 public:
  explicit CpuBackend(std::string plugin_file)
      : plugin_file_(std::move(plugin_file)), fingerprint_(host_fingerprint(plugin_file_)) {
    info_.backend = BackendKind::cpu;
    info_.threads = process_threads();  // the shared pool's size (core/cpu_count.hpp)
    info_.bandwidth_gbs = 0;
  }
  ~CpuBackend() override {
    if (jit_) llvm_plugin().api->jit_destroy(jit_);
  }

  BackendKind kind() const override { return BackendKind::cpu; }
  void use_cache_dir(const std::string& dir) override {
    if (known_.load(std::memory_order_acquire)) return;
    std::lock_guard lock(identity_mu_);
    if (known_.load(std::memory_order_relaxed)) return;
    HostIdentity id;
    if (read_host_identity(dir, fingerprint_, &id)) {
      log_debug("CPU backend: host " + id.cpu + " as remembered in " + dir + " (LLVM not loaded)");
      set_identity(id);
      return;
    }
    learn_identity();
    // Remembered only when it came from the plugin file the fingerprint describes.
    if (llvm_plugin().path == plugin_file_) write_host_identity(dir, fingerprint_, identity_);
  }
  const TargetInfo& target() const override {
    ensure_identity();
    return info_;
  }
  std::string compiler_version() const override {
    ensure_identity();
    return identity_.clang_version + std::string(" features ") + info_.target;
  }
  std::vector<std::string> compile_options(const KernelSpec& spec) const override {
    ensure_identity();
    return cpu_compile_options(CpuCompileTarget{host_.triple, host_.cpu, host_.features}, spec);
  }

  std::vector<char> compile(const KernelSource& src) override {
    const spmvjit_llvm_toolchain_v1_t& llvm = plugin();
    std::vector<const char*> args;
    for (const auto& o : src.options) args.push_back(o.c_str());
    spmvjit_llvm_bytes out{};
    const int rc =
        llvm.compile(args.data(), args.size(), src.name.c_str(), src.text.data(), src.text.size(), &out);
    if (rc != 0) fail(SPMV_STATUS_COMPILE_FAILED, take(llvm, out));
    std::vector<char> object(out.data, out.data + out.size);
    llvm.release(&out);
    return object;
  }

  std::shared_ptr<LoadedModule> load(const std::vector<char>& binary, const std::string& key) override {
    // Either way every symbol is resolved and relocated now, so a bad object fails here (the
    // cache then recompiles), never in execute.
    std::string why = "forced by SPMVJIT_CPU_LOADER=orc";
    if (!orc_forced())
      if (auto image = load_elf_object(binary.data(), binary.size(), &why))
        return std::make_shared<ElfModule>(std::move(image));
    log_debug("CPU backend: " + key + " loaded by ORC: " + why);
    const spmvjit_llvm_toolchain_v1_t& llvm = plugin();
    std::lock_guard lock(mu_);
    if (!jit_) {  // 1.5-3 ms, once
      spmvjit_llvm_bytes error{};
      jit_ = llvm.jit_create(&error);
      if (!jit_) fail(SPMV_STATUS_INTERNAL_ERROR, take(llvm, error));
    }
    spmvjit_llvm_module* jd = nullptr;
    spmvjit_llvm_bytes error{};
    const int rc = llvm.jit_load(jit_, key.c_str(), binary.data(), binary.size(), &jd, &error);
    if (rc != SPMVJIT_LLVM_OK)
      fail(rc == SPMVJIT_LLVM_BAD_OBJECT ? SPMV_STATUS_COMPILE_FAILED : SPMV_STATUS_INTERNAL_ERROR,
           take(llvm, error));
    return std::make_shared<OrcModule>(llvm, jit_, jd);
  }

  std::shared_ptr<LoadedModule> prebuilt(const KernelSpec& spec, std::string* key) override {
    // The bundle's portable build of this spec, placed by the built-in loader (never ORC), on hosts
    // with the bundle's processor features; each once per process.
    if (orc_forced()) return nullptr;
    ensure_identity();
    if (!host_runs_bundle(host_.triple, host_.features)) return nullptr;
    const KernelBundle* bundle = process_kernel_bundle();
    if (!bundle) return nullptr;
    const std::string tag = spec.serialize();
    {
      std::lock_guard lock(mu_);
      if (auto it = bundled_.find(tag); it != bundled_.end()) {
        *key = it->second.first;
        return it->second.second;
      }
    }
    const BundledKernel k = bundled_kernel(spec, bundle->compiler());
    std::string_view object;
    std::string why;
    if (!bundle->find(k.key, &object, &why)) {
      if (why == "absent")
        log_debug("CPU backend: no bundled kernel for " + tag);
      else
        log_warn("CPU backend: bundled kernel for " + tag + " not used: " + why);
      return nullptr;
    }
    auto image = load_elf_object(object.data(), object.size(), &why);
    if (!image) {
      log_warn("CPU backend: bundled kernel for " + tag + " does not load: " + why);
      return nullptr;
    }
    auto mod = std::make_shared<ElfModule>(std::move(image));
    std::lock_guard lock(mu_);
    auto& slot = bundled_[tag];
    if (!slot.second) slot = {k.key, mod};  // another thread's, if it was first
    *key = slot.first;
    return slot.second;
  }

  std::unique_ptr<Executor> make_executor(int threads) override {
    return std::make_unique<CpuExecutor>(threads);
  }
  // Plans on the CPU run on their host arrays directly: there is no separate device memory.
  void* alloc(size_t) override { fail(SPMV_STATUS_INTERNAL_ERROR, "cpu backend: no device memory"); }
  void free(void*) override {}
  void upload(void*, const void*, size_t) override {}
  void download(void*, const void*, size_t) override {}
  bool is_host() const override { return true; }

 private:
  // The plugin's table, loading it on first use; NO_DEVICE naming every place searched when it
  // does not load.
  static const spmvjit_llvm_toolchain_v1_t& plugin() {
    const LlvmPlugin& p = llvm_plugin();
    if (!p.api) fail(SPMV_STATUS_NO_DEVICE, p.error);
    return *p.api;
  }
  // The rest under identity_mu_.
  void learn_identity() const {
    const spmvjit_llvm_toolchain_v1_t& llvm = plugin();
    set_identity(HostIdentity{llvm.host_triple, llvm.host_cpu, llvm.host_features, llvm.clang_version});
  }
  void set_identity(const HostIdentity& id) const {
    identity_ = id;
    host_ = parse_host(id);
    info_.simd_bytes = host_.simd_bytes;
    std::string feats;
    for (const auto& f : host_.features) feats += f;
    info_.target =
        host_.triple + ":" + host_.cpu + ":" + digest_hex(feats.data(), feats.size()).substr(0, 12);
    known_.store(true, std::memory_order_release);
  }
  void ensure_identity() const {
    if (known_.load(std::memory_order_acquire)) return;
    std::lock_guard lock(identity_mu_);
    if (!known_.load(std::memory_order_relaxed)) learn_identity();
  }

  const std::string plugin_file_;
  const std::string fingerprint_;
  // Written once, under identity_mu_, before known_ is set; read without the lock after.
  mutable std::mutex identity_mu_;
  mutable std::atomic<bool> known_{false};
  mutable HostIdentity identity_;
  mutable HostTarget host_;
  mutable TargetInfo info_;
  std::mutex mu_;  // guards jit_ and bundled_
  spmvjit_llvm_jit* jit_ = nullptr;
  // The bundled kernels placed so far, by spec: key and module.
  std::map<std::string, std::pair<std::string, std::shared_ptr<LoadedModule>>> bundled_;
};

// The plugin file, searched once per process (as the plugin is loaded once): not on every plan.
const std::string& plugin_file() {
  static const std::string file = find_llvm_plugin_file();
  return file;
}

}  // namespace

// Throws NO_DEVICE, naming the plugin and every place searched, when the plugin is missing (one
// that is there but does not load fails the first call that needs it, the same way): like a GPU backend whose
// driver is absent, the build has the backend but this machine cannot run it (backend_available is false).
Backend& cpu_backend() {
  if (plugin_file().empty()) fail(SPMV_STATUS_NO_DEVICE, llvm_plugin().error);
  static CpuBackend b(plugin_file());
  return b;
}

namespace {

const BackendProvider kCpuProvider{
    BackendKind::cpu, [](int) { return !plugin_file().empty(); },
    [](int) -> Backend& { return cpu_backend(); },
    [](const std::string& target) -> Backend& {
      fail(SPMV_STATUS_INVALID_VALUE,
           "the CPU backend only compiles for its own host ('native'), not '" + target + "'");
    }};
SPMVJIT_REGISTER_BACKEND(kCpuProvider);

}  // namespace

}  // namespace spmvjit
