// The LLVM plugin (libspmvjit_llvm.so): clang in process (C++ -> object for the host CPU) and ORC;
// with lld, HIP -> AMDGPU code objects too (the HIP backend, for processors hipRTC does not know).
// Only the C table of runtime/cpu/llvm_toolchain_abi.h leaves this file: no spmvjit code, no
// exception, no LLVM type.
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
#include <llvm/Support/FileSystem.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/TargetParser/Host.h>
#include <llvm/TargetParser/TargetParser.h>
#ifdef SPMVJIT_LLVM_LLD
#include <lld/Common/Driver.h>
LLD_HAS_DRIVER(elf)
// The AMDGPU target's registration (libLLVM exports it; the plugin is built only against an LLVM
// that has the target, see CMakeLists.txt).
extern "C" void LLVMInitializeAMDGPUTargetInfo();
extern "C" void LLVMInitializeAMDGPUTarget();
extern "C" void LLVMInitializeAMDGPUTargetMC();
extern "C" void LLVMInitializeAMDGPUAsmPrinter();
#endif

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "runtime/cpu/llvm_toolchain_abi.h"

struct spmvjit_llvm_jit {
  std::unique_ptr<llvm::orc::LLJIT> jit;
  std::atomic<int> counter{0};  // JITDylib names must be unique
};

