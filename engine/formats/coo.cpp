// COO: one (row, col, value) per nonzero sorted by row. Equal nonzero ranges per worker make it
// immune to long rows; rows shared between workers are combined by a carry fixup (CPU) or
// atomics (GPU).
#include <algorithm>

#include "engine/formats/device_converter.hpp"
#include "engine/formats/format.hpp"
#include "engine/formats/format_a_util.hpp"
#include "engine/formats/partition.hpp"

namespace spmvjit {
#include "templates/contract/coo.h"

namespace {

class CooFormat final : public Format {
 public:
  std::string name() const override { return "coo"; }
  std::span<const ArraySlot> contract_arrays() const override { return kCooArrays; }
  // CPU: measured time per modeled byte relative to csr (docs/PERFORMANCE.md, 2-vCPU Zen 4).
  double efficiency(const MatrixStats&, const TargetInfo& t) const override { return t.gpu() ? 1.0 : 1.6; }
  bool supports(BackendKind) const override { return true; }
  bool supports_value(ValueType) const override { return true; }  // real and complex
  std::vector<FormatParams> candidates(const CsrRef&, const MatrixStats&,
                                       const TargetInfo&) const override {
    return {FormatParams{}};
  }
  FormatParams kernel_constants(const FormatParams&) const override { return {}; }
  std::string make_deterministic(FormatParams&, const TargetInfo& t) const override {
    return t.gpu() ? "its GPU kernel adds each warp's row sums into y with atomics" : "";
  }

  Estimate estimate(const CsrRef& a, const MatrixStats&, const FormatParams&,
                    const TargetInfo& t) const override {
    Estimate e;
    const int64_t is = int64_t(size_of(a.index)), vs = int64_t(size_of(a.value));
    e.stored_entries = a.nnz;
    e.matrix_bytes = a.nnz * (2 * is + vs);
    if (t.backend == BackendKind::cpu) {
      // Row-run detection and the y write per row, like CSR's per-row loop overhead.
      e.cost_bytes = double(e.matrix_bytes) + 16.0 * double(a.rows);
      e.reason = "equal nonzero ranges per thread, carries for shared rows";
    } else {
      // A separate pass scales y (read + write) and each row segment pays an atomic.
      e.cost_bytes = double(e.matrix_bytes) + double(2 * vs + 32) * double(a.rows);
      e.reason = "warp segmented sums, atomics for rows crossing warps";
    }
    return e;
  }

  void to_triplets(const FormatData& d, const CsrRef& shape,
                   std::vector<Triplet>& out) const override {
    dispatch_types_complex(shape.index, shape.value, [&]<class I, class V>() {
      const I* row = d.arrays[COO_ROW_IDX].buf.template as<I>();
      const I* col = d.arrays[COO_COL_IDX].buf.template as<I>();
      const V* val = d.arrays[COO_VALUES].buf.template as<V>();
      for (int64_t k = 0; k < d.arrays[COO_ROW_IDX].count; ++k)
        if (val[k] != V(0)) out.push_back(make_triplet(int64_t(row[k]), int64_t(col[k]), val[k]));
    });
  }

  FormatData convert(const CsrRef& a, const FormatParams& p, const TargetInfo& t) const override {
    return dispatch_types_complex(a.index, a.value, [&]<class I, class V>() { return build<I, V>(a, p, t); });
  }

  // The row indices from one search of row_ptr per nonzero; col_idx and values are the shared
  // zero-based copies.
  bool converts_on_device() const override { return true; }
  std::vector<std::string> device_build_modules() const override { return {"coo_build"}; }
  FormatData convert_device(DeviceConverter& dc, const FormatParams& p, const TargetInfo& t) const override {
    const CsrRef& a = dc.shape();
    FormatData d;
    d.declare(name(), p, contract_arrays(), a.index, a.value);
    HostArray rows = dc.alloc(a.nnz, size_of(a.index));
    SpmvArgs g = dc.args();
    g.a[COO_BUILD_ROW_PTR] = a.row_ptr;
    g.a[COO_BUILD_ROW_IDX] = rows.device.get();
    g.n[COO_BUILD_N_NNZ] = a.nnz;
    if (a.nnz) dc.launch("coo_build", "spmvjit_build_rows", a.nnz, g);
    d.put(COO_ROW_IDX, std::move(rows));
    d.put(COO_COL_IDX, dc.col_idx(a.nnz));
    d.put(COO_VALUES, dc.values(a.nnz));
    finish(d, a, t);
    return d;
  }

 private:
  template <class I, class V>
  FormatData build(const CsrRef& a, const FormatParams& p, const TargetInfo& t) const {
    FormatData d;
    d.declare(name(), p, contract_arrays(), a.index, a.value);
    const I* rp = a.rp<I>();
    I* rows = d.make<I>(COO_ROW_IDX, a.nnz);
    for (int64_t r = 0; r < a.rows; ++r) std::fill(rows + rp[r], rows + rp[r + 1], I(r));
    std::copy_n(a.ci<I>(), a.nnz, d.make<I>(COO_COL_IDX, a.nnz));
    std::copy_n(a.vals<V>(), a.nnz, d.make<V>(COO_VALUES, a.nnz));
    finish(d, a, t);
    return d;
  }
  // Sizes, bytes, CPU parts (nonzero ranges) or the GPU launches.
  static void finish(FormatData& d, const CsrRef& a, const TargetInfo& t) {
    d.stored_entries = a.nnz;
    d.matrix_bytes = sum_matrix_bytes(d);
    d.ints[COO_N_NNZ] = a.nnz;
    if (t.backend == BackendKind::cpu) {
      const auto bounds = split_prefix(a.nnz, t.threads, [](int64_t u) { return u; });
      const int64_t parts = int64_t(bounds.size()) - 1;
      set_cpu_parts(d, COO_PARTS, bounds);
      d.ints[COO_N_PARTS] = parts;
      d.scratch_bytes =
          COO_CPU_CARRIES * parts * int64_t(size_of(a.value));  // first- and last-row sums per part
      d.steps.push_back({"spmvjit_fixup", 1, 1, 0});
    } else {
      const int64_t chunk = coo_warp_chunk(a.nnz, t);
      const int64_t warps = (a.nnz + chunk - 1) / chunk;
      d.ints[COO_N_WARP_ENTRIES] = chunk;
      d.steps.push_back({"spmvjit_scale", gpu_grid(a.rows, COO_GPU_BLOCK), COO_GPU_BLOCK, 0});
      d.steps.push_back(
          {"spmvjit_part", gpu_grid(warps, COO_GPU_BLOCK / t.warp_size), COO_GPU_BLOCK, 0, true});
    }
  }
};

}  // namespace

SPMVJIT_REGISTER_FORMAT(CooFormat)

}  // namespace spmvjit
