// CPU backend: kernels compiled by clang in process and loaded by ORC LLJIT, both in the LLVM
// plugin (runtime/cpu/llvm_plugin.hpp), and run by a thread pool here.
#include <algorithm>
#include <atomic>
#include <cstring>
#include <future>
#include <map>
#include <mutex>
#include <thread>

#include "core/cpu_count.hpp"
#include "core/digest.hpp"
#include "core/log.hpp"
#include "runtime/backend.hpp"
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

HostTarget detect_host(const spmvjit_llvm_toolchain_v1_t& llvm) {
  HostTarget h;
  h.triple = llvm.host_triple;
  h.cpu = llvm.host_cpu;
  // The plugin lists every feature LLVM reports, sorted by name (canonical for the cache key).
  std::map<std::string, bool> on;
  for (const char *f = llvm.host_features, *end; *f; f = *end ? end + 1 : end) {
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

class CpuBackend final : public Backend {
 public:
  explicit CpuBackend(const spmvjit_llvm_toolchain_v1_t& llvm) : llvm_(llvm), host_(detect_host(llvm)) {
    info_.backend = BackendKind::cpu;
    info_.simd_bytes = host_.simd_bytes;
    info_.threads = process_threads();  // the shared pool's size (core/cpu_count.hpp)
    info_.bandwidth_gbs = 0;
    std::string feats;
    for (const auto& f : host_.features) feats += f;
    info_.target = host_.triple + ":" + host_.cpu + ":" + digest_hex(feats.data(), feats.size()).substr(0, 12);
    // The JIT takes 1.5-3 ms to set up: on its own thread while the first plan analyses and
    // converts its matrix (jit() waits for it).
    jit_setup_ = std::async(std::launch::async, [&llvm]() -> std::pair<spmvjit_llvm_jit*, std::string> {
      spmvjit_llvm_bytes error{};
      spmvjit_llvm_jit* jit = llvm.jit_create(&error);
      return {jit, jit ? std::string() : take(llvm, error)};
    });
  }
  ~CpuBackend() override {
    if (jit_setup_.valid()) jit_ = jit_setup_.get().first;  // never taken: no module was loaded
    if (jit_) llvm_.jit_destroy(jit_);
  }

  BackendKind kind() const override { return BackendKind::cpu; }
  const TargetInfo& target() const override { return info_; }
  std::string compiler_version() const override {
    return llvm_.clang_version + std::string(" features ") + info_.target;
  }
  std::vector<std::string> compile_options(const KernelSpec&) const override {
    std::vector<std::string> o = {"-triple", host_.triple, "-target-cpu", host_.cpu};
    for (const auto& f : host_.features) {
      o.push_back("-target-feature");
      o.push_back(f);
    }
    // -mreassociate lets the vectorizer split CSR's row sums; no finite-math: NaN/Inf propagate.
    // 256-bit vectors: SELL with 16 rows per slice ran 2.2x faster than with 512-bit gathers
    // (Zen 4, single thread, 20 nonzeros/row: 12.3 vs 27.1 ms).
    for (const char* s : {"-x", "c++", "-std=c++20", "-O3", "-vectorize-loops", "-vectorize-slp",
                          "-ffp-contract=fast", "-mreassociate", "-mprefer-vector-width=256", "-fno-signed-zeros",
                          "-mrelocation-model", "pic", "-pic-level", "2", "-nostdsysteminc",
                          "-nobuiltininc", "-w"})
      o.push_back(s);
    return o;
  }

  std::vector<char> compile(const KernelSource& src) override {
    std::vector<const char*> args;
    for (const auto& o : src.options) args.push_back(o.c_str());
    spmvjit_llvm_bytes out{};
    const int rc =
        llvm_.compile(args.data(), args.size(), src.name.c_str(), src.text.data(), src.text.size(), &out);
    if (rc != 0) fail(SPMV_STATUS_COMPILE_FAILED, take(llvm_, out));
    std::vector<char> object(out.data, out.data + out.size);
    llvm_.release(&out);
    return object;
  }

  std::shared_ptr<LoadedModule> load(const std::vector<char>& binary, const std::string& key) override {
    std::lock_guard lock(mu_);
    spmvjit_llvm_jit* j = jit();
    spmvjit_llvm_module* jd = nullptr;
    spmvjit_llvm_bytes error{};
    // The plugin links every exported function now, so a bad object fails here (the cache then
    // recompiles), never in execute.
    const int rc = llvm_.jit_load(j, key.c_str(), binary.data(), binary.size(), &jd, &error);
    if (rc != SPMVJIT_LLVM_OK)
      fail(rc == SPMVJIT_LLVM_BAD_OBJECT ? SPMV_STATUS_COMPILE_FAILED : SPMV_STATUS_INTERNAL_ERROR,
           take(llvm_, error));
    return std::make_shared<OrcModule>(llvm_, j, jd);
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
  spmvjit_llvm_jit* jit() {  // under mu_
    if (!jit_) {
      if (!jit_setup_.valid()) fail(SPMV_STATUS_INTERNAL_ERROR, jit_error_);
      auto [j, error] = jit_setup_.get();
      if (!j) fail(SPMV_STATUS_INTERNAL_ERROR, jit_error_ = error);
      jit_ = j;
    }
    return jit_;
  }

  const spmvjit_llvm_toolchain_v1_t& llvm_;
  HostTarget host_;
  TargetInfo info_;
  std::mutex mu_;
  std::future<std::pair<spmvjit_llvm_jit*, std::string>> jit_setup_;
  spmvjit_llvm_jit* jit_ = nullptr;
  std::string jit_error_;  // why the JIT could not be created, for every later load
};

}  // namespace

// Throws NO_DEVICE, naming the plugin and every place searched, when the plugin is missing or
// does not load: like a GPU backend whose driver is absent, the build has the backend but this
// machine cannot run it (backend_available is false).
Backend& cpu_backend() {
  const LlvmPlugin& plugin = llvm_plugin();
  if (!plugin.api) fail(SPMV_STATUS_NO_DEVICE, plugin.error);
  static CpuBackend b(*plugin.api);
  return b;
}

namespace {

const BackendProvider kCpuProvider{
    BackendKind::cpu, [](int) { return llvm_plugin().api != nullptr; },
    [](int) -> Backend& { return cpu_backend(); },
    [](const std::string& target) -> Backend& {
      fail(SPMV_STATUS_INVALID_VALUE,
           "the CPU backend only compiles for its own host ('native'), not '" + target + "'");
    }};
SPMVJIT_REGISTER_BACKEND(kCpuProvider);

}  // namespace

}  // namespace spmvjit
