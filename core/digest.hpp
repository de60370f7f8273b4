// Non-cryptographic digests (XXH3): cache keys, cache-entry checksums, pattern keys for wisdom.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace spmvjit {

// 128-bit digest as 32 hex characters.
std::string digest_hex(const void* data, size_t bytes);
inline std::string digest_hex(const std::string& s) { return digest_hex(s.data(), s.size()); }
uint64_t checksum64(const void* data, size_t bytes);

}  // namespace spmvjit
