// HYB (Bell & Garland 2009): an ELL part of width K holds the first K entries of every row,
// a row-sorted COO tail the rest, so a few long rows no longer pad every row.
//
// Width rule (CUSP's): K is the largest width such that at least `threshold` rows have
// length >= K, i.e. K = the threshold-th largest row length. GPU: threshold = max(4096,
// rows/3) (below 4096 full rows an ELL column does not fill the device, CUSP's breakeven);
// CPU: threshold = rows/3 (a SIMD block fills at any size). K = 0 when rows < threshold.
#include <algorithm>

#include "engine/formats/format.hpp"
#include "engine/formats/format_a_util.hpp"
#include "engine/formats/partition.hpp"

namespace spmvjit {
#include "templates/contract/hyb.h"

namespace {

constexpr int64_t kRowGranule = 16;

// The ELL width and the tail it leaves, from the statistics alone (O(1), no row_ptr: device-
// resident input too). Exact when K < MatrixStats::kShortLengths, which the one-third rule makes
// the usual case (K <= 3 * mean); otherwise K is the lower bound of the log2 bucket holding the
// threshold-th longest row, and the tail is counted from bucket midpoints.
struct HybShape {
  int64_t k = 0, tail = 0, tail_rows = 0;
};
HybShape hyb_shape(const MatrixStats& s, const TargetInfo& t) {
  const int64_t third = (s.rows + 2) / 3;
  const int64_t threshold =
      std::max<int64_t>(1, t.backend == BackendKind::cpu ? third : std::max<int64_t>(4096, third));
  HybShape h;
  if (s.rows < threshold) {
    h.tail = s.nnz, h.tail_rows = s.rows - s.empty_rows;
    return h;
  }
  constexpr int64_t kShort = MatrixStats::kShortLengths;
  int64_t longer = s.rows;  // rows of kShort nonzeros or more
  for (int64_t n : s.len_count) longer -= n;
  if (longer < threshold) {
    int64_t acc = longer, l = kShort - 1;
    while ((acc += s.len_count[size_t(l)]) < threshold) --l;
    h.k = l;
    int64_t short_nnz = 0, short_rows = 0;  // rows of at most K nonzeros
    for (int64_t m = 0; m <= l; ++m)
      short_rows += s.len_count[size_t(m)], short_nnz += m * s.len_count[size_t(m)];
    h.tail_rows = s.rows - short_rows;
    h.tail = s.nnz - short_nnz - h.k * h.tail_rows;
    return h;
  }
  int64_t acc = 0;
  size_t k = s.row_hist.size() - 1;
  while (k > 1 && (acc += s.row_hist[k]) < threshold) --k;
  h.k = int64_t(1) << (k - 1);
  for (size_t j = k; j < s.row_hist.size(); ++j) {
    const int64_t mid = std::min<int64_t>(s.row_max, (int64_t(3) << j) / 4);
    if (mid > h.k) h.tail_rows += s.row_hist[j], h.tail += s.row_hist[j] * (mid - h.k);
  }
  return h;
}

class HybFormat final : public Format {
 public:
  std::string name() const override { return "hyb"; }
  std::span<const ArraySlot> contract_arrays() const override { return kHybArrays; }
  // CPU: measured time per modeled byte relative to csr (docs/PERFORMANCE.md, 2-vCPU Zen 4).
  double efficiency(const MatrixStats&, const TargetInfo& t) const override { return t.gpu() ? 1.0 : 1.45; }
  bool supports(BackendKind) const override { return true; }
  std::vector<FormatParams> candidates(const CsrRef&, const MatrixStats& s,
                                       const TargetInfo& t) const override {
    return {FormatParams{{"K", hyb_shape(s, t).k}}};
  }
  // K is a run-time size (args.n[HYB_N_WIDTH]): the kernel space stays one kernel per type pair.
  FormatParams kernel_constants(const FormatParams&) const override { return {}; }

  Estimate estimate(const CsrRef& a, const MatrixStats& s, const FormatParams& p,
                    const TargetInfo& t) const override {
    const int64_t k = p.at("K");
    HybShape h = hyb_shape(s, t);
    if (h.k != k) {  // parameters other than the planner's own (a caller's): count the tail
      h.tail = h.tail_rows = 0;
      for (int64_t r = 0; r < a.rows; ++r)
        if (const int64_t extra = a.row_len(r) - k; extra > 0) h.tail += extra, ++h.tail_rows;
    }
    const int64_t tail = h.tail, tail_rows = h.tail_rows;
    const int64_t is = int64_t(size_of(a.index)), vs = int64_t(size_of(a.value));
    Estimate e;
    e.stored_entries = a.rows * k + tail;
    e.matrix_bytes = a.rows * k * (is + vs) + tail * (2 * is + vs);
    if (t.backend == BackendKind::cpu) {
      // ELL blocks as for ell, plus a scalar tail loop (row test and scattered accumulate).
      e.cost_bytes = double(e.matrix_bytes) + 8.0 * double(a.rows) + 4.0 * double(tail);
    } else {
      // Second launch; one atomic per tail row segment.
      e.cost_bytes = double(e.matrix_bytes) + 4.0 * double(a.rows) + 32.0 * double(tail_rows);
    }
    e.imbalance = row_split_imbalance(s, t);
    e.reason = "ELL width " + std::to_string(k) + ", COO tail " + std::to_string(tail) + " entries";
    return e;
  }

