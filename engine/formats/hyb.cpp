// HYB (Bell & Garland 2009): an ELL part of width K holds the first K entries of every row,
// a row-sorted COO tail the rest, so a few long rows no longer pad every row.
//
// Width rule (CUSP's): K is the largest width such that at least `threshold` rows have
// length >= K, i.e. K = the threshold-th largest row length. GPU: threshold = max(4096,
// rows/3) (below 4096 full rows an ELL column does not fill the device, CUSP's breakeven);
// CPU: threshold = rows/3 (a SIMD block fills at any size). K = 0 when rows < threshold.
#include <algorithm>
#include <array>
#include <functional>
#include <vector>

#include "engine/formats/device_converter.hpp"
#include "engine/formats/format.hpp"
#include "engine/formats/format_a_util.hpp"
#include "engine/formats/partition.hpp"

namespace spmvjit {
#include "templates/contract/hyb.h"

namespace {

constexpr int64_t kRowGranule = 16;

// rows*K > 3*nnz + rows is refused: beyond that the padding costs more than any layout gain.
bool too_padded(const CsrRef& a, int64_t k) { return (long double)a.rows * k > 3.0L * a.nnz + a.rows; }
std::string padding_message(const CsrRef& a, int64_t k) {
  return "hyb: ELL width " + std::to_string(k) + " pads " + std::to_string(a.nnz) +
         " nonzeros to more than 3*nnz + rows slots";
}

// The tail a width K leaves (entries past K and the rows holding them), from the statistics
// alone (no row_ptr: device-resident input too). Exact when K < MatrixStats::kShortLengths: rows
// shorter than that are counted by length (len_count) and the longer ones by their total. Past
// that, rows of the log2 buckets reaching past K are taken at their sampled rows' lengths (spread
// evenly over the bucket when none was sampled: a few long rows a sample misses), O(sample).
struct HybTail {
  int64_t entries = 0, rows = 0;
};
HybTail hyb_tail(const MatrixStats& s, int64_t k) {
  constexpr int64_t kShort = MatrixStats::kShortLengths;
  HybTail h;
  if (k < kShort) {
    int64_t long_rows = s.rows, long_nnz = s.nnz;  // rows of kShort nonzeros or more
    for (int64_t m = 0; m < kShort; ++m) {
      const int64_t n = s.len_count[size_t(m)];
      long_rows -= n, long_nnz -= m * n;
      if (m > k) h.entries += (m - k) * n, h.rows += n;
    }
    h.entries += long_nnz - k * long_rows, h.rows += long_rows;
    return h;
  }
  // Bucket j holds lengths [2^(j-1), 2^j): only buckets reaching past K have tail rows.
  constexpr size_t kBins = std::tuple_size_v<decltype(s.row_hist)>;
  std::array<double, kBins> n{}, excess{}, longer{};  // sampled rows; their entries and rows past K
  if (s.sample) {
    const CsrRef m = s.sample->ref();
    for (int64_t r = 0; r < m.rows; ++r)
      if (const int64_t len = m.row_len(r); len > 0) {
        const size_t j = size_t(64 - __builtin_clzll(uint64_t(len)));
        n[j] += 1, excess[j] += double(std::max<int64_t>(0, len - k)), longer[j] += len > k;
      }
  }
  double entries = 0, rows = 0;
  for (size_t j = 1; j < kBins; ++j) {
    const int64_t lo = int64_t(1) << (j - 1), hi = std::min(s.row_max, (int64_t(1) << j) - 1);
    if (!s.row_hist[j] || hi <= k) continue;
    const double count = double(s.row_hist[j]);
    if (n[j]) {
      entries += count * excess[j] / n[j], rows += count * longer[j] / n[j];
    } else {
      // Unsampled: lengths taken as spread evenly over [lo, hi].
      const int64_t first = std::max(k + 1, lo);
      const double above = count * double(hi - first + 1) / double(hi - lo + 1);
      entries += above * (0.5 * double(first + hi) - double(k)), rows += above;
    }
  }
  h.entries = int64_t(entries + 0.5), h.rows = int64_t(rows + 0.5);
  return h;
}

// The planner's width (the one-third rule above), from the statistics: exact when K <
// MatrixStats::kShortLengths, which the rule makes the usual case (K <= 3 * mean); otherwise K is
// read from the sampled rows of the log2 bucket holding the threshold-th longest row.
int64_t hyb_width(const MatrixStats& s, const TargetInfo& t) {
  const int64_t third = (s.rows + 2) / 3;
  const int64_t threshold =
      std::max<int64_t>(1, t.backend == BackendKind::cpu ? third : std::max<int64_t>(4096, third));
  if (s.rows < threshold) return 0;
  constexpr int64_t kShort = MatrixStats::kShortLengths;
  int64_t longer = s.rows;  // rows of kShort nonzeros or more
  for (int64_t n : s.len_count) longer -= n;
  if (longer < threshold) {
    int64_t acc = longer, l = kShort - 1;
    while ((acc += s.len_count[size_t(l)]) < threshold) --l;
    return l;
  }
  int64_t acc = 0;
  size_t k = s.row_hist.size() - 1;
  while (k > 1 && (acc += s.row_hist[k]) < threshold) --k;
  // The threshold-th longest row lies in bucket k, `need` rows from its top: its length is the
  // matching quantile of the bucket's sampled rows (a dense matrix gets its full width, not the
  // bucket's lower bound with half of every row in the tail).
  const int64_t lo = int64_t(1) << (k - 1), hi = std::min(s.row_max, (int64_t(1) << k) - 1);
  const int64_t need = threshold - (acc - s.row_hist[k]);
  std::vector<int64_t> lens;
  if (s.sample) {
    const CsrRef m = s.sample->ref();
    for (int64_t r = 0; r < m.rows; ++r)
      if (const int64_t len = m.row_len(r); len >= lo && len <= hi) lens.push_back(len);
  }
  if (lens.empty() || s.row_hist[k] <= 0) return lo;
  std::sort(lens.begin(), lens.end(), std::greater<>());
  const auto at =
      size_t(std::min<int64_t>(int64_t(lens.size()) - 1, (need - 1) * int64_t(lens.size()) / s.row_hist[k]));
  return lens[at];
}

class HybFormat final : public Format {
 public:
  std::string name() const override { return "hyb"; }
  bool supports_value(ValueType) const override { return true; }  // real and complex
  std::span<const ArraySlot> contract_arrays() const override { return kHybArrays; }
  // CPU: measured time per modeled byte relative to csr (docs/PERFORMANCE.md, 2-vCPU Zen 4).
  double efficiency(const MatrixStats&, const TargetInfo& t) const override { return t.gpu() ? 1.0 : 1.45; }
  bool supports(BackendKind) const override { return true; }
  std::vector<FormatParams> candidates(const CsrRef&, const MatrixStats& s,
                                       const TargetInfo& t) const override {
    return {FormatParams{{"K", hyb_width(s, t)}}};
  }
  // K is a run-time size (args.n[HYB_N_WIDTH]): the kernel space stays one kernel per type pair.
  FormatParams kernel_constants(const FormatParams&) const override { return {}; }
  std::string make_deterministic(FormatParams&, const TargetInfo& t) const override {
    return t.gpu() ? "its GPU kernel adds the COO tail into y with atomics" : "";
  }

