// The cuSPARSE functions the bench peer calls, resolved at run time with dlopen (no link
// dependency): cusparse.h gives only types and prototypes, so the CLI starts without CUDA.
#pragma once

#include <cusparse.h>

#include <string>
#include <vector>

namespace spmvjit::cli {

// clang-format off
#define SPMVJIT_CUSPARSE_FUNCTIONS(X)                                                    \
  X(cusparseGetProperty) X(cusparseGetErrorString) X(cusparseCreate) X(cusparseDestroy) \
  X(cusparseCreateCsr) X(cusparseDestroySpMat) X(cusparseCreateDnVec)                   \
  X(cusparseDestroyDnVec) X(cusparseSpMV_bufferSize) X(cusparseSpMV_preprocess)         \
  X(cusparseSpMV) X(cusparseCreateDnMat) X(cusparseDestroyDnMat) X(cusparseSpMM_bufferSize) \
  X(cusparseSpMM_preprocess) X(cusparseSpMM)
// clang-format on

#define SPMVJIT_CUSPARSE_MEMBER(fn) decltype(&::fn) fn = nullptr;
struct CusparseApi {
  SPMVJIT_CUSPARSE_FUNCTIONS(SPMVJIT_CUSPARSE_MEMBER)
  std::string library;  // the file loaded, e.g. "libcusparse.so.12"
  std::string version;  // "12.6.3"
};
#undef SPMVJIT_CUSPARSE_MEMBER

// The files tried in order: the soname of the cusparse.h compiled against's major version, the
// same in the build's CUDA library directory, then the unversioned development link (each
// accepted only when it is that major version).
std::vector<std::string> cusparse_library_names();

// cuSPARSE loaded once (the first of cusparse_library_names() that loads, resolves every function
// and has this major version), or nullptr with `why` naming the files looked for.
const CusparseApi* cusparse_api(std::string* why = nullptr);

// One attempt with these names, not cached (tests).
bool load_cusparse(const std::vector<std::string>& names, CusparseApi* api, std::string* why);

}  // namespace spmvjit::cli