namespace {

void put(spmvjit_llvm_bytes* out, const char* data, size_t size) {
  if (!out) return;
  out->data = static_cast<char*>(std::malloc(size + 1));
  out->size = out->data ? size : 0;
  if (!out->data) return;
  if (size) std::memcpy(out->data, data, size);
  out->data[size] = 0;
}
void put(spmvjit_llvm_bytes* out, const std::string& s) { put(out, s.data(), s.size()); }

// Every entry point: a C++ exception (bad_alloc, mostly) becomes a message, never unwinds into C.
template <class R, class F>
R guarded(spmvjit_llvm_bytes* error, R on_failure, F&& f) noexcept {
  try {
    return f();
  } catch (const std::exception& e) {
    put(error, std::string("LLVM plugin: ") + e.what());
  } catch (...) {
    put(error, std::string("LLVM plugin: unknown exception"));
  }
  return on_failure;
}

// Runs clang's cc1 on `source` with argv; true with the object, else false with clang's log.
bool run_clang(const char* const* argv, size_t argc, const char* name, const char* source, size_t source_size,
               llvm::SmallVector<char, 0>* object, std::string* message) {
  std::string log;
  llvm::raw_string_ostream log_os(log);
  auto diag_opts = llvm::makeIntrusiveRefCnt<clang::DiagnosticOptions>();
  auto* printer = new clang::TextDiagnosticPrinter(log_os, diag_opts.get());
  auto diags = llvm::makeIntrusiveRefCnt<clang::DiagnosticsEngine>(
      llvm::makeIntrusiveRefCnt<clang::DiagnosticIDs>(), diag_opts, printer);
  std::vector<const char*> args(argv, argv + argc);
  args.push_back(name);
  auto inv = std::make_shared<clang::CompilerInvocation>();
  if (!clang::CompilerInvocation::CreateFromArgs(*inv, args, *diags)) {
    *message = "clang rejected the options: " + log;
    return false;
  }
  inv->getPreprocessorOpts().addRemappedFile(
      name, llvm::MemoryBuffer::getMemBufferCopy(llvm::StringRef(source, source_size), name).release());
  inv->getFrontendOpts().ProgramAction = clang::frontend::EmitObj;
  clang::CompilerInstance ci;
  ci.setInvocation(inv);
  ci.createDiagnostics(printer, false);
  ci.setVerboseOutputStream(log_os);  // "N errors generated." goes to the log, not stderr
  ci.setOutputStream(std::make_unique<llvm::raw_svector_ostream>(*object));
  llvm::LLVMContext ctx;
  clang::EmitObjAction action(&ctx);
  const bool ok = ci.ExecuteAction(action);
  if (!ok || ci.getDiagnostics().hasErrorOccurred() || object->empty()) {
    *message = std::string("clang failed to compile ") + name + ":\n" + log;
    return false;
  }
  return true;
}

int compile(const char* const* argv, size_t argc, const char* name, const char* source, size_t source_size,
            spmvjit_llvm_bytes* out) {
  return guarded(out, 1, [&] {
    llvm::SmallVector<char, 0> object;
    std::string message;
    if (!run_clang(argv, argc, name, source, source_size, &object, &message)) {
      put(out, message);
      return 1;
    }
    put(out, object.data(), object.size());
    return 0;
  });
}

#ifdef SPMVJIT_LLVM_LLD
// A file in the temporary folder, removed with its owner.
struct TempFile {
  llvm::SmallString<128> path;
  ~TempFile() {
    if (!path.empty()) llvm::sys::fs::remove(path);
  }
};

// Links one AMDGPU relocatable object into a code object, as clang's driver does for HIP
// (ld.lld -shared -m elf64_amdgpu --no-undefined). lld reads and writes files and keeps global
// state, so links run one at a time, in files of the temporary folder.
bool link_amdgpu(const llvm::SmallVector<char, 0>& object, const char* name, std::string* code,
                 std::string* message) {
  static std::mutex serial;
  std::lock_guard<std::mutex> lock(serial);
  TempFile in, out;
  int fd = -1;
  if (auto ec = llvm::sys::fs::createTemporaryFile("spmvjit-amdgpu", "o", fd, in.path)) {
    *message = "lld: cannot create a temporary file: " + ec.message();
    return false;
  }
  {
    llvm::raw_fd_ostream os(fd, /*shouldClose=*/true);
    os.write(object.data(), object.size());
    os.close();
    if (os.has_error()) {
      *message = "lld: cannot write " + std::string(in.path) + ": " + os.error().message();
      os.clear_error();
      return false;
    }
  }
  if (auto ec = llvm::sys::fs::createTemporaryFile("spmvjit-amdgpu", "co", out.path)) {
    *message = "lld: cannot create a temporary file: " + ec.message();
    return false;
  }
  const std::vector<const char*> args = {"ld.lld",      "-m", "elf64_amdgpu",   "--no-undefined", "-shared",
                                         "--threads=1", "-o", out.path.c_str(), in.path.c_str()};
  std::string log;
  llvm::raw_string_ostream log_os(log);
  const lld::Result r = lld::lldMain(args, log_os, log_os, {{lld::Gnu, &lld::elf::link}});
  if (r.retCode != 0) {
    *message = std::string("lld failed to link ") + name + ":\n" + log;
    return false;
  }
  auto bytes = llvm::MemoryBuffer::getFile(out.path, /*IsText=*/false, /*RequiresNullTerminator=*/false);
  if (!bytes) {
    *message = "lld: cannot read its output: " + bytes.getError().message();
    return false;
  }
  code->assign((*bytes)->getBufferStart(), (*bytes)->getBufferSize());
  return true;
}

int compile_amdgpu(const char* const* argv, size_t argc, const char* name, const char* source,
                   size_t source_size, spmvjit_llvm_bytes* out) {
  return guarded(out, 1, [&] {
    llvm::SmallVector<char, 0> object;
    std::string message, code;
    if (!run_clang(argv, argc, name, source, source_size, &object, &message) ||
        !link_amdgpu(object, name, &code, &message)) {
      put(out, message);
      return 1;
    }
    put(out, code);
    return 0;
  });
}

// LLVM's AMDGPU processors, comma-separated.
std::string amdgpu_processor_list() {
  llvm::SmallVector<llvm::StringRef, 64> names;
  llvm::AMDGPU::fillValidArchListAMDGCN(names);
  std::string list;
  for (llvm::StringRef n : names) {
    if (!list.empty()) list += ',';
    list += n.str();
  }
  return list;
}
#endif

spmvjit_llvm_jit* jit_create(spmvjit_llvm_bytes* error) {
  return guarded(error, static_cast<spmvjit_llvm_jit*>(nullptr), [&]() -> spmvjit_llvm_jit* {
    auto j = llvm::orc::LLJITBuilder().create();
    if (!j) {
      put(error, "ORC LLJIT: " + llvm::toString(j.takeError()));
      return nullptr;
    }
    auto* jit = new spmvjit_llvm_jit;
    jit->jit = std::move(*j);
    return jit;
  });
}

void jit_destroy(spmvjit_llvm_jit* jit) { delete jit; }

void* lookup(spmvjit_llvm_jit* jit, llvm::orc::JITDylib& jd, const std::string& symbol, std::string* error) {
  auto sym = jit->jit->lookup(jd, symbol);
  if (!sym) {
    *error = "JIT module has no entry " + symbol + ": " + llvm::toString(sym.takeError());
    return nullptr;
  }
  return sym->toPtr<void*>();
}

int jit_load(spmvjit_llvm_jit* jit, const char* name, const char* object, size_t size,
             spmvjit_llvm_module** module, spmvjit_llvm_bytes* error) {
  return guarded(error, SPMVJIT_LLVM_INTERNAL, [&] {
    llvm::orc::LLJIT& j = *jit->jit;
    auto jd = j.createJITDylib(std::string("spmvjit_") + name + "_" + std::to_string(jit->counter++));
    if (!jd) {
      put(error, "ORC: " + llvm::toString(jd.takeError()));
      return SPMVJIT_LLVM_INTERNAL;
    }
    auto gen =
        llvm::orc::DynamicLibrarySearchGenerator::GetForCurrentProcess(j.getDataLayout().getGlobalPrefix());
    if (gen)
      jd->addGenerator(std::move(*gen));
    else
      llvm::consumeError(gen.takeError());
    const llvm::StringRef bytes(object, size);
    if (auto err = j.addObjectFile(*jd, llvm::MemoryBuffer::getMemBufferCopy(bytes, name))) {
      put(error, "ORC could not add the object: " + llvm::toString(std::move(err)));
      return SPMVJIT_LLVM_BAD_OBJECT;
    }
    // Link every exported function now, so a bad object fails here (the cache then recompiles),
    // never in execute.
    auto obj = llvm::object::ObjectFile::createObjectFile(llvm::MemoryBufferRef(bytes, name));
    if (!obj) {
      put(error, "not an object file: " + llvm::toString(obj.takeError()));
      return SPMVJIT_LLVM_BAD_OBJECT;
    }
    int exported = 0;
    for (const llvm::object::SymbolRef& sym : (*obj)->symbols()) {
      auto flags = sym.getFlags();
      auto type = sym.getType();
      auto sym_name = sym.getName();
      if (!flags || !type || !sym_name) {
        llvm::consumeError(flags.takeError()), llvm::consumeError(type.takeError()),
            llvm::consumeError(sym_name.takeError());
        continue;
      }
      if ((*flags & llvm::object::SymbolRef::SF_Global) &&
          !(*flags & llvm::object::SymbolRef::SF_Undefined) &&
          *type == llvm::object::SymbolRef::ST_Function) {
        std::string message;
        if (!lookup(jit, *jd, sym_name->str(), &message)) {
          put(error, message);
          return SPMVJIT_LLVM_BAD_OBJECT;
        }
        ++exported;
      }
    }
    if (!exported) {
      put(error, std::string("kernel object ") + name + " exports no function");
      return SPMVJIT_LLVM_BAD_OBJECT;
    }
    *module = reinterpret_cast<spmvjit_llvm_module*>(&*jd);
    return SPMVJIT_LLVM_OK;
  });
}

void* jit_lookup(spmvjit_llvm_jit* jit, spmvjit_llvm_module* module, const char* symbol,
                 spmvjit_llvm_bytes* error) {
  return guarded(error, static_cast<void*>(nullptr), [&] {
    std::string message;
    void* p = lookup(jit, *reinterpret_cast<llvm::orc::JITDylib*>(module), symbol, &message);
    if (!p) put(error, message);
    return p;
  });
}

void release(spmvjit_llvm_bytes* bytes) {
  if (!bytes) return;
  std::free(bytes->data);
  bytes->data = nullptr;
  bytes->size = 0;
}

struct Toolchain {
  std::string triple, cpu, features, clang_version, amdgpu;
  spmvjit_llvm_toolchain_v1_t table{};
  bool ok = false;