  Estimate estimate(const CsrRef& a, const MatrixStats& s, const FormatParams& p,
                    const TargetInfo& t) const override {
    const int64_t k = std::max<int64_t>(0, p.at("K"));
    const HybTail h = hyb_tail(s, k);
    const int64_t tail = h.entries, tail_rows = h.rows;
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
    if (too_padded(a, k)) e.applicable = false, e.reason = padding_message(a, k);
    return e;
  }

  void to_triplets(const FormatData& d, const CsrRef& shape, std::vector<Triplet>& out) const override {
    const int64_t k = d.ints[HYB_N_WIDTH], rows = d.ints[HYB_N_STRIDE], tail = d.ints[HYB_N_TAIL];
    dispatch_types_complex(shape.index, shape.value, [&]<class I, class V>() {
      const I* col = d.arrays[HYB_ELL_COL].buf.template as<I>();
      const V* val = d.arrays[HYB_ELL_VALUES].buf.template as<V>();
      for (int64_t j = 0; j < k; ++j)
        for (int64_t r = 0; r < rows; ++r)
          if (val[j * rows + r] != V(0))
            out.push_back(make_triplet(r, int64_t(col[j * rows + r]), val[j * rows + r]));
      const I* trow = d.arrays[HYB_TAIL_ROW].buf.template as<I>();
      const I* tcol = d.arrays[HYB_TAIL_COL].buf.template as<I>();
      const V* tval = d.arrays[HYB_TAIL_VALUES].buf.template as<V>();
      for (int64_t i = 0; i < tail; ++i)
        if (tval[i] != V(0)) out.push_back(make_triplet(int64_t(trow[i]), int64_t(tcol[i]), tval[i]));
    });
  }

  FormatData convert(const CsrRef& a, const FormatParams& p, const TargetInfo& t) const override {
    return dispatch_types_complex(a.index, a.value, [&]<class I, class V>() { return build<I, V>(a, p, t); });
  }

