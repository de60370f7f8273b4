// SELL-P (Anzt, Tomov, Dongarra 2014): SELL-C-sigma whose slice widths are padded to a multiple
// of t, so t lanes can share one row. Within a slice the entries form chunks of C*t slots; in a
// chunk, row i owns the t consecutive slots [i*t, i*t + t): a GPU slice runs on C*t threads
// (t per row, reduced with shuffles), a CPU slice keeps C*t accumulators (t per row).
#include <algorithm>
#include <cstring>

#include "core/parallel.hpp"
#include "engine/formats/format.hpp"
#include "engine/formats/gpu_cost.hpp"
#include "engine/formats/partition.hpp"
#include "engine/formats/slice_util.hpp"
#include "engine/formats/sliced_device.hpp"
#include "engine/formats/sliced_estimate.hpp"

namespace spmvjit {
#include "templates/contract/sellp.h"

namespace {

using namespace slice_util;

// Slice widths (entries per row, multiple of t) for the given row order.
std::vector<int64_t> slice_widths(const CsrRef& a, const HostVector<int64_t>& order, int64_t c, int64_t t) {
  const int64_t slices = ceil_div(a.rows, c);
  std::vector<int64_t> w(size_t(slices), 0);
  for (int64_t s = 0; s < slices; ++s) {
    int64_t m = 0;
    for (int64_t i = s * c; i < std::min(a.rows, (s + 1) * c); ++i) m = std::max(m, a.row_len(order[i]));
    w[size_t(s)] = ceil_div(m, t) * t;
  }
  return w;
}

class SellpFormat final : public Format {
 public:
  std::string name() const override { return "sellp"; }
  bool supports_value(ValueType) const override { return true; }  // real and complex
  std::span<const ArraySlot> contract_arrays() const override { return kSellpArrays; }
  // CPU: measured time per modeled byte relative to csr (docs/PERFORMANCE.md, 2-vCPU Zen 4).
  double efficiency(const MatrixStats&, const TargetInfo& t) const override { return t.gpu() ? 1.0 : 3.8; }
  bool supports(BackendKind) const override { return true; }

  std::vector<FormatParams> candidates(const CsrRef& a, const MatrixStats& s,
                                       const TargetInfo& t) const override {
    std::vector<FormatParams> out;
    const bool cpu = t.backend == BackendKind::cpu;
    // Rows per slice: SIMD lanes on the CPU; on a GPU one warp of rows, t threads each (MAGMA's
    // SELL-P layout).
    const int64_t c = lanes(t, size_of(a.value));
    // Sorting windows: none, 32 slices, and (very irregular rows) the whole matrix.
    std::vector<int64_t> sigmas = {1};
    if (s.row_cv > 0.1) sigmas.push_back(c * 32);
    // GPU: no global sort: on an H100 it never won (0.98x cuSPARSE on random-2M, 0.02x on
    // powerlaw-2M).
    if (cpu && s.row_cv > 0.5 && a.rows > c * 32) sigmas.push_back(ceil_div(a.rows, c) * c);
    // GPU: more threads per row pay off for longer rows.
    // CPU: t only unrolls the row loop, and t = 4 never beat t = 2 on the suite (each candidate
    // costs a padded-size estimate, so fewer keep planning fast).
    for (int64_t tt : cpu ? std::vector<int64_t>{2} : std::vector<int64_t>{2, 4, 8}) {
      if (!cpu && tt > 2 && s.row_mean < 2.0 * double(tt)) continue;
      for (int64_t sigma : sigmas) out.push_back({{"C", c}, {"sigma", sigma}, {"t", tt}});
    }
    return out;
  }

  Estimate estimate(const CsrRef& a, const MatrixStats& s, const FormatParams& p,
                    const TargetInfo& tg) const override {
    const int64_t c = p.at("C"), sigma = p.at("sigma"), t = p.at("t");
    Estimate e;
    e.imbalance = gpu_row_starvation(a.rows * t, tg);
    e.stored_entries = sliced_entries(s, c, sigma, t);
    const int64_t slices = ceil_div(a.rows, c);
    e.matrix_bytes = e.stored_entries * int64_t(size_of(a.index) + size_of(a.value)) + 8 * (slices + 1) +
                     (sigma > 1 ? int64_t(size_of(a.index)) * a.rows : 0);
    // Per slice: loop setup plus the t-way reduction of each row.
    e.cost_bytes = double(e.matrix_bytes) + 8.0 * double(slices) + 2.0 * double(a.rows) * double(t - 1);
    if (e.stored_entries > kMaxPaddingFactor * s.nnz + c * t * slices) {
      e.applicable = false;
      e.reason = "padding to " + std::to_string(e.stored_entries) + " entries for " + std::to_string(s.nnz) +
                 " nonzeros";
    } else {
      e.reason = "padding overhead " + std::to_string(s.nnz ? double(e.stored_entries) / double(s.nnz) : 1.0);
    }
    return e;
  }

