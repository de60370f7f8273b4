// SELL-C-sigma: slices of C rows stored column-major, rows sorted by length within windows of
// sigma rows so slices pad little; sigma = 1 is plain sliced ELL (Kreutzer et al. 2014).
#include <algorithm>
#include <atomic>
#include <cstring>
#include <functional>
#include <numeric>

#include "core/log.hpp"
#include "core/parallel.hpp"
#include "engine/formats/device_converter.hpp"
#include "engine/formats/format.hpp"
#include "engine/formats/gpu_cost.hpp"
#include "engine/formats/partition.hpp"
#include "engine/formats/slice_util.hpp"
#include "engine/formats/sliced_device.hpp"
#include "engine/formats/sliced_estimate.hpp"

namespace spmvjit {
#include "templates/contract/sell.h"

namespace {

using namespace slice_util;

// Slices the device build lays out: up to two wavefronts of 64 rows (sell's C = 2 * warp).
bool power_of_two_slice(int64_t c) { return c >= 1 && c <= 128 && (c & (c - 1)) == 0; }

class SellFormat final : public Format {
 public:
  std::string name() const override { return "sell"; }
  std::span<const ArraySlot> contract_arrays() const override { return kSellArrays; }
  // CPU: measured time per modeled byte relative to csr, `bench --suite --formats all` three times
  // on a 2-vCPU Zen 5 VM, 2026-11-23: random 0.83, powerlaw 0.72, denserows 0.66, short 0.44,
  // poisson 0.87, stencil27 0.98, dense 1.02 (1.26 on the Zen 4 VM before, where csr was chosen
  // on random:500000 at 1.3x sell's time on this one).
  double efficiency(const MatrixStats&, const TargetInfo& t) const override { return t.gpu() ? 1.0 : 0.8; }
  bool supports(BackendKind) const override { return true; }
  bool supports_value(ValueType) const override { return true; }  // real and complex

  std::vector<FormatParams> candidates(const CsrRef& a, const MatrixStats& s,
                                       const TargetInfo& t) const override {
    const int64_t lanes = t.backend == BackendKind::cpu
                              ? std::max<int64_t>(1, t.simd_bytes / int64_t(size_of(a.value)))
                              : t.warp_size;
    std::vector<FormatParams> out;
    for (int64_t c : {lanes, 2 * lanes}) {
      out.push_back({{"C", c}, {"sigma", 1}});
      // Sorting only pays when row lengths vary; it costs a permuted y write per row.
      if (s.row_cv > 0.1) out.push_back({{"C", c}, {"sigma", c * 32}});
      // Heavy-tailed rows: only a global sort keeps padding bounded (at the price of scattered
      // y writes, which the estimate charges).
      // GPU: not considered (measured on an H100: 0.99x cuSPARSE on random-2M, 0.01x on
      // powerlaw-2M).
      if (t.backend == BackendKind::cpu && s.row_cv > 0.5 && s.rows > c * 32)
        out.push_back({{"C", c}, {"sigma", (s.rows + c - 1) / c * c}});
    }
    return out;
  }

