// dlopen/dlsym of cuSPARSE for the bench peer, in the style of runtime/cuda/cuda_api.cpp.
#ifdef SPMVJIT_BENCH_CUSPARSE
#include "tools/spmvjit/cusparse_api.hpp"

#include <dlfcn.h>

#include <utility>

namespace spmvjit::cli {

#define SPMVJIT_CUSPARSE_STR2(x) #x
#define SPMVJIT_CUSPARSE_STR(x) SPMVJIT_CUSPARSE_STR2(x)

std::vector<std::string> cusparse_library_names() {
  const std::string soname = "libcusparse.so." SPMVJIT_CUSPARSE_STR(CUSPARSE_VER_MAJOR);
  std::vector<std::string> names = {soname};
#ifdef SPMVJIT_CUDA_LIBRARY_DIR
  // The toolkit this was built with, for a machine whose loader does not search it (the CLI no
  // longer carries it in its RUNPATH, as it did when linked to cuSPARSE).
  if (*SPMVJIT_CUDA_LIBRARY_DIR) names.push_back(SPMVJIT_CUDA_LIBRARY_DIR "/" + soname);
#endif
  names.push_back("libcusparse.so");
  return names;
}

bool load_cusparse(const std::vector<std::string>& names, CusparseApi* out, std::string* why) {
  std::string tried;
  for (const std::string& name : names) {
    void* handle = ::dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
      // dlerror names the file it could not open: this one, or a library it needs (nvJitLink).
      const char* message = ::dlerror();
      std::string e = message ? message : "cannot be loaded";
      if (e.rfind(name + ": ", 0) == 0) e.erase(0, name.size() + 2);
      tried += (tried.empty() ? "" : "; ") + name + " (" + e + ")";
      continue;
    }
    // Every symbol or none: a partial table would crash later instead of failing now.
    CusparseApi api;
    std::string missing;
#define SPMVJIT_CUSPARSE_RESOLVE(fn)                                                      \
  api.fn = reinterpret_cast<decltype(api.fn)>(::dlsym(handle, SPMVJIT_CUSPARSE_STR(fn))); \
  if (!api.fn) missing += std::string(missing.empty() ? "" : ", ") + SPMVJIT_CUSPARSE_STR(fn);
    SPMVJIT_CUSPARSE_FUNCTIONS(SPMVJIT_CUSPARSE_RESOLVE)
#undef SPMVJIT_CUSPARSE_RESOLVE
    int major = -1, minor = -1, patch = -1;
    if (missing.empty()) {
      api.cusparseGetProperty(MAJOR_VERSION, &major);
      api.cusparseGetProperty(MINOR_VERSION, &minor);
      api.cusparseGetProperty(PATCH_LEVEL, &patch);
    }
    if (!missing.empty()) {
      tried += (tried.empty() ? "" : "; ") + name + " lacks " + missing;
    } else if (major != CUSPARSE_VER_MAJOR) {
      // Another major version has another ABI than the header this was compiled against.
      tried += (tried.empty() ? "" : "; ") + name + " is cuSPARSE " + std::to_string(major) + ", not " +
               std::to_string(CUSPARSE_VER_MAJOR);
    } else {
      api.library = name;
      api.version = std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(patch);
      *out = std::move(api);
      return true;  // the handle stays open for the process's life
    }
    ::dlclose(handle);
  }
  if (why) *why = "cannot load cuSPARSE (looked for " + tried + ")";
  return false;
}

const CusparseApi* cusparse_api(std::string* why) {
  struct Loaded {
    CusparseApi api;
    bool ok = false;
    std::string why;
  };
  static const Loaded loaded = [] {
    Loaded l;
    l.ok = load_cusparse(cusparse_library_names(), &l.api, &l.why);
    return l;
  }();
  if (!loaded.ok && why) *why = loaded.why;
  return loaded.ok ? &loaded.api : nullptr;
}

}  // namespace spmvjit::cli
#endif
