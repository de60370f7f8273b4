// JDS (jagged diagonal storage): rows sorted by decreasing length; jagged diagonal j holds the
// j-th entry of every row longer than j, contiguous in sorted-row order. No padding at all, and
// consecutive sorted rows are consecutive in each diagonal (SIMD / coalesced).
#include <algorithm>
#include <cstring>

#include "engine/formats/device_converter.hpp"
#include "engine/formats/format.hpp"
#include "engine/formats/format_a_util.hpp"
#include "engine/formats/gpu_cost.hpp"
#include "engine/formats/partition.hpp"

namespace spmvjit {
#include "templates/contract/jds.h"

namespace {

class JdsFormat final : public Format {
 public:
  std::string name() const override { return "jds"; }
  bool supports_value(ValueType) const override { return true; }  // real and complex
  std::span<const ArraySlot> contract_arrays() const override { return kJdsArrays; }
  // CPU: measured time per modeled byte relative to csr (docs/PERFORMANCE.md, 2-vCPU Zen 4).
  double efficiency(const MatrixStats&, const TargetInfo& t) const override { return t.gpu() ? 1.0 : 1.8; }
  bool supports(BackendKind) const override { return true; }
  std::vector<FormatParams> candidates(const CsrRef&, const MatrixStats&, const TargetInfo&) const override {
    return {FormatParams{}};
  }
  FormatParams kernel_constants(const FormatParams&) const override { return {}; }

  Estimate estimate(const CsrRef& a, const MatrixStats& s, const FormatParams&,
                    const TargetInfo& t) const override {
    const int64_t is = int64_t(size_of(a.index)), vs = int64_t(size_of(a.value));
    Estimate e;
    e.stored_entries = a.nnz;
    e.matrix_bytes = a.nnz * (is + vs) + 8 * (s.row_max + 1) + is * a.rows;
    // y is written through perm (scattered when sorting moved rows); each diagonal costs
    // loop control per row block.
    e.cost_bytes = double(e.matrix_bytes) + 12.0 * double(a.rows) + 16.0 * double(s.row_max);
    e.imbalance = std::max(row_split_imbalance(s, t), gpu_row_starvation(a.rows, t));
    e.reason = std::to_string(s.row_max) + " jagged diagonals";
    return e;
  }

  void to_triplets(const FormatData& d, const CsrRef& shape, std::vector<Triplet>& out) const override {
    const int64_t w = d.ints[JDS_N_DIAGONALS];
    const int64_t* jd = d.arrays[JDS_JD_PTR].buf.as<int64_t>();
    dispatch_types_complex(shape.index, shape.value, [&]<class I, class V>() {
      const I* col = d.arrays[JDS_COL_IDX].buf.template as<I>();
      const V* val = d.arrays[JDS_VALUES].buf.template as<V>();
      const I* perm = d.arrays[JDS_PERM].buf.template as<I>();
      for (int64_t j = 0; j < w; ++j)
        for (int64_t i = 0; i < jd[j + 1] - jd[j]; ++i)
          if (val[jd[j] + i] != V(0))
            out.push_back(make_triplet(int64_t(perm[i]), int64_t(col[jd[j] + i]), val[jd[j] + i]));
    });
  }

  FormatData convert(const CsrRef& a, const FormatParams& p, const TargetInfo& t) const override {
    return dispatch_types_complex(a.index, a.value, [&]<class I, class V>() { return build<I, V>(a, p, t); });
  }