  void to_triplets(const FormatData& d, const CsrRef& shape,
                   std::vector<Triplet>& out) const override {
    const int64_t k = d.ints[HYB_N_WIDTH], rows = d.ints[HYB_N_STRIDE], tail = d.ints[HYB_N_TAIL];
    dispatch_types(shape.index, shape.value, [&]<class I, class V>() {
      const I* col = d.arrays[HYB_ELL_COL].buf.template as<I>();
      const V* val = d.arrays[HYB_ELL_VALUES].buf.template as<V>();
      for (int64_t j = 0; j < k; ++j)
        for (int64_t r = 0; r < rows; ++r)
          if (val[j * rows + r] != V(0))
            out.push_back({r, int64_t(col[j * rows + r]), double(val[j * rows + r])});
      const I* trow = d.arrays[HYB_TAIL_ROW].buf.template as<I>();
      const I* tcol = d.arrays[HYB_TAIL_COL].buf.template as<I>();
      const V* tval = d.arrays[HYB_TAIL_VALUES].buf.template as<V>();
      for (int64_t i = 0; i < tail; ++i)
        if (tval[i] != V(0)) out.push_back({int64_t(trow[i]), int64_t(tcol[i]), double(tval[i])});
    });
  }

  FormatData convert(const CsrRef& a, const FormatParams& p, const TargetInfo& t) const override {
    return dispatch_types(a.index, a.value,
                          [&]<class I, class V>() { return build<I, V>(a, p, t); });
  }

 private:
  template <class I, class V>
  FormatData build(const CsrRef& a, const FormatParams& p, const TargetInfo& t) const {
    const int64_t k = p.at("K"), rows = a.rows;
    if (k < 0) fail(SPMV_STATUS_INVALID_VALUE, "hyb: K must be >= 0, got " + std::to_string(k));
    if ((long double)rows * k > 3.0L * a.nnz + rows)
      fail(SPMV_STATUS_UNSUPPORTED, "hyb: ELL width " + std::to_string(k) + " pads " +
                                        std::to_string(a.nnz) +
                                        " nonzeros to more than 3*nnz + rows slots; refusing");
    const I* rp = a.rp<I>();
    const I* ci = a.ci<I>();
    const V* av = a.vals<V>();
    // tail_ptr[r]: first tail entry of row r.
    std::vector<int64_t> tail_ptr(size_t(rows) + 1, 0);
    for (int64_t r = 0; r < rows; ++r)
      tail_ptr[size_t(r) + 1] =
          tail_ptr[size_t(r)] + std::max<int64_t>(0, int64_t(rp[r + 1] - rp[r]) - k);
    const int64_t tail = tail_ptr[size_t(rows)];
    FormatData d;
    d.declare(name(), p, contract_arrays(), a.index, a.value);
    I* cd = d.make<I>(HYB_ELL_COL, rows * k);
    V* vd = d.make<V>(HYB_ELL_VALUES, rows * k);
    I* tr = d.make<I>(HYB_TAIL_ROW, tail);
    I* tc = d.make<I>(HYB_TAIL_COL, tail);
    V* tv = d.make<V>(HYB_TAIL_VALUES, tail);
    for (int64_t r = 0; r < rows; ++r) {
      const int64_t b = rp[r], len = rp[r + 1] - b, in_ell = std::min(len, k);
      for (int64_t j = 0; j < in_ell; ++j) {
        cd[j * rows + r] = ci[b + j];
        vd[j * rows + r] = av[b + j];
      }
      const I pad = in_ell ? ci[b + in_ell - 1] : I(0);
      for (int64_t j = in_ell; j < k; ++j) {
        cd[j * rows + r] = pad;
        vd[j * rows + r] = V(0);
      }
      const int64_t t0 = tail_ptr[size_t(r)];
      for (int64_t j = in_ell; j < len; ++j) {
        tr[t0 + j - in_ell] = I(r);
        tc[t0 + j - in_ell] = ci[b + j];
        tv[t0 + j - in_ell] = av[b + j];
      }
    }
    d.stored_entries = rows * k + tail;
    d.matrix_bytes = sum_matrix_bytes(d);
    d.ints[HYB_N_WIDTH] = k;
    d.ints[HYB_N_STRIDE] = rows;
    d.ints[HYB_N_TAIL] = tail;
    d.facts["ell_width"] = k;
    d.facts["tail_entries"] = tail;
    if (t.backend == BackendKind::cpu) {
      // Parts own row ranges and exactly the tail entries of their rows: no shared y.
      const int64_t units = (rows + kRowGranule - 1) / kRowGranule;
      auto bounds = split_prefix(units, t.threads, [&](int64_t u) {
        const int64_t r = std::min(rows, u * kRowGranule);
        return r * (k + 1) + tail_ptr[size_t(r)];
      });
      int64_t* tail_bounds = d.make<int64_t>(HYB_TAIL_PARTS, int64_t(bounds.size()));
      for (size_t i = 0; i < bounds.size(); ++i) {
        bounds[i] = std::min(rows, bounds[i] * kRowGranule);
        tail_bounds[i] = tail_ptr[size_t(bounds[i])];
      }
      set_cpu_parts(d, HYB_PARTS, bounds);
    } else {
      d.steps.push_back({"spmvjit_part", gpu_grid(rows, HYB_GPU_BLOCK), HYB_GPU_BLOCK, 0});
      if (tail) {
        const int64_t chunk = coo_warp_chunk(tail, t);
        d.ints[HYB_N_WARP_ENTRIES] = chunk;
        d.steps.push_back({"spmvjit_tail", gpu_grid((tail + chunk - 1) / chunk, HYB_GPU_BLOCK / t.warp_size),
                           HYB_GPU_BLOCK, 0, true});
      }
    }
    return d;
  }
};

}  // namespace

SPMVJIT_REGISTER_FORMAT(HybFormat)

}  // namespace spmvjit
