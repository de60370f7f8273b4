// Eigen 3.4 (row-major SparseMatrix * vector or * dense matrix, OpenMP) and librsb 1.3 as CPU
// benchmark peers.
#include "tools/spmvjit/peers_cpu.hpp"

#include <algorithm>
#include <chrono>

#include "core/cpu_count.hpp"
#include "engine/reference.hpp"
#include "engine/reference_complex.hpp"
#include "tools/spmvjit/cli.hpp"

#ifdef SPMVJIT_BENCH_EIGEN
#include <Eigen/Sparse>
#endif
#ifdef SPMVJIT_BENCH_RSB
#include <rsb.h>
#endif
#ifdef _OPENMP
#include <omp.h>
#endif

namespace spmvjit::cli {
namespace {

using Clock = std::chrono::steady_clock;

template <class V>
std::string verify(const HostCsr<int32_t, V>& a, const std::vector<V>& x, const std::vector<V>& y) {
  return check_spmv(a, reference_spmv(a, 1.0, x.data(), 0.0, y.data()), y.data());
}

#ifdef SPMVJIT_BENCH_EIGEN
// k == 1: SparseMatrix * vector; k > 1: SparseMatrix * dense matrix of that layout.
template <class V, int Order>
PeerResult eigen_peer(const HostCsr<int32_t, V>& a, int threads, int min_iters, double min_s, int64_t k) {
  PeerResult r;
  r.name = "eigen";
#ifdef _OPENMP
  omp_set_num_threads(threads);
  Eigen::setNbThreads(threads);
#endif
  const auto t0 = Clock::now();
  // Map the CSR arrays as a row-major matrix; copy once so Eigen owns compressed storage.
  Eigen::Map<const Eigen::SparseMatrix<V, Eigen::RowMajor, int32_t>> map(
      a.rows, a.cols, a.nnz(), a.row_ptr.data(), a.col_idx.data(), a.val.data());
  Eigen::SparseMatrix<V, Eigen::RowMajor, int32_t> m = map;
  r.setup_s = std::chrono::duration<double>(Clock::now() - t0).count();
  const auto xs = random_vector<V>(a.cols * k, 21);
  using Dense = Eigen::Matrix<V, Eigen::Dynamic, Eigen::Dynamic, Order>;
  Dense x(a.cols, k), y(a.rows, k);
  std::copy(xs.begin(), xs.end(), x.data());  // minimal leading dimensions either way
  y.noalias() = m * x;
  const std::vector<V> ys(y.data(), y.data() + a.rows * k);
  const bool row_major = Order == Eigen::RowMajor && k > 1;
  if constexpr (is_complex_v<V>)
    r.error = check_vectors_complex(a, k, row_major, 1.0, xs.data(), row_major ? k : a.cols, 0.0, ys.data(),
                                    ys.data(), row_major ? k : a.rows);
  else
    r.error = check_vectors(a, k, row_major, 1.0, xs.data(), row_major ? k : a.cols, 0.0, ys.data(),
                            ys.data(), row_major ? k : a.rows);
  if (!r.error.empty()) return r;
  r.exec_s = median_seconds([&] { y.noalias() = m * x; }, min_iters, min_s);
  r.ok = true;
  return r;
}
#endif

#ifdef SPMVJIT_BENCH_RSB
template <class V>
PeerResult rsb_peer(const HostCsr<int32_t, V>& a, int threads, int min_iters, double min_s) {
  PeerResult r;
  r.name = "librsb";
  static const rsb_err_t init = rsb_lib_init(RSB_NULL_INIT_OPTIONS);
  if (init != RSB_ERR_NO_ERROR) {
    r.error = "rsb_lib_init failed";
    return r;
  }
  rsb_int_t nt = threads;
  rsb_lib_set_opt(RSB_IO_WANT_EXECUTING_THREADS, &nt);
  const rsb_type_t type = sizeof(V) == 8 ? RSB_NUMERICAL_TYPE_DOUBLE : RSB_NUMERICAL_TYPE_FLOAT;
  const auto t0 = Clock::now();
  rsb_err_t err = RSB_ERR_NO_ERROR;
  rsb_mtx_t* m = rsb_mtx_alloc_from_csr_const(a.val.data(), a.row_ptr.data(), a.col_idx.data(),
                                              rsb_nnz_idx_t(a.nnz()), type, rsb_coo_idx_t(a.rows),
                                              rsb_coo_idx_t(a.cols), 1, 1, RSB_FLAG_NOFLAGS, &err);
  r.setup_s = std::chrono::duration<double>(Clock::now() - t0).count();
  if (!m || err != RSB_ERR_NO_ERROR) {
    r.error = "rsb_mtx_alloc_from_csr_const failed";
    return r;
  }
  const auto x = random_vector<V>(a.cols, 22);
  std::vector<V> y(size_t(a.rows), V(0));
  const V one = 1, zero = 0;
  rsb_spmv(RSB_TRANSPOSITION_N, &one, m, x.data(), 1, &zero, y.data(), 1);
  r.error = verify(a, x, y);
  if (r.error.empty()) {
    r.exec_s = median_seconds(
        [&] { rsb_spmv(RSB_TRANSPOSITION_N, &one, m, x.data(), 1, &zero, y.data(), 1); }, min_iters, min_s);
    r.ok = true;
  }
  rsb_mtx_free(m);
  return r;
}
#endif

}  // namespace

namespace {

// Both peers for real values (M = double), Eigen alone for complex ones (M = std::complex<double>:
// librsb's complex types are not wired).
template <class M>
std::vector<PeerResult> run_peers(const HostCsr<int64_t, M>& a, ValueType value, int threads, int min_iters,
                                  double min_seconds, int64_t vectors, bool row_major) {
  std::vector<PeerResult> out;
  // The threads spmvjit's plans get (core/cpu_count.hpp; options.threads capped by the shared
  // pool's size), so both sides of the comparison run on the same number of cores.
  threads = threads <= 0 ? process_threads() : std::min(threads, process_threads());
  // Both peers take 32-bit indices; matrices beyond int32 are reported, not run.
  if (a.nnz() > INT32_MAX || a.rows > INT32_MAX || a.cols > INT32_MAX) {
    out.push_back({"peers", false, "matrix exceeds 32-bit indices", 0, 0});
    return out;
  }
  auto run = [&]<class V>() {
    const auto m = a.template cast<int32_t, V>();
#ifdef SPMVJIT_BENCH_EIGEN
    out.push_back(row_major ? eigen_peer<V, Eigen::RowMajor>(m, threads, min_iters, min_seconds, vectors)
                            : eigen_peer<V, Eigen::ColMajor>(m, threads, min_iters, min_seconds, vectors));
#endif
#ifdef SPMVJIT_BENCH_RSB
    if constexpr (is_complex_v<V>)
      out.push_back({"librsb", false, "real values only here (its complex types are not wired)", 0, 0});
    else if (vectors == 1)
      out.push_back(rsb_peer<V>(m, threads, min_iters, min_seconds));
    else
      out.push_back({"librsb", false, "one vector only here (rsb_spmm not wired)", 0, 0});
#endif
    (void)vectors, (void)row_major;
    (void)m;
  };
  if constexpr (is_complex_v<M>) {
    if (value == ValueType::c32)
      run.template operator()<std::complex<float>>();
    else
      run.template operator()<std::complex<double>>();
  } else {
    if (value == ValueType::f32)
      run.template operator()<float>();
    else
      run.template operator()<double>();
  }
  return out;
}

}  // namespace

std::vector<PeerResult> run_cpu_peers(const HostCsr<int64_t, double>& a, ValueType value, int threads,
                                      int min_iters, double min_seconds, int64_t vectors, bool row_major) {
  return run_peers(a, value, threads, min_iters, min_seconds, vectors, row_major);
}

std::vector<PeerResult> run_cpu_peers(const HostCsr<int64_t, std::complex<double>>& a, ValueType value,
                                      int threads, int min_iters, double min_seconds, int64_t vectors,
                                      bool row_major) {
  return run_peers(a, value, threads, min_iters, min_seconds, vectors, row_major);
}

}  // namespace spmvjit::cli
