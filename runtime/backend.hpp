// The backend interface: compile, load, allocate and launch, one implementation per device kind.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "codegen/kernel_spec.hpp"
#include "core/error.hpp"
#include "core/kernel_args.hpp"
#include "core/target.hpp"

namespace spmvjit {

// A loaded module: resolved entry points stay valid as long as the module lives.
class LoadedModule {
 public:
  virtual ~LoadedModule() = default;
  // Address (CPU) or CUfunction (GPU) of an entry; throws INTERNAL_ERROR if missing.
  virtual void* entry(const std::string& name) const = 0;
};

// Per-plan execution resources: the plan's share of the CPU's shared thread pool (at most
// make_executor's `threads` of it), nothing much on GPUs.
class Executor {
 public:
  virtual ~Executor() = default;
  // Runs one launch step of `fn`. Never allocates.
  virtual void run(void* fn, const LaunchStep& step, const SpmvArgs& args, void* stream) = 0;
  // Brackets the steps of one SpMV whose plan has scratch (carries) that concurrent calls would
  // share; the plan holds its lock around them. GPUs: `stream` waits for the previous bracketed
  // call's work, wherever it was queued, so calls on several streams never overlap on the device.
  virtual void begin_exclusive(void* stream) { (void)stream; }
  virtual void end_exclusive(void* stream) { (void)stream; }
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual BackendKind kind() const = 0;
  virtual const TargetInfo& target() const = 0;
  // Called with a plan's kernel-cache folder ("" = memory only) before its first target(): a
  // backend may read what it remembered about the host there (the CPU backend: LLVM's host
  // identity, so kernels on disk load without LLVM) and, learning it now, remember it there.
  virtual void use_cache_dir(const std::string& dir) { (void)dir; }
  // Identifies the compiler that produced a binary: part of every cache key.
  virtual std::string compiler_version() const = 0;
  // Compiler options for a source (part of the cache key).
  virtual std::vector<std::string> compile_options(const KernelSpec& spec) const = 0;
  // Source -> binary (object file, cubin, code object). Throws COMPILE_FAILED with the log.
  virtual std::vector<char> compile(const KernelSource& src) = 0;
  // Binary -> loaded module. Throws if the binary is unusable (the cache then recompiles).
  virtual std::shared_ptr<LoadedModule> load(const std::vector<char>& binary,
                                             const std::string& key) = 0;
  virtual std::unique_ptr<Executor> make_executor(int threads) = 0;
  // A module of `spec` compiled ahead of time, for a plan's first tier while the exact one
  // compiles (the CPU's kernel bundle: the run-time epilogue variants built for a portable
  // processor), or nullptr; `key` gets its key. Never compiles, never throws for a missing one.
  virtual std::shared_ptr<LoadedModule> prebuilt(const KernelSpec& spec, std::string* key) {
    (void)spec, (void)key;
    return nullptr;
  }

  // Memory where kernels read and write. The CPU backend returns host memory.
  virtual void* alloc(size_t bytes) = 0;
  virtual void free(void* p) = 0;
  // Both return once the bytes are where they go: a kernel queued next on any stream, blocking
  // or not, sees an upload's bytes.
  virtual void upload(void* dst, const void* src, size_t bytes) = 0;
  virtual void download(void* dst, const void* src, size_t bytes) = 0;
  virtual bool is_host() const = 0;
  // Waits for all work queued on `stream` (nullptr: the default stream). CPU: no-op.
  virtual void synchronize(void* stream) { (void)stream; }
  // Waits for all work on the device, on every stream. Memory that kernels on a caller's streams
  // may read is freed only after this (freed blocks are reused at once: runtime/block_cache.hpp).
  virtual void synchronize_device() {}
};

// Source text plus the backend's compile options: what gets compiled and hashed.
inline KernelSource generate_source_for(Backend& backend, const KernelSpec& spec) {
  KernelSource src = generate_source(spec);
  src.options = backend.compile_options(spec);
  return src;
}

// How a backend plugs in: each backend's translation unit registers one provider at static
// initialization (SPMVJIT_REGISTER_BACKEND); nothing else names it. A build without a backend
// simply has no provider for that kind.
struct BackendProvider {
  BackendKind kind;
  // True if a usable device exists (never throws).
  bool (*available)(int device);
  // The backend singleton of a device. Throws NO_DEVICE saying why.
  Backend& (*device)(int device);
  // A backend that compiles for a named target ("sm_90", "gfx90a", "native") with no device:
  // `warmup` uses it. Throws INVALID_VALUE for a malformed target.
  Backend& (*compiler)(const std::string& target);
};
bool register_backend(const BackendProvider& provider);
#define SPMVJIT_REGISTER_BACKEND(provider) \
  static const bool spmvjit_backend_registered_ = ::spmvjit::register_backend(provider)

// The backend singleton for a kind and device. Throws UNSUPPORTED when the build lacks it and
// NO_DEVICE when no device is present.
Backend& get_backend(BackendKind kind, int device);
// True if a usable device of that kind exists (never throws).
bool backend_available(BackendKind kind, int device);
// The device-less compiler for `target` (null or "native": device 0's own backend).
Backend& backend_compiler(BackendKind kind, const char* target);
// SPMV_BACKEND_AUTO: the first GPU kind with a device (CUDA, then HIP), else the CPU.
BackendKind auto_backend(int device);

}  // namespace spmvjit