  FormatParams kernel_constants(const FormatParams& p) const override {
    return {{"C", p.at("C")}, {"t", p.at("t")}, {"PERMUTED", p.at("sigma") > 1 ? 1 : 0}};
  }

  std::vector<FormatParams> kernel_variants(const TargetInfo& t, ValueType v) const override {
    std::vector<FormatParams> out;
    const bool cpu = t.backend == BackendKind::cpu;
    const int64_t c = lanes(t, size_of(v));  // as candidates choose it
    for (int64_t tt : cpu ? std::vector<int64_t>{2, 4} : std::vector<int64_t>{2, 4, 8})
      for (int64_t perm : {0, 1}) out.push_back({{"C", c}, {"PERMUTED", perm}, {"t", tt}});
    return out;
  }

  void to_triplets(const FormatData& d, const CsrRef& shape, std::vector<Triplet>& out) const override {
    const int64_t c = d.params.at("C"), t = d.params.at("t"), slices = d.ints[SELLP_N_SLICES];
    const int64_t* sp = d.arrays[SELLP_SLICE_PTR].buf.as<int64_t>();
    dispatch_types_complex(shape.index, shape.value, [&]<class I, class V>() {
      const I* col = d.arrays[SELLP_COL_IDX].buf.template as<I>();
      const V* val = d.arrays[SELLP_VALUES].buf.template as<V>();
      const I* perm = d.arrays[SELLP_PERM].buf.template as<I>();
      for (int64_t s = 0; s < slices; ++s)
        for (int64_t k = sp[s]; k < sp[s + 1]; ++k) {
          const int64_t pos = s * c + ((k - sp[s]) % (c * t)) / t;
          if (pos >= shape.rows || val[k] == V(0)) continue;
          out.push_back(
              make_triplet(d.arrays[SELLP_PERM].count ? int64_t(perm[pos]) : pos, int64_t(col[k]), val[k]));
        }
    });
  }

  FormatData convert(const CsrRef& a, const FormatParams& p, const TargetInfo& t) const override {
    return dispatch_types_complex(a.index, a.value, [&]<class I, class V>() { return build<I, V>(a, p, t); });
  }

  // Every parameter set of a GPU target's candidates: slices of C rows, C a power of two up to
  // 64, any t and sigma (templates/gpu/sell_build.cu).
  bool converts_on_device() const override { return true; }
  bool device_convertible(const FormatParams& p) const override {
    const int64_t c = p.at("C"), t = p.at("t"), sigma = p.at("sigma");
    return c >= 1 && c <= 64 && (c & (c - 1)) == 0 && t >= 1 && (t & (t - 1)) == 0 &&
           (sigma <= 1 || sigma % c == 0);
  }
  FormatData convert_device(DeviceConverter& dc, const FormatParams& p, const TargetInfo& tg) const override {
    if (!device_convertible(p))
      fail(SPMV_STATUS_UNSUPPORTED, "sellp: no device conversion for these parameters");
    check_params(p, tg);
    const CsrRef& a = dc.shape();
    const int64_t c = p.at("C"), t = p.at("t"), slices = ceil_div(a.rows, c);
    SlicedArrays l = build_sliced_on_device(dc, "sellp", c, p.at("sigma"), t, c * t * slices);
    FormatData d;
    d.declare(name(), p, contract_arrays(), a.index, a.value);
    d.put(SELLP_SLICE_PTR, std::move(l.slice_ptr));
    d.put(SELLP_COL_IDX, std::move(l.col_idx));
    d.put(SELLP_VALUES, std::move(l.values));
    if (l.perm.count) {
      d.put(SELLP_PERM, std::move(l.perm));
    } else {
      d.at(SELLP_PERM, size_of(a.index));  // empty, typed as the host leaves it
    }
    d.stored_entries = l.stored;
    d.matrix_bytes = sum_matrix_bytes(d);
    d.ints[SELLP_N_SLICES] = slices;
    d.facts = sliced_facts(slices, l.stored, a.nnz);
    finish_steps(d, nullptr, slices, c, t, tg);
    return d;
  }
  std::vector<std::string> device_build_modules() const override {
    return {kSellBuildModule, kWindowSortModule};
  }