  Estimate estimate(const CsrRef& a, const MatrixStats& s, const FormatParams& p,
                    const TargetInfo& t) const override {
    const int64_t c = p.at("C"), sigma = p.at("sigma");
    Estimate e;
    e.stored_entries = sliced_entries(s, c, sigma, 1);
    if (t.backend != BackendKind::cpu) {
      // One GPU thread per row: the longest row is one thread's serial chain while the device
      // idles; compare it with the chain of the same work spread over every resident thread
      // (at least one row's worth: a small matrix gives each thread one row or none).
      const double spread = std::max({1.0, double(e.stored_entries) / double(std::max<int64_t>(a.rows, 1)),
                                      double(e.stored_entries) / (std::max(t.sm_count, 1) * 2048.0)});
      e.imbalance = std::max({1.0, double(s.row_max) / spread, gpu_row_starvation(a.rows, t)});
    }
    const int64_t slices = (a.rows + c - 1) / c;
    e.matrix_bytes = e.stored_entries * int64_t(size_of(a.index) + size_of(a.value)) + 8 * (slices + 1) +
                     (sigma > 1 ? int64_t(size_of(a.index)) * a.rows : 0);
    // A permuted row costs a scattered y access (a cache line) on top of the perm entry.
    e.cost_bytes = double(e.matrix_bytes) + 8.0 * double(slices) + (sigma > 1 ? 16.0 * double(a.rows) : 0.0);
    if (e.stored_entries > kMaxPaddingFactor * s.nnz + c * slices) {
      e.applicable = false;
      e.reason = "padding to " + std::to_string(e.stored_entries) + " entries for " + std::to_string(s.nnz) +
                 " nonzeros";
    } else {
      e.reason = "padding overhead " + std::to_string(s.nnz ? double(e.stored_entries) / s.nnz : 1.0);
    }
    return e;
  }

  FormatParams kernel_constants(const FormatParams& p) const override {
    return {{"C", p.at("C")}, {"PERMUTED", p.at("sigma") > 1 ? 1 : 0}};
  }

  std::vector<FormatParams> kernel_variants(const TargetInfo& t, ValueType v) const override {
    std::vector<FormatParams> out;
    const int64_t lanes = t.backend == BackendKind::cpu
                              ? std::max<int64_t>(1, t.simd_bytes / int64_t(size_of(v)))
                              : t.warp_size;
    for (int64_t c : {lanes, 2 * lanes})
      for (int64_t perm : {0, 1}) out.push_back({{"C", c}, {"PERMUTED", perm}});
    return out;
  }

  void to_triplets(const FormatData& d, const CsrRef& shape, std::vector<Triplet>& out) const override {
    const int64_t c = d.params.at("C"), slices = d.ints[SELL_N_SLICES];
    const int64_t* sp = d.arrays[SELL_SLICE_PTR].buf.as<int64_t>();
    dispatch_types_complex(shape.index, shape.value, [&]<class I, class V>() {
      const I* col = d.arrays[SELL_COL_IDX].buf.template as<I>();
      const V* val = d.arrays[SELL_VALUES].buf.template as<V>();
      const I* perm = d.arrays[SELL_PERM].buf.template as<I>();
      for (int64_t s = 0; s < slices; ++s)
        for (int64_t k = sp[s]; k < sp[s + 1]; ++k) {
          const int64_t pos = s * c + (k - sp[s]) % c;
          if (pos >= shape.rows || val[k] == V(0)) continue;
          out.push_back(
              make_triplet(d.arrays[SELL_PERM].count ? int64_t(perm[pos]) : pos, int64_t(col[k]), val[k]));
        }
    });
  }

  // Slices of C sorted (or plain) rows, entries then padding: update_values' value map is each
  // row's first entry and count.
  bool sliced_values(const FormatData& d, SlicedValues& out) const override {
    const int64_t slices = d.ints[SELL_N_SLICES];
    const int64_t* sp = d.arrays[SELL_SLICE_PTR].buf.as<int64_t>();
    out.array = SELL_VALUES;
    out.c = d.params.at("C");
    out.slice_ptr.assign(sp, sp + slices + 1);
    const HostArray& perm = d.arrays[SELL_PERM];
    out.perm.resize(size_t(perm.count));
    dispatch_index(d.index, [&]<class I>() {
      const I* p = perm.buf.template as<I>();
      for (int64_t r = 0; r < perm.count; ++r) out.perm[size_t(r)] = int64_t(p[r]);
    });
    return true;
  }

  FormatData convert(const CsrRef& a, const FormatParams& p, const TargetInfo& t) const override {
    return dispatch_types_complex(a.index, a.value, [&]<class I, class V>() { return build<I, V>(a, p, t); });
  }
  bool converts_codes() const override { return true; }
  FormatData convert_codes(const CsrRef& a, const FormatParams& p, const TargetInfo& t) const override {
    return dispatch_index(a.index, [&]<class I>() { return build<I, uint8_t>(a, p, t); });
  }

