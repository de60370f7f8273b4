/* The C ABI between the CPU backend (libspmvjit.so) and its LLVM plugin (libspmvjit_llvm.so). */
#ifndef SPMVJIT_LLVM_TOOLCHAIN_ABI_H
#define SPMVJIT_LLVM_TOOLCHAIN_ABI_H

#include <stddef.h>
#include <stdint.h>

/* The plugin keeps clang and LLVM (about 190 MB of libraries) out of libspmvjit.so: the CPU
 * backend dlopens it on first use (runtime/cpu/llvm_plugin.cpp). It exports one function, which
 * returns a table; nothing else of either side crosses, and no C++ exception either. A change to
 * a member's meaning or signature is a new _v2 function (the library looks the name up, so an old
 * plugin is refused by name); members may only be appended, behind `size`. */
#define SPMVJIT_LLVM_PLUGIN_FILE "libspmvjit_llvm.so"
#define SPMVJIT_LLVM_TOOLCHAIN_SYMBOL "spmvjit_llvm_toolchain_v1"
#define SPMVJIT_LLVM_TOOLCHAIN_ABI_VERSION 1u

#if defined(__GNUC__) || defined(__clang__)
#define SPMVJIT_LLVM_EXPORT __attribute__((visibility("default")))
#else
#define SPMVJIT_LLVM_EXPORT
#endif

#ifdef __cplusplus
extern "C" {
#endif

typedef struct spmvjit_llvm_jit spmvjit_llvm_jit;       /* an ORC LLJIT for the host */
typedef struct spmvjit_llvm_module spmvjit_llvm_module; /* a JITDylib holding one object file */

/* Bytes the plugin allocated (an object file, a message; NUL-terminated beyond `size`): the caller
 * gives them back with release(). */
typedef struct spmvjit_llvm_bytes {
  char* data;
  size_t size;
} spmvjit_llvm_bytes;

/* jit_load's results. */
#define SPMVJIT_LLVM_OK 0
#define SPMVJIT_LLVM_BAD_OBJECT 1 /* the object does not add or link: recompile it */
#define SPMVJIT_LLVM_INTERNAL 2   /* the JIT itself failed */

typedef struct spmvjit_llvm_toolchain_v1_t {
  uint32_t abi_version; /* SPMVJIT_LLVM_TOOLCHAIN_ABI_VERSION */
  uint32_t size;        /* sizeof(spmvjit_llvm_toolchain_v1_t) of the plugin's build */
  /* The host as LLVM sees it; valid while the plugin is loaded (it is never unloaded). */
  const char* host_triple;   /* llvm::sys::getProcessTriple() */
  const char* host_cpu;      /* llvm::sys::getHostCPUName() */
  const char* host_features; /* "+avx2,-avx512f,...": every feature LLVM reports, sorted by name */
  const char* clang_version; /* clang::getClangFullVersion() */
  /* Compiles `source`, named `name`, with the cc1 arguments argv[0..argc) to an object file for
   * the host. Returns 0 with the object in *out, or nonzero with the message (clang's log) in *out.
   * Thread-safe. */
  int (*compile)(const char* const* argv, size_t argc, const char* name, const char* source,
                 size_t source_size, spmvjit_llvm_bytes* out);
  /* Creates the JIT (1.5-3 ms: the library runs this on its own thread). Null with *error on
   * failure. */
  spmvjit_llvm_jit* (*jit_create)(spmvjit_llvm_bytes* error);
  void (*jit_destroy)(spmvjit_llvm_jit* jit);
  /* Adds an object file to a new JITDylib (named after `name`) that resolves undefined symbols in
   * the process, then links every global function it defines, so a bad object fails here and not
   * at a later lookup. Returns SPMVJIT_LLVM_OK with *module, or an error with *error. Calls on one
   * jit are serialized by the caller. */
  int (*jit_load)(spmvjit_llvm_jit* jit, const char* name, const char* object, size_t size,
                  spmvjit_llvm_module** module, spmvjit_llvm_bytes* error);
  /* Address of `symbol` in `module`, or null with *error. Thread-safe. */
  void* (*jit_lookup)(spmvjit_llvm_jit* jit, spmvjit_llvm_module* module, const char* symbol,
                      spmvjit_llvm_bytes* error);
  /* Frees what `bytes` holds (null data is fine) and clears it. */
  void (*release)(spmvjit_llvm_bytes* bytes);
  /* Appended (present when `size` covers them): AMDGPU code objects for the HIP backend, on
   * processors its hipRTC does not know. Null when the plugin was built without lld or LLVM
   * without the AMDGPU target. */
  const char* amdgpu_processors; /* every gfx processor LLVM knows, comma-separated */
  /* Compiles HIP device code with the cc1 arguments argv[0..argc) (-triple amdgcn-amd-amdhsa,
   * -fcuda-is-device, the processor and its features) and links the object with lld into a code
   * object (a shared ELF, as hipModuleLoadData takes). Returns 0 with the code object in *out, or
   * nonzero with clang's or lld's log in *out. Thread-safe (links run one at a time). */
  int (*compile_amdgpu)(const char* const* argv, size_t argc, const char* name, const char* source,
                        size_t source_size, spmvjit_llvm_bytes* out);
} spmvjit_llvm_toolchain_v1_t;

/* The table (static storage), or null if LLVM could not be initialized for the host. */
SPMVJIT_LLVM_EXPORT const spmvjit_llvm_toolchain_v1_t* spmvjit_llvm_toolchain_v1(void);

#ifdef __cplusplus
}
#endif

#endif
