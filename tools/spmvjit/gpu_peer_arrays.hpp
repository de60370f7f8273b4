// Device arrays for the vendor peers of `spmvjit bench` (cuSPARSE, rocSPARSE), allocated through
// the backend so that their memory is accounted like ours.
#pragma once

#include <algorithm>
#include <vector>

#include "runtime/device_buffer.hpp"

namespace spmvjit::cli {

// Device memory for a vendor library, never empty (at least 8 bytes): no null array reaches it.
inline DeviceBuffer peer_device_array(Backend& b, size_t bytes) {
  return DeviceBuffer(b, std::max<size_t>(bytes, 8));
}

// Device copy of a host vector.
template <class T>
DeviceBuffer peer_device_copy(Backend& b, const std::vector<T>& v) {
  DeviceBuffer d = peer_device_array(b, v.size() * sizeof(T));
  b.upload(d.get(), v.data(), v.size() * sizeof(T));
  return d;
}

}  // namespace spmvjit::cli
