// CPU backend: clang 19 in process (C++ -> optimized object for the host CPU), ORC LLJIT loads.
#include <clang/Basic/DiagnosticOptions.h>
#include <clang/Basic/Version.h>
#include <clang/CodeGen/CodeGenAction.h>
#include <clang/Frontend/CompilerInstance.h>
#include <clang/Frontend/CompilerInvocation.h>
#include <clang/Frontend/TextDiagnosticPrinter.h>
#include <clang/Lex/PreprocessorOptions.h>
#include <llvm/ExecutionEngine/Orc/ExecutionUtils.h>
#include <llvm/ExecutionEngine/Orc/LLJIT.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/Object/ObjectFile.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/TargetParser/Host.h>

#include <atomic>
#include <future>
#include <map>
#include <mutex>
#include <thread>

#include "core/cpu_count.hpp"
#include "core/digest.hpp"
#include "core/log.hpp"
#include "runtime/backend.hpp"
#include "runtime/cpu/thread_pool.hpp"

namespace spmvjit {
namespace {

struct HostTarget {
  std::string triple;
  std::string cpu;
  std::vector<std::string> features;  // "+avx2", "-avx512f", ...
  int simd_bytes = 16;
};

HostTarget detect_host() {
  HostTarget h;
  h.triple = llvm::sys::getProcessTriple();
  h.cpu = llvm::sys::getHostCPUName().str();
  const llvm::StringMap<bool> feats = llvm::sys::getHostCPUFeatures();
  std::map<std::string, bool> sorted;  // canonical order for the cache key
  for (const auto& f : feats) sorted[f.getKey().str()] = f.getValue();
  for (const auto& [name, on] : sorted) h.features.push_back((on ? "+" : "-") + name);
  auto has = [&](const char* f) { return sorted.count(f) && sorted[f]; };
  // 512-bit vectors only where the CPU has them; clang otherwise prefers 256 on AVX-512 parts.
  h.simd_bytes = has("avx512f") ? 64 : has("avx") ? 32 : 16;
  return h;
}

class OrcModule final : public LoadedModule {
 public:
  OrcModule(llvm::orc::LLJIT& jit, llvm::orc::JITDylib& jd) : jit_(jit), jd_(jd) {}
  void* entry(const std::string& name) const override {
    std::lock_guard lock(mu_);
    if (auto it = cache_.find(name); it != cache_.end()) return it->second;
    auto sym = jit_.lookup(jd_, name);
    if (!sym)
      fail(SPMV_STATUS_INTERNAL_ERROR, "JIT module has no entry " + name + ": " +
                                           llvm::toString(sym.takeError()));
    void* p = sym->toPtr<void*>();
    cache_[name] = p;
    return p;
  }

 private:
  llvm::orc::LLJIT& jit_;
  llvm::orc::JITDylib& jd_;
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
  CpuBackend() : host_(detect_host()) {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
    info_.backend = BackendKind::cpu;
    info_.simd_bytes = host_.simd_bytes;
    info_.threads = process_threads();  // the shared pool's size (core/cpu_count.hpp)
    info_.bandwidth_gbs = 0;
    std::string feats;
    for (const auto& f : host_.features) feats += f;
    info_.target = host_.triple + ":" + host_.cpu + ":" + digest_hex(feats.data(), feats.size()).substr(0, 12);
    // The JIT takes 1.5-3 ms to set up: on its own thread while the first plan analyses and
    // converts its matrix (jit() waits for it).
    jit_setup_ = std::async(std::launch::async, [] { return llvm::orc::LLJITBuilder().create(); });
  }