 private:
  static void check_params(const FormatParams& p, const TargetInfo& tg) {
    const int64_t c = p.at("C"), sigma = p.at("sigma"), t = p.at("t");
    if (c < 1 || t < 1 || (t & (t - 1)) || (sigma > 1 && sigma % c != 0))
      fail(SPMV_STATUS_INVALID_VALUE, "sellp: need C >= 1, t a power of two, sigma 1 or a multiple of C");
    // The kernel's shuffles need whole warps (templates/gpu/sellp.cu).
    if (tg.backend != BackendKind::cpu && (c * t > SELLP_GPU_MAX_BLOCK || (c * t) % tg.warp_size != 0))
      fail(SPMV_STATUS_INVALID_VALUE, "sellp: C*t must be a multiple of the warp width (" +
                                          std::to_string(tg.warp_size) + ") and at most " +
                                          std::to_string(int(SELLP_GPU_MAX_BLOCK)) + " on a GPU");
  }
  // Launch steps: CPU parts by slice (slice_ptr on the host), or one GPU block of C*t threads per slice.
  static void finish_steps(FormatData& d, const int64_t* slice_ptr, int64_t slices, int64_t c, int64_t t,
                           const TargetInfo& tg) {
    if (tg.backend == BackendKind::cpu) {
      set_cpu_parts(d, SELLP_PARTS,
                    split_prefix(slices, tg.threads, [&](int64_t u) { return slice_ptr[u] + u * c; }));
    } else if (slices > 0) {
      d.steps.push_back({"spmvjit_part", slices, int(c * t), 0});
    }
  }

  template <class I, class V>
  FormatData build(const CsrRef& a, const FormatParams& p, const TargetInfo& tg) const {
    check_params(p, tg);
    const int64_t c = p.at("C"), sigma = p.at("sigma"), t = p.at("t");
    const auto order = window_order(a, sigma);
    const auto w = slice_widths(a, order, c, t);
    const int64_t slices = int64_t(w.size());
    FormatData d;
    d.declare(name(), p, contract_arrays(), a.index, a.value);
    int64_t* slice_ptr = d.make<int64_t>(SELLP_SLICE_PTR, slices + 1);
    slice_ptr[0] = 0;
    for (int64_t s = 0; s < slices; ++s) slice_ptr[s + 1] = slice_ptr[s] + w[size_t(s)] * c;
    const int64_t stored = slice_ptr[slices];
    check_padding("sellp", stored, a.nnz, c * t * slices, sizeof(I) + sizeof(V), sizeof(I) == 4);
    I* col = d.make<I>(SELLP_COL_IDX, stored);
    V* val = d.make<V>(SELLP_VALUES, stored);
    const I* rp = a.rp<I>();
    const I* ci = a.ci<I>();
    const V* av = a.vals<V>();
    const int64_t ct = c * t;
    auto fill_slice = [&](int64_t s) {
      const int64_t width = w[size_t(s)];
      if (width == 0) return;  // nothing stored (col is null when nothing is at all)
      for (int64_t i = 0; i < c; ++i) {
        const int64_t pos = s * c + i;
        int64_t b = 0, len = 0;
        if (pos < a.rows) b = rp[order[pos]], len = rp[order[pos] + 1] - b;
        // Padding repeats the row's last column (already in cache) with a zero value.
        const I pad_col = len ? ci[b + len - 1] : I(0);
        I* cdst = col + slice_ptr[s] + i * t;
        V* vdst = val + slice_ptr[s] + i * t;
        for (int64_t j = 0; j < width; ++j) {
          const int64_t at = (j / t) * ct + (j % t);
          cdst[at] = j < len ? ci[b + j] : pad_col;
          vdst[at] = j < len ? av[b + j] : V(0);
        }
      }
    };
    // Each thread fills (and first-touches) whole slices, prefetching the rows a few slices ahead
    // (sorted rows are read out of order).
    const int64_t ahead = std::max<int64_t>(1, 64 / c);
    parallel_for(slices, plan_threads(a.nnz + a.rows), [&](int64_t s0, int64_t s1, int) {
      if (sigma > 1)
        for (int64_t s = s0; s < std::min(s1, s0 + ahead); ++s)
          prefetch_rows(rp, ci, av, order, s * c, c, a.rows);
      for (int64_t s = s0; s < s1; ++s) {
        if (sigma > 1 && s + ahead < s1) prefetch_rows(rp, ci, av, order, (s + ahead) * c, c, a.rows);
        fill_slice(s);
      }
    });
    finish_sliced<I>(d, SELLP_PERM, SELLP_N_SLICES, order, sigma > 1, a.rows, slices, stored, a.nnz);
    finish_steps(d, slice_ptr, slices, c, t, tg);
    return d;
  }
};

}  // namespace

SPMVJIT_REGISTER_FORMAT(SellpFormat)

}  // namespace spmvjit
