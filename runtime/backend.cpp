// Backend registry: the providers the backends' translation units registered at start-up.
#include "runtime/backend.hpp"

#include <array>

#include "core/error.hpp"

namespace spmvjit {
namespace {

// One slot per kind; filled during static initialization, read-only afterwards.
std::array<const BackendProvider*, 3>& providers() {
  static std::array<const BackendProvider*, 3> p{};
  return p;
}

const BackendProvider& provider(BackendKind kind) {
  const BackendProvider* p = providers()[size_t(kind)];
  static const char* const kNames[] = {"CPU backend (built without LLVM 19)", "CUDA backend", "HIP backend"};
  if (!p) fail(SPMV_STATUS_UNSUPPORTED, std::string("this spmvjit build has no ") + kNames[size_t(kind)]);
  return *p;
}

}  // namespace

bool register_backend(const BackendProvider& p) {
  providers()[size_t(p.kind)] = &p;
  return true;
}

Backend& get_backend(BackendKind kind, int device) { return provider(kind).device(device); }

bool backend_available(BackendKind kind, int device) {
  const BackendProvider* p = providers()[size_t(kind)];
  return p && p->available(device);
}

Backend& backend_compiler(BackendKind kind, const char* target) {
  const std::string t = target ? target : "native";
  if (t == "native") return get_backend(kind, 0);
  return provider(kind).compiler(t);
}

BackendKind auto_backend(int device) {
  for (BackendKind k : {BackendKind::cuda, BackendKind::hip})
    if (backend_available(k, device)) return k;
  return BackendKind::cpu;
}

}  // namespace spmvjit
