// A CSR matrix's arrays in device memory, and plan options for the GPU under test: shared by the
// device-planning tests (test_cuda_device_plan.cpp, test_cuda_device_update.cpp).
#pragma once
#ifdef SPMVJIT_WITH_CUDA
#include <vector>

#include "runtime/device_buffer.hpp"
#include "tests/runtime/cuda_test_support.hpp"
#include "tests/test_matrices.hpp"

namespace spmvjit::cuda_test {

// A matrix's arrays in device memory (indices shifted by `base`), freed on scope exit.
template <class I, class V>
struct DeviceCsr {
  DeviceBuffer rp, ci, va;  // ci and va hold nothing when nnz is 0
  spmv_csr_t desc{};
  DeviceCsr(Backend& b, const HostCsr<I, V>& a, int base = 0) {
    std::vector<I> r = a.row_ptr, c = a.col_idx;
    for (I& x : r) x += I(base);
    for (I& x : c) x += I(base);
    rp = DeviceBuffer(b, r.size() * sizeof(I));
    b.upload(rp.get(), r.data(), r.size() * sizeof(I));
    if (a.nnz()) {
      ci = DeviceBuffer(b, c.size() * sizeof(I));
      va = DeviceBuffer(b, a.val.size() * sizeof(V));
      b.upload(ci.get(), c.data(), c.size() * sizeof(I));
      b.upload(va.get(), a.val.data(), a.val.size() * sizeof(V));
    }
    desc = view(a);
    desc.row_ptr = rp.get(), desc.col_idx = ci.get(), desc.values = va.get();
    desc.index_base = base;
    desc.memory = SPMV_MEMORY_DEVICE;
  }
};

inline spmv_options_t cuda_options(const char* format) {
  spmv_options_t o;
  spmv_options_init(&o);
  o.backend = test::gpu_api();
  o.format = format;
  return o;
}

}  // namespace spmvjit::cuda_test
#endif  // SPMVJIT_WITH_CUDA
