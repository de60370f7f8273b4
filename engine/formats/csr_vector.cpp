// CSR vector: the CSR arrays with L lanes per row (GPU: L threads of a warp share a row; CPU:
// the row loop is unrolled into L independent accumulators). Suits rows much longer than one.
#include <algorithm>
#include <cstring>

#include "engine/formats/device_converter.hpp"
#include "engine/formats/format.hpp"
#include "engine/formats/format_a_util.hpp"

namespace spmvjit {
#include "templates/contract/csr_vector.h"

namespace {

// Largest L: a warp on the GPU; two SIMD registers' worth of values on the CPU (enough
// independent accumulators to hide the FMA latency).
int64_t max_lanes(const TargetInfo& t, ValueType v) {
  if (t.backend != BackendKind::cpu) return std::max(2, t.warp_size);
  return std::max<int64_t>(2, 2 * std::max<int64_t>(1, t.simd_bytes / int64_t(size_of(v))));
}

int64_t next_pow2(double m) {
  int64_t l = 1;
  while (double(l) < m && l < (int64_t(1) << 30)) l <<= 1;
  return l;
}

class CsrVectorFormat final : public Format {
 public:
  std::string name() const override { return "csr_vector"; }
  std::span<const ArraySlot> contract_arrays() const override { return kCsrVectorArrays; }
  bool keeps_csr_pattern(const FormatParams&) const override { return true; }
  // CPU: measured time per modeled byte relative to csr (docs/PERFORMANCE.md, 2-vCPU Zen 4).
  double efficiency(const MatrixStats&, const TargetInfo& t) const override { return t.gpu() ? 1.0 : 1.2; }
  bool supports(BackendKind) const override { return true; }
  bool supports_value(ValueType) const override { return true; }  // real and complex

  std::vector<FormatParams> candidates(const CsrRef& a, const MatrixStats& s,
                                       const TargetInfo& t) const override {
    const int64_t l = std::clamp<int64_t>(next_pow2(s.row_mean), 2, max_lanes(t, a.value));
    return {FormatParams{{"L", l}}};
  }
  FormatParams kernel_constants(const FormatParams& p) const override { return {{"L", p.at("L")}}; }
  std::vector<FormatParams> kernel_variants(const TargetInfo& t, ValueType v) const override {
    std::vector<FormatParams> out;
    for (int64_t l = 2; l <= max_lanes(t, v); l *= 2) out.push_back({{"L", l}});
    return out;
  }

  Estimate estimate(const CsrRef& a, const MatrixStats& s, const FormatParams& p,
                    const TargetInfo& t) const override {
    const int64_t l = p.at("L");
    Estimate e;
    e.stored_entries = a.nnz;
    e.matrix_bytes =
        int64_t(size_of(a.index)) * (a.rows + 1 + a.nnz) + int64_t(size_of(a.value)) * a.nnz;
    // Lane waste: entries of the last, partial group of L per row (scalar remainder on the CPU,
    // idle lanes on the GPU), from the statistics' row-length facts (L <= 64).
    const int k = ceil_log2(l);
    const int64_t waste = t.backend == BackendKind::cpu ? s.lane_rem[size_t(k)] : s.lane_idle[size_t(k)];
    const double per_entry = double(size_of(a.index) + size_of(a.value));
    if (t.backend == BackendKind::cpu) {
      // Loop setup plus the horizontal sum of L accumulators; remainder entries run scalar.
      e.cost_bytes = double(e.matrix_bytes) + (16.0 + double(l)) * double(a.rows) +
                     0.5 * per_entry * double(waste);
    } else {
      // log2(L) shuffle steps per row; idle lanes still occupy issue slots.
      e.cost_bytes = double(e.matrix_bytes) + 8.0 * double(ceil_log2(l) + 1) * double(a.rows) +
                     per_entry * double(waste);
    }
    e.imbalance = row_split_imbalance(s, t);
    e.reason =
        "L=" + std::to_string(l) + " lanes per row, mean row length " + std::to_string(s.row_mean);
    return e;
  }

  void to_triplets(const FormatData& d, const CsrRef& shape, std::vector<Triplet>& out) const override {
    csr_layout_to_triplets(d, shape, out);
  }

  bool converts_on_device() const override { return true; }
  FormatData convert_device(DeviceConverter& dc, const FormatParams& p, const TargetInfo& t) const override {
    check_lanes(p.at("L"), t);
    FormatData d;
    d.declare(name(), p, contract_arrays(), dc.shape().index, dc.shape().value);
    put_device_csr_arrays(d, dc, dc.shape().nnz);
    finish(d, dc.shape(), t);
    return d;
  }

  FormatData convert(const CsrRef& a, const FormatParams& p, const TargetInfo& t) const override {
    check_lanes(p.at("L"), t);
    FormatData d;
    d.declare(name(), p, contract_arrays(), a.index, a.value);
    copy_csr_arrays(d, a, a.nnz);
    finish(d, a, t);
    return d;
  }

 private:
  static void check_lanes(int64_t l, const TargetInfo& t) {
    if (l < 1 || (l & (l - 1)) || l > 64)
      fail(SPMV_STATUS_INVALID_VALUE,
           "csr_vector: L must be a power of two in [1, 64], got " + std::to_string(l));
    if (t.backend != BackendKind::cpu && l > t.warp_size)
      fail(SPMV_STATUS_INVALID_VALUE, "csr_vector: L=" + std::to_string(l) + " exceeds the warp size");
  }
  static void finish(FormatData& d, const CsrRef& a, const TargetInfo& t) {
    d.stored_entries = a.nnz;
    d.matrix_bytes = sum_matrix_bytes(d);
    if (t.backend == BackendKind::cpu)
      set_cpu_parts(d, CSR_VECTOR_PARTS, balance_rows(a, t.threads, 1));
    else
      d.steps.push_back({"spmvjit_part", gpu_grid(a.rows, CSR_VECTOR_GPU_BLOCK / d.params.at("L")),
                         CSR_VECTOR_GPU_BLOCK, 0});
  }
};

}  // namespace

SPMVJIT_REGISTER_FORMAT(CsrVectorFormat)

}  // namespace spmvjit
