// Backend registry: which backends this build has and whether their devices are present.
#include "runtime/backend.hpp"

namespace spmvjit {

#ifdef SPMVJIT_WITH_CPU
Backend& cpu_backend();
#endif
#ifdef SPMVJIT_WITH_CUDA
Backend& cuda_backend(int device);  // throws NO_DEVICE
bool cuda_available(int device);
#endif

Backend& get_backend(BackendKind kind, int device) {
  switch (kind) {
    case BackendKind::cpu:
#ifdef SPMVJIT_WITH_CPU
      return cpu_backend();
#else
      fail(SPMV_STATUS_UNSUPPORTED, "this spmvjit build has no CPU backend (built without LLVM 19)");
#endif
    case BackendKind::cuda:
#ifdef SPMVJIT_WITH_CUDA
      return cuda_backend(device);
#else
      (void)device;
      fail(SPMV_STATUS_UNSUPPORTED, "this spmvjit build has no CUDA backend");
#endif
    case BackendKind::hip:
      fail(SPMV_STATUS_UNSUPPORTED, "this spmvjit build has no HIP backend");
  }
  fail(SPMV_STATUS_INVALID_VALUE, "unknown backend");
}

bool backend_available(BackendKind kind, int device) {
  (void)device;
  switch (kind) {
    case BackendKind::cpu:
#ifdef SPMVJIT_WITH_CPU
      return true;
#else
      return false;
#endif
    case BackendKind::cuda:
#ifdef SPMVJIT_WITH_CUDA
      return cuda_available(device);
#else
      return false;
#endif
    case BackendKind::hip:
      return false;
  }
  return false;
}

}  // namespace spmvjit