  Toolchain() noexcept {
    try {
      llvm::InitializeNativeTarget();
      llvm::InitializeNativeTargetAsmPrinter();
      triple = llvm::sys::getProcessTriple();
      cpu = llvm::sys::getHostCPUName().str();
      std::map<std::string, bool> sorted;  // canonical order: the features are part of cache keys
      for (const auto& f : llvm::sys::getHostCPUFeatures()) sorted[f.getKey().str()] = f.getValue();
      for (const auto& [name, on] : sorted)
        features += (features.empty() ? "" : ",") + std::string(on ? "+" : "-") + name;
      clang_version = clang::getClangFullVersion();
      table = {SPMVJIT_LLVM_TOOLCHAIN_ABI_VERSION,
               uint32_t(sizeof(spmvjit_llvm_toolchain_v1_t)),
               triple.c_str(),
               cpu.c_str(),
               features.c_str(),
               clang_version.c_str(),
               compile,
               jit_create,
               jit_destroy,
               jit_load,
               jit_lookup,
               release,
               nullptr,
               nullptr};
#ifdef SPMVJIT_LLVM_LLD
      LLVMInitializeAMDGPUTargetInfo();
      LLVMInitializeAMDGPUTarget();
      LLVMInitializeAMDGPUTargetMC();
      LLVMInitializeAMDGPUAsmPrinter();
      amdgpu = amdgpu_processor_list();
      table.amdgpu_processors = amdgpu.c_str();
      table.compile_amdgpu = compile_amdgpu;
#endif
      ok = true;
    } catch (...) {
    }
  }
};

}  // namespace

extern "C" SPMVJIT_LLVM_EXPORT const spmvjit_llvm_toolchain_v1_t* spmvjit_llvm_toolchain_v1(void) {
  static const Toolchain toolchain;
  return toolchain.ok ? &toolchain.table : nullptr;
}