  // Tail sizes per window, scanned, each row's first tail entry; then one thread per row for the
  // ELL part and one per tail entry for the tail. Every K.
  bool converts_on_device() const override { return true; }
  std::vector<std::string> device_build_modules() const override { return {"hyb_build"}; }
  FormatData convert_device(DeviceConverter& dc, const FormatParams& p, const TargetInfo& t) const override {
    const CsrRef& a = dc.shape();
    const int64_t k = p.at("K"), rows = a.rows, windows = (rows + HYB_BUILD_WINDOW - 1) / HYB_BUILD_WINDOW;
    check(a, k);
    if (!t.gpu()) fail(SPMV_STATUS_UNSUPPORTED, "hyb: device conversion is for GPU targets");
    HostArray wsum = dc.alloc(windows + 1, sizeof(int64_t)), tail_ptr = dc.alloc(rows + 1, sizeof(int64_t));
    SpmvArgs g = dc.args();
    g.a[HYB_BUILD_ROW_PTR] = a.row_ptr;
    g.a[HYB_BUILD_COL_IDX_IN] = a.col_idx;
    g.a[HYB_BUILD_VALUES_IN] = a.val;
    g.a[HYB_BUILD_TAIL_PTR] = tail_ptr.device.get();
    g.a[HYB_BUILD_WINDOW_SUMS] = wsum.device.get();
    g.n[HYB_BUILD_N_WIDTH] = k;
    g.n[HYB_BUILD_N_WINDOWS] = windows;
    // One thread per window: small blocks, so a few thousand windows still spread over the device.
    if (windows) dc.launch("hyb_build", "spmvjit_build_sizes", windows, g, 32);
    dc.exclusive_scan(wsum.device.get(), windows);
    const int64_t tail = dc.read_i64(static_cast<const int64_t*>(wsum.device.get()) + windows);
    g.n[HYB_BUILD_N_TAIL] = tail;
    dc.launch("hyb_build", "spmvjit_build_offsets", std::max<int64_t>(windows, 1), g, 32);
    FormatData d;
    d.declare(name(), p, contract_arrays(), a.index, a.value);
    const size_t is = size_of(a.index), vs = size_of(a.value);
    d.put(HYB_ELL_COL, dc.alloc(rows * k, is));
    d.put(HYB_ELL_VALUES, dc.alloc(rows * k, vs));
    g.a[HYB_BUILD_OUT_COL] = d.arrays[HYB_ELL_COL].device.get();
    g.a[HYB_BUILD_OUT_VALUES] = d.arrays[HYB_ELL_VALUES].device.get();
    if (rows && k) dc.launch("hyb_build", "spmvjit_build_ell", rows, g);
    d.put(HYB_TAIL_ROW, dc.alloc(tail, is));
    d.put(HYB_TAIL_COL, dc.alloc(tail, is));
    d.put(HYB_TAIL_VALUES, dc.alloc(tail, vs));
    g.a[HYB_BUILD_OUT_ROW] = d.arrays[HYB_TAIL_ROW].device.get();
    g.a[HYB_BUILD_OUT_COL] = d.arrays[HYB_TAIL_COL].device.get();
    g.a[HYB_BUILD_OUT_VALUES] = d.arrays[HYB_TAIL_VALUES].device.get();
    if (tail) dc.launch("hyb_build", "spmvjit_build_tail", tail, g);
    finish(d, rows, k, tail, t);
    return d;
  }

 private:
  // Refuses a negative K, or one that pads more than 3*nnz + rows slots.
  static void check(const CsrRef& a, int64_t k) {
    if (k < 0) fail(SPMV_STATUS_INVALID_VALUE, "hyb: K must be >= 0, got " + std::to_string(k));
    if (too_padded(a, k)) fail(SPMV_STATUS_UNSUPPORTED, padding_message(a, k) + "; refusing");
  }

  template <class I, class V>
  FormatData build(const CsrRef& a, const FormatParams& p, const TargetInfo& t) const {
    const int64_t k = p.at("K"), rows = a.rows;
    check(a, k);
    const I* rp = a.rp<I>();
    const I* ci = a.ci<I>();
    const V* av = a.vals<V>();
    // tail_ptr[r]: first tail entry of row r.
    HostVector<int64_t> tail_ptr(size_t(rows) + 1, 0);
    for (int64_t r = 0; r < rows; ++r)
      tail_ptr[size_t(r) + 1] = tail_ptr[size_t(r)] + std::max<int64_t>(0, int64_t(rp[r + 1] - rp[r]) - k);
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
    finish(d, rows, k, tail, t);
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
    }
    return d;
  }
  // Sizes, bytes and facts; the GPU launches (CPU parts are the host converter's).
  static void finish(FormatData& d, int64_t rows, int64_t k, int64_t tail, const TargetInfo& t) {
    d.stored_entries = rows * k + tail;
    d.matrix_bytes = sum_matrix_bytes(d);
    d.ints[HYB_N_WIDTH] = k;
    d.ints[HYB_N_STRIDE] = rows;
    d.ints[HYB_N_TAIL] = tail;
    d.facts["ell_width"] = k;
    d.facts["tail_entries"] = tail;
    if (t.backend == BackendKind::cpu) return;
    d.steps.push_back({"spmvjit_part", gpu_grid(rows, HYB_GPU_BLOCK), HYB_GPU_BLOCK, 0});
    if (tail) {
      const int64_t chunk = coo_warp_chunk(tail, t);
      d.ints[HYB_N_WARP_ENTRIES] = chunk;
      d.steps.push_back({"spmvjit_tail", gpu_grid((tail + chunk - 1) / chunk, HYB_GPU_BLOCK / t.warp_size),
                         HYB_GPU_BLOCK, 0, true});
    }
  }
};

}  // namespace

SPMVJIT_REGISTER_FORMAT(HybFormat)

}  // namespace spmvjit
