// Whether this build runs under AddressSanitizer (GCC's and clang's ways of saying so): memory
// that host_alloc would otherwise share or keep for reuse is then each array's own allocation,
// so the sanitizer sees every use after free and every overflow.
#pragma once

namespace spmvjit {

#if defined(__SANITIZE_ADDRESS__)
inline constexpr bool kAddressSanitizer = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
inline constexpr bool kAddressSanitizer = true;
#else
inline constexpr bool kAddressSanitizer = false;
#endif
#else
inline constexpr bool kAddressSanitizer = false;
#endif

}  // namespace spmvjit
