// The rocSPARSE peer of `spmvjit bench --backend hip` (placeholder, replaced below).
#include "tools/spmvjit/gpu_bench.hpp"

namespace spmvjit::cli {

std::string rocsparse_peer(std::string* why) {
  if (why) *why = "rocSPARSE peer not built";
  return "";
}
CusparseResult rocsparse_spmv(int, const HostCsr<int64_t, double>&, IndexType, ValueType, int, double,
                              TimingModes) {
  return CusparseResult{false, "rocSPARSE peer not built"};
}

}  // namespace spmvjit::cli