  bool converts_on_device() const override { return true; }
  // Any sigma the host converter takes (sorted windows: engine/formats/sliced_device.hpp).
  bool device_convertible(const FormatParams& p) const override {
    const int64_t c = p.at("C"), sigma = p.at("sigma");
    return power_of_two_slice(c) && (sigma <= 1 || sigma % c == 0);
  }
  FormatData convert_device(DeviceConverter& dc, const FormatParams& p, const TargetInfo& t) const override {
    if (!device_convertible(p))
      fail(SPMV_STATUS_UNSUPPORTED, "sell: no device conversion for these parameters");
    const CsrRef& a = dc.shape();
    const int64_t c = p.at("C"), slices = ceil_div(a.rows, c);
    SlicedArrays l = build_sliced_on_device(dc, "sell", c, p.at("sigma"), 1, c * slices);
    FormatData d;
    d.declare(name(), p, contract_arrays(), a.index, a.value);
    d.put(SELL_SLICE_PTR, std::move(l.slice_ptr));
    d.put(SELL_COL_IDX, std::move(l.col_idx));
    d.put(SELL_VALUES, std::move(l.values));
    if (l.perm.count) d.put(SELL_PERM, std::move(l.perm));
    finish(d, a, slices, l.stored, t);
    return d;
  }
  std::vector<std::string> device_build_modules() const override {
    return {kSellBuildModule, kWindowSortModule};
  }

