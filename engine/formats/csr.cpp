// CSR (scalar): the user's layout, one worker per row range; the baseline every format beats.
#include <algorithm>
#include <cstring>

#include "core/parallel.hpp"
#include "engine/formats/device_converter.hpp"
#include "engine/formats/format.hpp"
#include "engine/formats/gpu_cost.hpp"

namespace spmvjit {
namespace {

class CsrFormat final : public Format {
 public:
  std::string name() const override { return "csr"; }
  bool keeps_csr_pattern() const override { return true; }
  bool supports(BackendKind) const override { return true; }
  std::vector<FormatParams> candidates(const CsrRef&, const MatrixStats&,
                                       const TargetInfo&) const override {
    return {FormatParams{}};
  }
  Estimate estimate(const CsrRef& a, const MatrixStats& s, const FormatParams&,
                    const TargetInfo& t) const override {
    Estimate e;
    e.stored_entries = a.nnz;
    if (t.backend != BackendKind::cpu) {
      // One GPU thread per row (as in sell.cpp): the longest row bounds the time.
      const double spread = std::max({1.0, s.row_mean, double(a.nnz) / (std::max(t.sm_count, 1) * 2048.0)});
      e.imbalance = std::max({1.0, double(s.row_max) / spread, gpu_row_starvation(a.rows, t)});
    }
    e.matrix_bytes = int64_t(size_of(a.index)) * (a.rows + 1 + a.nnz) + int64_t(size_of(a.value)) * a.nnz;
    e.reason = "rows split by nonzeros";
    // Per-row loop setup and a short, unvectorized remainder cost about two cache lines' worth.
    e.cost_bytes = double(e.matrix_bytes) + 24.0 * double(a.rows);
    return e;
  }
  void to_triplets(const FormatData& d, const CsrRef& shape, std::vector<Triplet>& out) const override {
    csr_layout_to_triplets(d, shape, out);
  }
  bool converts_on_device() const override { return true; }
  FormatData convert_device(DeviceConverter& dc, const FormatParams& p, const TargetInfo& t) const override {
    FormatData d;
    d.format = name();
    d.params = p;
    d.arrays.push_back(dc.row_ptr());
    d.arrays.push_back(dc.col_idx(dc.shape().nnz));
    d.arrays.push_back(dc.values(dc.shape().nnz));
    finish(d, dc.shape(), t);
    return d;
  }
  FormatData convert(const CsrRef& a, const FormatParams& p, const TargetInfo& t) const override {
    FormatData d;
    d.format = name();
    d.params = p;
    const size_t is = size_of(a.index), vs = size_of(a.value);
    HostArray rp, ci, va;
    rp.name = "row_ptr"; rp.count = a.rows + 1; rp.elem = is; rp.buf = AlignedBuffer(is * size_t(a.rows + 1));
    ci.name = "col_idx"; ci.count = a.nnz; ci.elem = is; ci.buf = AlignedBuffer(is * size_t(a.nnz));
    va.name = "values"; va.count = a.nnz; va.elem = vs; va.kind = ArrayKind::value; va.buf = AlignedBuffer(vs * size_t(a.nnz));
    parallel_copy(rp.buf.data(), a.row_ptr, rp.buf.bytes());
    if (a.nnz) {
      parallel_copy(ci.buf.data(), a.col_idx, ci.buf.bytes());
      parallel_copy(va.buf.data(), a.val, va.buf.bytes());
    }
    d.arrays.push_back(std::move(rp));
    d.arrays.push_back(std::move(ci));
    d.arrays.push_back(std::move(va));
    finish(d, a, t);
    return d;
  }

 private:
  static void finish(FormatData& d, const CsrRef& a, const TargetInfo& t) {
    d.stored_entries = a.nnz;
    d.matrix_bytes = sum_matrix_bytes(d);
    if (t.backend == BackendKind::cpu) {
      const auto bounds = balance_rows(a, t.threads, 1);
      add_cpu_parts(d, bounds);
    } else {
      // One thread per row (templates/gpu/csr.cu, SPMVJIT_CSR_BLOCK).
      constexpr int kCsrGpuBlock = 256;
      d.steps.push_back({"spmvjit_part", (a.rows + kCsrGpuBlock - 1) / kCsrGpuBlock, kCsrGpuBlock, 0});
    }
  }
};

}  // namespace

SPMVJIT_REGISTER_FORMAT(CsrFormat)

}  // namespace spmvjit
