// Peer libraries timed beside spmvjit on the CPU (Eigen, librsb), when the build found them.
#pragma once

#include <complex>
#include <string>
#include <vector>

#include "engine/csr.hpp"

namespace spmvjit::cli {

struct PeerResult {
  std::string name;
  bool ok = false;
  std::string error;
  double setup_s = 0;  // building the peer's matrix (its "plan")
  double exec_s = 0;   // median seconds of one y = A*x
};

// Each peer is verified against the long-double reference before it is timed. vectors > 1: the
// product with k dense vectors of that layout (Eigen's sparse * dense).
std::vector<PeerResult> run_cpu_peers(const HostCsr<int64_t, double>& a, ValueType value, int threads,
                                      int min_iters, double min_seconds, int64_t vectors = 1,
                                      bool row_major = false);
// The same for complex values (value c32 or c64): Eigen with std::complex (librsb: real only here).
std::vector<PeerResult> run_cpu_peers(const HostCsr<int64_t, std::complex<double>>& a, ValueType value,
                                      int threads, int min_iters, double min_seconds, int64_t vectors = 1,
                                      bool row_major = false);

}  // namespace spmvjit::cli