  // The host's stable counting sort by decreasing length, in passes of templates/gpu/jds_build.cu
  // around three scans (lengths present, per-window ranks, diagonal sizes).
  bool converts_on_device() const override { return true; }
  std::vector<std::string> device_build_modules() const override { return {"jds_build"}; }
  FormatData convert_device(DeviceConverter& dc, const FormatParams& p, const TargetInfo& t) const override {
    const CsrRef& a = dc.shape();
    if (!t.gpu()) fail(SPMV_STATUS_UNSUPPORTED, "jds: device conversion is for GPU targets");
    const int64_t rows = a.rows;
    SpmvArgs g = dc.args();
    g.a[JDS_BUILD_ROW_PTR] = a.row_ptr;
    g.a[JDS_BUILD_COL_IDX_IN] = a.col_idx;
    g.a[JDS_BUILD_VALUES_IN] = a.val;
    auto zero = [&](HostArray& h) {
      g.a[JDS_BUILD_ZERO] = h.device.get();
      g.n[JDS_BUILD_N_ZERO] = h.count;
      dc.launch("jds_build", "spmvjit_build_zero", h.count, g);
    };
    auto at = [](HostArray& h, int64_t i) { return static_cast<const int64_t*>(h.device.get()) + i; };
    HostArray width = dc.alloc(1, sizeof(int64_t));
    zero(width);
    if (rows) dc.launch("jds_build", "spmvjit_build_width", rows, g);
    const int64_t w = dc.read_i64(at(width, 0));
    g.n[JDS_BUILD_N_WIDTH] = w;
    HostArray keys = dc.alloc(w + 2, sizeof(int64_t));
    zero(keys);
    g.a[JDS_BUILD_KEYS] = keys.device.get();
    if (rows) dc.launch("jds_build", "spmvjit_build_keys", rows, g);
    dc.exclusive_scan(keys.device.get(), w + 1);
    const int64_t nkeys = dc.read_i64(at(keys, w + 1));
    // Windows of at least as many rows as keys: the ranks stay within rows + keys entries.
    const int64_t window = std::max<int64_t>(JDS_BUILD_WINDOW, nkeys), windows = (rows + window - 1) / window;
    HostArray ranks = dc.alloc(windows * nkeys + 1, sizeof(int64_t));
    g.a[JDS_BUILD_RANKS] = ranks.device.get();
    g.n[JDS_BUILD_N_KEYS] = nkeys;
    g.n[JDS_BUILD_N_WINDOW] = window;
    g.n[JDS_BUILD_N_WINDOWS] = windows;
    // One thread per window: small blocks, so a few thousand windows still spread over the device.
    if (windows) dc.launch("jds_build", "spmvjit_build_rank_counts", windows, g, 32);
    dc.exclusive_scan(ranks.device.get(), windows * nkeys);
    FormatData d;
    d.declare(name(), p, contract_arrays(), a.index, a.value);
    d.put(JDS_JD_PTR, dc.alloc(w + 1, sizeof(int64_t)));
    d.put(JDS_PERM, dc.alloc(rows, size_of(a.index)));
    g.a[JDS_BUILD_JD_PTR] = d.arrays[JDS_JD_PTR].device.get();
    g.a[JDS_BUILD_PERM] = d.arrays[JDS_PERM].device.get();
    if (w) dc.launch("jds_build", "spmvjit_build_diagonals", w, g);
    dc.exclusive_scan(d.arrays[JDS_JD_PTR].device.get(), w);
    if (windows) dc.launch("jds_build", "spmvjit_build_perm", windows, g, 32);
    d.put(JDS_COL_IDX, dc.alloc(a.nnz, size_of(a.index)));
    d.put(JDS_VALUES, dc.alloc(a.nnz, size_of(a.value)));
    g.a[JDS_BUILD_COL_IDX] = d.arrays[JDS_COL_IDX].device.get();
    g.a[JDS_BUILD_VALUES] = d.arrays[JDS_VALUES].device.get();
    g.n[JDS_BUILD_N_NNZ] = a.nnz;
    if (a.nnz) dc.launch("jds_build", "spmvjit_build_fill", a.nnz, g);
    finish(d, a, w, t);
    return d;
  }

 private:
  template <class I, class V>
  FormatData build(const CsrRef& a, const FormatParams& p, const TargetInfo& t) const {
    const I* rp = a.rp<I>();
    const I* ci = a.ci<I>();
    const V* av = a.vals<V>();
    const int64_t rows = a.rows;
    int64_t w = 0;
    for (int64_t r = 0; r < rows; ++r) w = std::max<int64_t>(w, rp[r + 1] - rp[r]);
    // Stable counting sort by decreasing length: first[len] = sorted position of the first
    // row of that length = number of rows longer than len.
    std::vector<int64_t> first(size_t(w) + 2, 0);
    for (int64_t r = 0; r < rows; ++r) ++first[size_t(rp[r + 1] - rp[r])];
    FormatData d;
    d.declare(name(), p, contract_arrays(), a.index, a.value);
    int64_t* jd = d.make<int64_t>(JDS_JD_PTR, w + 1);
    {
      int64_t longer = 0;  // rows with length > len, for len from w down to 0
      for (int64_t len = w; len >= 0; --len) {
        const int64_t c = first[size_t(len)];
        first[size_t(len)] = longer;
        longer += c;
      }
      // Diagonal j holds one entry of each row longer than j.
      jd[0] = 0;
      for (int64_t j = 0; j < w; ++j) jd[j + 1] = jd[j] + first[size_t(j)];
    }
    I* pm = d.make<I>(JDS_PERM, rows);
    for (int64_t r = 0; r < rows; ++r) pm[first[size_t(rp[r + 1] - rp[r])]++] = I(r);
    I* cd = d.make<I>(JDS_COL_IDX, a.nnz);
    V* vd = d.make<V>(JDS_VALUES, a.nnz);
    for (int64_t i = 0; i < rows; ++i) {
      const int64_t r = pm[i], b = rp[r], len = rp[r + 1] - b;
      for (int64_t j = 0; j < len; ++j) {
        cd[jd[j] + i] = ci[b + j];
        vd[jd[j] + i] = av[b + j];
      }
    }
    finish(d, a, w, t);
    if (t.backend == BackendKind::cpu) {
      // Parts are ranges of sorted rows weighted by nonzeros + 1.
      HostVector<int64_t> cum(size_t(rows) + 1, 0);
      for (int64_t i = 0; i < rows; ++i) cum[size_t(i) + 1] = cum[size_t(i)] + rp[pm[i] + 1] - rp[pm[i]] + 1;
      set_cpu_parts(d, JDS_PARTS, split_prefix(rows, t.threads, [&](int64_t u) { return cum[size_t(u)]; }));
    }
    return d;
  }
  // Sizes, bytes and facts; the GPU launch (CPU parts are the host converter's).
  static void finish(FormatData& d, const CsrRef& a, int64_t w, const TargetInfo& t) {
    d.stored_entries = a.nnz;
    d.matrix_bytes = sum_matrix_bytes(d);
    d.ints[JDS_N_DIAGONALS] = w;
    d.facts["diagonals"] = w;
    if (t.backend != BackendKind::cpu)
      d.steps.push_back({"spmvjit_part", gpu_grid(a.rows, JDS_GPU_BLOCK), JDS_GPU_BLOCK, 0});
  }
};

}  // namespace

SPMVJIT_REGISTER_FORMAT(JdsFormat)

}  // namespace spmvjit
