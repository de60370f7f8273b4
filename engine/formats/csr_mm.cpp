// CSR for k vectors (spmm_execute): the user's CSR arrays, as csr keeps them, read once for all k
// vectors of X and Y; k and the layout are kernel constants (VECTORS, LAYOUT). The planner's
// candidate when a plan multiplies several vectors (Format::multi_vector).
#include <algorithm>

#include "engine/formats/device_converter.hpp"
#include "engine/formats/format.hpp"
#include "engine/formats/gpu_cost.hpp"

namespace spmvjit {
#include "templates/contract/csr_mm.h"

namespace {

int64_t param(const FormatParams& p, const char* name, int64_t otherwise) {
  const auto it = p.find(name);
  return it == p.end() ? otherwise : it->second;
}

class CsrMmFormat final : public Format {
 public:
  std::string name() const override { return "csr_mm"; }
  std::span<const ArraySlot> contract_arrays() const override { return kCsrArrays; }
  bool keeps_csr_pattern(const FormatParams&) const override { return true; }
  bool supports(BackendKind) const override { return true; }
  bool multi_vector() const override { return true; }
  std::vector<FormatParams> candidates(const CsrRef&, const MatrixStats&, const TargetInfo&) const override {
    return {FormatParams{}};
  }
  Estimate estimate(const CsrRef& a, const MatrixStats& s, const FormatParams& p,
                    const TargetInfo& t) const override {
    // k vectors: the matrix once, then per vector a gathered x value per entry (cache lines of
    // row-major X serve several vectors) and y read and written.
    const int64_t k = std::max<int64_t>(1, param(p, kVectorsParam, 1));
    const double vs = double(size_of(a.value));
    Estimate e;
    e.stored_entries = a.nnz;
    if (t.backend != BackendKind::cpu) {
      const double spread = std::max({1.0, s.row_mean, double(a.nnz) / (std::max(t.sm_count, 1) * 2048.0)});
      e.imbalance = std::max({1.0, double(s.row_max) / spread, gpu_row_starvation(a.rows, t)});
    }
    e.matrix_bytes = int64_t(size_of(a.index)) * (a.rows + 1 + a.nnz) + int64_t(size_of(a.value)) * a.nnz;
    e.cost_bytes = double(e.matrix_bytes) + 24.0 * double(a.rows) +
                   double(k) * vs * (0.5 * double(a.nnz) + 2.0 * double(a.rows));
    e.reason = "the matrix read once for " + std::to_string(k) + " vectors";
    return e;
  }
  void to_triplets(const FormatData& d, const CsrRef& shape, std::vector<Triplet>& out) const override {
    csr_layout_to_triplets(d, shape, out);
  }
  // VECTORS 0 (any k, in blocks) and 1 to kMaxBakedVectors, in both layouts.
  std::vector<FormatParams> kernel_variants(const TargetInfo&, ValueType) const override {
    std::vector<FormatParams> out;
    for (int layout = 0; layout < 2; ++layout)
      for (int k = 0; k <= kMaxBakedVectors; ++k) out.push_back({{kLayoutParam, layout}, {kVectorsParam, k}});
    return out;
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
    if (t.backend == BackendKind::cpu) {
      set_cpu_parts(d, CSR_PARTS, balance_rows(a, t.threads, 1));
      return;
    }
    const int64_t lanes = CSR_MM_LANES(param(d.params, kVectorsParam, 1), param(d.params, kLayoutParam, 0));
    const int64_t rows_per_block = CSR_MM_GPU_BLOCK / lanes;
    d.steps.push_back({"spmvjit_part", (a.rows + rows_per_block - 1) / rows_per_block, CSR_MM_GPU_BLOCK, 0});
  }
};

}  // namespace

SPMVJIT_REGISTER_FORMAT(CsrMmFormat)

}  // namespace spmvjit
