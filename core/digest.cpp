// FNV-1a based digests (mixed through splitmix64 finalizers).
#include "core/digest.hpp"

#include <cstdio>

namespace spmvjit {

namespace {

uint64_t fnv1a(const void* data, size_t n, uint64_t h) {
  const unsigned char* p = static_cast<const unsigned char*>(data);
  for (size_t i = 0; i < n; ++i) h = (h ^ p[i]) * 0x100000001b3ULL;
  return h;
}
uint64_t mix(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

}  // namespace

uint64_t checksum64(const void* data, size_t bytes) {
  return mix(fnv1a(data, bytes, 0xcbf29ce484222325ULL) ^ bytes);
}

std::string digest_hex(const void* data, size_t bytes) {
  const uint64_t a = mix(fnv1a(data, bytes, 0xcbf29ce484222325ULL) ^ bytes);
  const uint64_t b = mix(fnv1a(data, bytes, 0x84222325cbf29ce4ULL) + 0x9e3779b97f4a7c15ULL * bytes);
  char buf[33];
  std::snprintf(buf, sizeof buf, "%016llx%016llx", (unsigned long long)a, (unsigned long long)b);
  return buf;
}

}  // namespace spmvjit