  BackendKind kind() const override { return BackendKind::cpu; }
  const TargetInfo& target() const override { return info_; }
  std::string compiler_version() const override {
    return clang::getClangFullVersion() + " features " + info_.target;
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
    std::string log;
    llvm::raw_string_ostream log_os(log);
    auto diag_opts = llvm::makeIntrusiveRefCnt<clang::DiagnosticOptions>();
    auto* printer = new clang::TextDiagnosticPrinter(log_os, diag_opts.get());
    auto diags = llvm::makeIntrusiveRefCnt<clang::DiagnosticsEngine>(
        llvm::makeIntrusiveRefCnt<clang::DiagnosticIDs>(), diag_opts, printer);
    std::vector<const char*> args;
    for (const auto& o : src.options) args.push_back(o.c_str());
    args.push_back(src.name.c_str());
    auto inv = std::make_shared<clang::CompilerInvocation>();
    if (!clang::CompilerInvocation::CreateFromArgs(*inv, args, *diags))
      fail(SPMV_STATUS_COMPILE_FAILED, "clang rejected the options: " + log);
    inv->getPreprocessorOpts().addRemappedFile(
        src.name, llvm::MemoryBuffer::getMemBufferCopy(src.text, src.name).release());
    inv->getFrontendOpts().ProgramAction = clang::frontend::EmitObj;
    clang::CompilerInstance ci;
    ci.setInvocation(inv);
    ci.createDiagnostics(printer, false);
    ci.setVerboseOutputStream(log_os);  // "N errors generated." goes to the log, not stderr
    llvm::SmallVector<char, 0> object;
    ci.setOutputStream(std::make_unique<llvm::raw_svector_ostream>(object));
    llvm::LLVMContext ctx;
    clang::EmitObjAction action(&ctx);
    const bool ok = ci.ExecuteAction(action);
    if (!ok || ci.getDiagnostics().hasErrorOccurred() || object.empty())
      fail(SPMV_STATUS_COMPILE_FAILED, "clang failed to compile " + src.name + ":\n" + log);
    return std::vector<char>(object.begin(), object.end());
  }

  std::shared_ptr<LoadedModule> load(const std::vector<char>& binary, const std::string& key) override {
    std::lock_guard lock(mu_);
    llvm::orc::LLJIT& j = jit();
    static std::atomic<int> counter{0};
    auto jd = j.createJITDylib("spmvjit_" + key + "_" + std::to_string(counter++));
    if (!jd) fail(SPMV_STATUS_INTERNAL_ERROR, "ORC: " + llvm::toString(jd.takeError()));
    auto gen = llvm::orc::DynamicLibrarySearchGenerator::GetForCurrentProcess(
        j.getDataLayout().getGlobalPrefix());
    if (gen) jd->addGenerator(std::move(*gen));
    else llvm::consumeError(gen.takeError());
    auto buf = llvm::MemoryBuffer::getMemBufferCopy(llvm::StringRef(binary.data(), binary.size()), key);
    if (auto err = j.addObjectFile(*jd, std::move(buf)))
      fail(SPMV_STATUS_COMPILE_FAILED, "ORC could not add the object: " + llvm::toString(std::move(err)));
    auto mod = std::make_shared<OrcModule>(j, *jd);
    // Link every exported function now, so a bad object fails here (the cache then recompiles),
    // never in execute.
    auto obj = llvm::object::ObjectFile::createObjectFile(
        llvm::MemoryBufferRef(llvm::StringRef(binary.data(), binary.size()), key));
    if (!obj) fail(SPMV_STATUS_COMPILE_FAILED, "not an object file: " + llvm::toString(obj.takeError()));
    int exported = 0;
    for (const llvm::object::SymbolRef& sym : (*obj)->symbols()) {
      auto flags = sym.getFlags();
      auto type = sym.getType();
      auto name = sym.getName();
      if (!flags || !type || !name) {
        llvm::consumeError(flags.takeError()), llvm::consumeError(type.takeError()),
            llvm::consumeError(name.takeError());
        continue;
      }
      if ((*flags & llvm::object::SymbolRef::SF_Global) &&
          !(*flags & llvm::object::SymbolRef::SF_Undefined) && *type == llvm::object::SymbolRef::ST_Function)
        mod->entry(name->str()), ++exported;
    }
    if (!exported) fail(SPMV_STATUS_COMPILE_FAILED, "kernel object " + key + " exports no function");
    return mod;
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
  llvm::orc::LLJIT& jit() {  // under mu_
    if (!jit_) {
      auto j = jit_setup_.get();
      if (!j) fail(SPMV_STATUS_INTERNAL_ERROR, "ORC LLJIT: " + llvm::toString(j.takeError()));
      jit_ = std::move(*j);
    }
    return *jit_;
  }

  HostTarget host_;
  TargetInfo info_;
  std::mutex mu_;
  std::future<llvm::Expected<std::unique_ptr<llvm::orc::LLJIT>>> jit_setup_;
  std::unique_ptr<llvm::orc::LLJIT> jit_;
};

}  // namespace

Backend& cpu_backend() {
  static CpuBackend b;
  return b;
}

namespace {

const BackendProvider kCpuProvider{
    BackendKind::cpu, [](int) { return true; }, [](int) -> Backend& { return cpu_backend(); },
    [](const std::string& target) -> Backend& {
      fail(SPMV_STATUS_INVALID_VALUE,
           "the CPU backend only compiles for its own host ('native'), not '" + target + "'");
    }};
SPMVJIT_REGISTER_BACKEND(kCpuProvider);

}  // namespace

}  // namespace spmvjit
