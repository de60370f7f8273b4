// CUDA backend entry points beyond runtime/backend.hpp: the device-less compiler and device facts.
#pragma once

#include <string>

#include "runtime/backend.hpp"

namespace spmvjit {

// The backend of a CUDA device (primary context). Throws NO_DEVICE "no CUDA device/driver ...".
Backend& cuda_backend(int device);
// True if the driver loads, the device exists and NVRTC loads. Never throws.
bool cuda_available(int device);
// A backend that compiles for `arch` ("sm_80", "sm_90", ...) without any device or driver:
// warmup and CI use it. It refuses load/alloc/launch with NO_DEVICE. Throws INVALID_VALUE for
// a malformed arch and UNSUPPORTED when NVRTC cannot be loaded.
Backend& cuda_compiler(const std::string& arch);
// Whether libcuda.so.1 loaded and initialized / NVRTC loaded (never throw; "" or why not).
bool cuda_driver_loaded(std::string* why = nullptr);
bool cuda_nvrtc_loaded(std::string* why = nullptr);
// 90 for "sm_90"; -1 if malformed.
int parse_cuda_arch(const std::string& arch);

}  // namespace spmvjit