 private:
  template <class I, class V>
  FormatData build(const CsrRef& a, const FormatParams& p, const TargetInfo& t) const {
    const int64_t c = p.at("C"), sigma = p.at("sigma");
    if (c < 1 || (sigma > 1 && sigma % c != 0))
      fail(SPMV_STATUS_INVALID_VALUE, "sell: C must be >= 1 and sigma 1 or a multiple of C");
    const I* rp = a.rp<I>();
    const I* ci = a.ci<I>();
    const V* av = a.vals<V>();
    // Sorted position -> row; identity (and never materialized) when sigma == 1.
    TraceSteps trace("sell build");
    HostVector<int64_t> order;
    if (sigma > 1) order = window_order(a, sigma);
    trace.step("order");
    auto row_at = [&](int64_t pos) { return sigma > 1 ? order[size_t(pos)] : pos; };
    const int64_t slices = (a.rows + c - 1) / c;
    FormatData d;
    d.declare(name(), p, contract_arrays(), a.index, a.value);
    int64_t* slice_ptr = d.make<int64_t>(SELL_SLICE_PTR, slices + 1);
    slice_ptr[0] = 0;
    const int threads = plan_threads(a.nnz + a.rows);
    parallel_for(slices, threads, [&](int64_t s0, int64_t s1, int) {
      for (int64_t s = s0; s < s1; ++s) {
        int64_t w = 0;
        for (int64_t i = s * c; i < std::min(a.rows, (s + 1) * c); ++i) {
          const int64_t r = row_at(i);
          w = std::max<int64_t>(w, rp[r + 1] - rp[r]);
        }
        slice_ptr[s + 1] = w * c;
      }
    });
    for (int64_t s = 0; s < slices; ++s) slice_ptr[s + 1] += slice_ptr[s];
    const int64_t stored = slice_ptr[slices];
    check_padding("sell", stored, a.nnz, c * slices, double(sizeof(I) + size_of(a.value)),
                  std::is_same_v<I, int32_t>);
    trace.step("slice widths");
    I* cols = d.make<I>(SELL_COL_IDX, stored);
    V* vals = d.make<V>(SELL_VALUES, stored);
    // Each thread fills (and first-touches) an equal share of the stored columns (a slice's column
    // j is its c slots j * c .. j * c + c - 1), so one slice of dense rows is shared too. A slice
    // is written in tiles of kTile columns, row by row: a wide slice's strided writes stay in
    // cache. Sorted rows are read out of order: the rows a few slices ahead are prefetched, as no
    // hardware prefetcher follows `order`.
    constexpr int64_t kTile = 256;
    const int64_t ahead = std::max<int64_t>(1, 64 / c), columns = stored / c;
    const int parts = plan_threads(stored + a.rows);
    // Each entry is copied once: its zero values counted (d.nonzero_slots) spare the plan a pass.
    std::atomic<int64_t> zero_values{0};
    parallel_for(parts, parts, [&](int64_t p0, int64_t p1, int) {
      const int64_t u0 = columns * p0 / parts, u1 = columns * p1 / parts;
      if (u0 == u1) return;
      int64_t zeros = 0;
      // The slice holding column u0: the last one starting at or before it.
      int64_t s = std::upper_bound(slice_ptr, slice_ptr + slices + 1, u0 * c) - slice_ptr - 1;
      for (int64_t q = s; sigma > 1 && q < std::min(slices, s + ahead); ++q)
        prefetch_rows(rp, ci, av, order, q * c, c, a.rows);
      for (; s < slices && slice_ptr[s] < u1 * c; ++s) {
        if (sigma > 1 && s + ahead < slices) prefetch_rows(rp, ci, av, order, (s + ahead) * c, c, a.rows);
        const int64_t first = slice_ptr[s] / c, j0 = std::max(u0, first) - first,
                      j1 = std::min(u1, slice_ptr[s + 1] / c) - first;
        for (int64_t t0 = j0; t0 < j1; t0 += kTile) {
          const int64_t t1 = std::min(j1, t0 + kTile);
          for (int64_t i = 0; i < c; ++i) {
            const int64_t pos = s * c + i;
            int64_t b = 0, len = 0;
            if (pos < a.rows) b = rp[row_at(pos)], len = rp[row_at(pos) + 1] - b;
            // Padding repeats the row's last column (already in cache) with a zero value.
            const I pad_col = len ? ci[b + len - 1] : I(0);
            I* cdst = cols + slice_ptr[s] + i;
            V* vdst = vals + slice_ptr[s] + i;
            const int64_t copy_end = std::min(t1, std::max(t0, len));
            for (int64_t j = t0; j < copy_end; ++j) {
              cdst[j * c] = ci[b + j];
              vdst[j * c] = av[b + j];
              zeros += av[b + j] == V(0);
            }
            for (int64_t j = copy_end; j < t1; ++j) {
              cdst[j * c] = pad_col;
              vdst[j * c] = V(0);
            }
          }
        }
      }
      zero_values += zeros;
    });
    d.nonzero_slots = a.nnz - zero_values.load();
    trace.step("fill");
    if (sigma > 1) {
      I* perm = d.make<I>(SELL_PERM, a.rows);
      for (int64_t r = 0; r < a.rows; ++r) perm[r] = I(order[size_t(r)]);
    }
    trace.step("perm");
    finish(d, a, slices, stored, t);
    if (t.backend == BackendKind::cpu)
      set_cpu_parts(d, SELL_PARTS,
                    split_prefix(slices, t.threads, [&](int64_t u) { return slice_ptr[u] + u * c; }));
    return d;
  }
  // Sizes, bytes and facts; the GPU launch (one thread per sorted row position).
  static void finish(FormatData& d, const CsrRef& a, int64_t slices, int64_t stored, const TargetInfo& t) {
    d.stored_entries = stored;
    d.matrix_bytes = sum_matrix_bytes(d);
    d.ints[SELL_N_SLICES] = slices;
    d.facts = sliced_facts(slices, stored, a.nnz);
    if (t.gpu()) d.steps.push_back({"spmvjit_part", ceil_div(a.rows, SELL_GPU_BLOCK), SELL_GPU_BLOCK, 0});
  }
};

}  // namespace

SPMVJIT_REGISTER_FORMAT(SellFormat)

}  // namespace spmvjit
