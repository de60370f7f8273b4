// ELL: every row padded to the longest row W and stored column-major (entry j of row r at
// j*rows + r), so consecutive rows are consecutive in memory: SIMD lanes / GPU threads take
// one row each with unit-stride loads and no row pointer at all.
#include <algorithm>
#include <cstdio>

#include "engine/formats/device_converter.hpp"
#include "engine/formats/format.hpp"
#include "engine/formats/format_a_util.hpp"
#include "engine/formats/gpu_cost.hpp"
#include "engine/formats/partition.hpp"

namespace spmvjit {
#include "templates/contract/ell.h"

namespace {

// Row granule of CPU parts: 16 rows keep each part's slice of a column on whole cache lines.
constexpr int64_t kRowGranule = 16;

// rows*W > 3*nnz + rows is refused: beyond that the padding costs more than any layout gain.
bool too_padded(int64_t rows, int64_t w, int64_t nnz) {
  return (long double)rows * (long double)w > 3.0L * (long double)nnz + (long double)rows;
}

std::string padding_message(int64_t rows, int64_t w, int64_t nnz) {
  char slots[64];
  std::snprintf(slots, sizeof slots, "%.0Lf", (long double)rows * (long double)w);  // may pass 2^63
  return "ell: padding " + std::to_string(rows) + " rows to width " + std::to_string(w) +
         " gives " + slots + " slots for " + std::to_string(nnz) + " nonzeros (limit 3*nnz + rows)";
}

class EllFormat final : public Format {
 public:
  std::string name() const override { return "ell"; }
  std::span<const ArraySlot> contract_arrays() const override { return kEllArrays; }
  // CPU: measured time per modeled byte relative to csr (docs/PERFORMANCE.md, 2-vCPU Zen 4).
  double efficiency(const MatrixStats&, const TargetInfo& t) const override { return t.gpu() ? 1.0 : 1.3; }
  bool supports(BackendKind) const override { return true; }
  bool supports_value(ValueType) const override { return true; }  // real and complex
  std::vector<FormatParams> candidates(const CsrRef&, const MatrixStats&,
                                       const TargetInfo&) const override {
    return {FormatParams{}};
  }
  FormatParams kernel_constants(const FormatParams&) const override { return {}; }

  Estimate estimate(const CsrRef& a, const MatrixStats& s, const FormatParams&,
                    const TargetInfo& t) const override {
    Estimate e;
    e.imbalance = gpu_row_starvation(a.rows, t);
    const int64_t w = s.row_max;
    if (too_padded(a.rows, w, a.nnz)) {
      e.applicable = false;
      e.reason = padding_message(a.rows, w, a.nnz);
      return e;
    }
    e.stored_entries = a.rows * w;
    e.matrix_bytes = e.stored_entries * int64_t(size_of(a.index) + size_of(a.value));
    // No row pointer and no per-row loop: only the y write and a short block epilogue.
    e.cost_bytes = double(e.matrix_bytes) + 4.0 * double(a.rows);
    e.reason = "width " + std::to_string(w) + ", padding ratio " +
               std::to_string(a.nnz ? double(e.stored_entries) / double(a.nnz) : 1.0);
    return e;
  }

  void to_triplets(const FormatData& d, const CsrRef& shape,
                   std::vector<Triplet>& out) const override {
    const int64_t w = d.ints[ELL_N_WIDTH], rows = d.ints[ELL_N_STRIDE];
    dispatch_types_complex(shape.index, shape.value, [&]<class I, class V>() {
      const I* col = d.arrays[ELL_COL_IDX].buf.template as<I>();
      const V* val = d.arrays[ELL_VALUES].buf.template as<V>();
      for (int64_t j = 0; j < w; ++j)
        for (int64_t r = 0; r < rows; ++r)
          if (val[j * rows + r] != V(0))
            out.push_back(make_triplet(r, int64_t(col[j * rows + r]), val[j * rows + r]));
    });
  }

  // One slice of every row (entry j of row r at j * rows + r, padding after the entries):
  // update_values' value map is each row's first entry and count.
  bool sliced_values(const FormatData& d, SlicedValues& out) const override {
    const int64_t w = d.ints[ELL_N_WIDTH], rows = d.ints[ELL_N_STRIDE];
    if (rows <= 0) return false;
    out.array = ELL_VALUES;
    out.c = rows;
    out.slice_ptr = {0, w * rows};
    return true;
  }

  FormatData convert(const CsrRef& a, const FormatParams& p, const TargetInfo& t) const override {
    return dispatch_types_complex(a.index, a.value, [&]<class I, class V>() { return build<I, V>(a, p, t); });
  }

