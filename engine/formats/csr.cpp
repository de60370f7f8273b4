// CSR (scalar): the user's layout, one worker per row range; the baseline every format beats.
#include <algorithm>
#include <cstring>

#include "core/parallel.hpp"
#include "engine/formats/device_converter.hpp"
#include "engine/formats/format.hpp"
#include "engine/formats/gpu_cost.hpp"

namespace spmvjit {
#include "templates/contract/csr.h"

namespace {

class CsrFormat final : public Format {
 public:
  std::string name() const override { return "csr"; }
  std::span<const ArraySlot> contract_arrays() const override { return kCsrArrays; }
  bool keeps_csr_pattern(const FormatParams&) const override { return true; }
  bool supports(BackendKind) const override { return true; }
  bool supports_value(ValueType) const override { return true; }  // real and complex
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
    d.declare(name(), p, contract_arrays(), dc.shape().index, dc.shape().value);
    put_device_csr_arrays(d, dc, dc.shape().nnz);
    finish(d, dc.shape(), t);
    return d;
  }
  FormatData convert(const CsrRef& a, const FormatParams& p, const TargetInfo& t) const override {
    FormatData d;
    d.declare(name(), p, contract_arrays(), a.index, a.value);
    copy_csr_arrays(d, a, a.nnz);
    finish(d, a, t);
    return d;
  }

 private:
  static void finish(FormatData& d, const CsrRef& a, const TargetInfo& t) {
    d.stored_entries = a.nnz;
    d.matrix_bytes = sum_matrix_bytes(d);
    if (t.backend == BackendKind::cpu)
      set_cpu_parts(d, CSR_PARTS, balance_rows(a, t.threads, 1));
    else
      d.steps.push_back({"spmvjit_part", (a.rows + CSR_GPU_BLOCK - 1) / CSR_GPU_BLOCK, CSR_GPU_BLOCK, 0});
  }
};

}  // namespace

SPMVJIT_REGISTER_FORMAT(CsrFormat)

}  // namespace spmvjit