  // The width first (refused here, before allocating, when the padding is too much), then one
  // thread per row.
  bool converts_on_device() const override { return true; }
  std::vector<std::string> device_build_modules() const override { return {"ell_build"}; }
  FormatData convert_device(DeviceConverter& dc, const FormatParams& p, const TargetInfo& t) const override {
    const CsrRef& a = dc.shape();
    HostArray width = dc.alloc(1, sizeof(int64_t));
    SpmvArgs g = dc.args();
    g.a[ELL_BUILD_ROW_PTR] = a.row_ptr;
    g.a[ELL_BUILD_COL_IDX_IN] = a.col_idx;
    g.a[ELL_BUILD_VALUES_IN] = a.val;
    g.a[ELL_BUILD_WIDTH] = width.device.get();
    dc.launch("ell_build", "spmvjit_build_width_init", 1, g);
    if (a.rows) dc.launch("ell_build", "spmvjit_build_width", a.rows, g);
    const int64_t w = dc.read_i64(width.device.get());
    if (too_padded(a.rows, w, a.nnz))
      fail(SPMV_STATUS_UNSUPPORTED, padding_message(a.rows, w, a.nnz) + "; refusing");
    FormatData d;
    d.declare(name(), p, contract_arrays(), a.index, a.value);
    HostArray col = dc.alloc(a.rows * w, size_of(a.index)), val = dc.alloc(a.rows * w, size_of(a.value));
    g.a[ELL_BUILD_COL_IDX] = col.device.get();
    g.a[ELL_BUILD_VALUES] = val.device.get();
    g.n[ELL_BUILD_N_WIDTH] = w;
    if (a.rows && w) dc.launch("ell_build", "spmvjit_build_fill", a.rows, g);
    d.put(ELL_COL_IDX, std::move(col));
    d.put(ELL_VALUES, std::move(val));
    finish(d, a, w, t);
    return d;
  }

 private:
  template <class I, class V>
  FormatData build(const CsrRef& a, const FormatParams& p, const TargetInfo& t) const {
    const I* rp = a.rp<I>();
    const I* ci = a.ci<I>();
    const V* av = a.vals<V>();
    int64_t w = 0;
    for (int64_t r = 0; r < a.rows; ++r) w = std::max<int64_t>(w, rp[r + 1] - rp[r]);
    if (too_padded(a.rows, w, a.nnz))
      fail(SPMV_STATUS_UNSUPPORTED, padding_message(a.rows, w, a.nnz) + "; refusing");
    const int64_t rows = a.rows, stored = rows * w;
    FormatData d;
    d.declare(name(), p, contract_arrays(), a.index, a.value);
    I* cd = d.make<I>(ELL_COL_IDX, stored);
    V* vd = d.make<V>(ELL_VALUES, stored);
    for (int64_t r = 0; r < rows; ++r) {
      const int64_t b = rp[r], len = rp[r + 1] - b;
      for (int64_t j = 0; j < len; ++j) {
        cd[j * rows + r] = ci[b + j];
        vd[j * rows + r] = av[b + j];
      }
      // Padding repeats the row's last column (already in cache) with a zero value.
      const I pad = len ? ci[b + len - 1] : I(0);
      for (int64_t j = len; j < w; ++j) {
        cd[j * rows + r] = pad;
        vd[j * rows + r] = V(0);
      }
    }
    finish(d, a, w, t);
    return d;
  }
  // Sizes, bytes and facts; CPU parts (row ranges) or the GPU launch.
  static void finish(FormatData& d, const CsrRef& a, int64_t w, const TargetInfo& t) {
    const int64_t rows = a.rows, stored = rows * w;
    d.stored_entries = stored;
    d.matrix_bytes = sum_matrix_bytes(d);
    d.ints[ELL_N_WIDTH] = w;
    d.ints[ELL_N_STRIDE] = rows;
    d.facts["width"] = w;
    d.facts["padding_ratio"] = a.nnz ? double(stored) / double(a.nnz) : 1.0;
    if (t.backend == BackendKind::cpu) {
      const int64_t units = (rows + kRowGranule - 1) / kRowGranule;
      auto bounds = split_prefix(units, t.threads, [](int64_t u) { return u; });
      for (auto& b : bounds) b = std::min(rows, b * kRowGranule);
      set_cpu_parts(d, ELL_PARTS, bounds);
    } else {
      d.steps.push_back({"spmvjit_part", gpu_grid(rows, ELL_GPU_BLOCK), ELL_GPU_BLOCK, 0});
    }
  }
};

}  // namespace

SPMVJIT_REGISTER_FORMAT(EllFormat)

}  // namespace spmvjit
