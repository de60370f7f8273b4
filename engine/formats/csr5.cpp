// CSR5 (Liu & Vinter, ICS 2015): the nonzeros cut into tiles of omega x sigma (omega lanes,
// sigma entries per lane, stored transposed so each of the sigma steps loads omega contiguous
// lanes), tile_ptr (first row of each tile, negative = ~row when the tile spans empty rows),
// tile_desc (per lane: bit_flag of row starts, y_offset = segments begun in earlier lanes,
// seg_offset = following lanes without a row start) and empty_offset (segment -> row for tiles
// with empty rows). Tiles compute a segmented sum; the first row of every tile and a row left
// open at its end are carried (per-tile head/tail sums in scratch) and finished by a separate
// fixup launch, which also writes empty rows. The last nnz % (omega*sigma) entries are CSR.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "engine/formats/device_converter.hpp"
#include "engine/formats/format.hpp"
#include "engine/formats/gpu_cost.hpp"
#include "engine/formats/slice_util.hpp"

namespace spmvjit {
#include "templates/contract/csr5.h"

namespace {

using namespace slice_util;

// sigma from nonzeros per row, the paper's rule: 4 for short rows, nnz/row up to 32, then 32
// (CSR5_MAX_SIGMA, the bit_flag width). We round it up to a multiple of 4 so a target has at most
// 8 sigma kernels.
int64_t choose_sigma(int64_t nnz, int64_t rows) {
  const int64_t per_row = rows ? nnz / rows : 0;
  const int64_t s = std::clamp<int64_t>(per_row, 4, CSR5_MAX_SIGMA);
  return ceil_div(s, 4) * 4;
}

// SIMD lanes of V on the CPU; a GPU tile is one warp.
int64_t omega_of(const TargetInfo& t, size_t value_bytes) {
  return t.gpu() ? t.warp_size : std::min<int64_t>(CSR5_MAX_OMEGA, lanes(t, value_bytes));
}

inline int64_t decode_row(int64_t v) { return v < 0 ? ~v : v; }

// Why a GPU tile of `omega` lanes cannot be built: "" when it can. A tile is one warp, and the
// tile descriptors and the device build (templates/contract/csr5.h, CSR5_MAX_OMEGA) hold at most
// 32 lanes, so wavefronts of 64 (AMD CDNA) are out until the contract grows to 64.
std::string wave_limit(int64_t omega) {
  if (omega <= CSR5_MAX_OMEGA) return "";
  return "inapplicable on wavefront " + std::to_string(omega) +
         ": a GPU tile is one wavefront, and CSR5's tile descriptors and device build hold at most " +
         std::to_string(CSR5_MAX_OMEGA) + " lanes";
}

// Expected entries of empty_offset: a tile lists every segment's row when empty rows lie between
// its segments, i.e. when one of the row starts inside it follows an empty row. The chance of that
// per row start is counted on the row sample (consecutive non-empty rows of a sampled group with
// empty rows between them), so empty rows in clusters count as few gaps; rows taken as
// independent when the sample has no such pair.
double empty_offset_entries(const MatrixStats& s, int64_t tile, int64_t ntiles) {
  const int64_t nonempty = s.rows - s.empty_rows;
  if (ntiles == 0 || s.empty_rows == 0 || nonempty == 0) return 0;
  double gap = double(s.empty_rows) / double(s.rows);
  if (s.sample) {
    const RowSample& sm = *s.sample;
    int64_t pairs = 0, gaps = 0;
    for (int64_t g0 = 0; g0 < sm.rows; g0 += RowSample::kGroupRows) {
      bool seen = false, empty_since = false;
      for (int64_t r = g0; r < std::min(sm.rows, g0 + RowSample::kGroupRows); ++r) {
        if (sm.row_ptr[size_t(r + 1)] == sm.row_ptr[size_t(r)]) {
          empty_since = true;
          continue;
        }
        if (seen) ++pairs, gaps += empty_since;
        seen = true, empty_since = false;
      }
    }
    if (pairs) gap = double(gaps) / double(pairs);
  }
  const double starts = double(tile - 1) * double(nonempty) / double(s.nnz);  // row starts inside a tile
  return double(ntiles) * (1.0 - std::pow(1.0 - gap, starts)) * (1.0 + starts);
}

class Csr5Format final : public Format {
 public:
  std::string name() const override { return "csr5"; }
  bool supports_value(ValueType) const override { return true; }  // real and complex
  std::span<const ArraySlot> contract_arrays() const override { return kCsr5Arrays; }
  // CPU: measured time per modeled byte relative to csr (docs/PERFORMANCE.md, 2-vCPU Zen 4).
  double efficiency(const MatrixStats&, const TargetInfo& t) const override { return t.gpu() ? 1.0 : 1.9; }
  bool supports(BackendKind) const override { return true; }

  std::vector<FormatParams> candidates(const CsrRef& a, const MatrixStats&,
                                       const TargetInfo& t) const override {
    return {{{"omega", omega_of(t, size_of(a.value))}, {"sigma", choose_sigma(a.nnz, a.rows)}}};
  }

  Estimate estimate(const CsrRef& a, const MatrixStats& s, const FormatParams& p,
                    const TargetInfo& t) const override {
    const int64_t tile = p.at("omega") * p.at("sigma");
    const int64_t is = int64_t(size_of(a.index)), vs = int64_t(size_of(a.value));
    const int64_t ntiles = tile ? a.nnz / tile : 0;
    Estimate e;
    e.stored_entries = a.nnz;
    if (t.gpu() && !wave_limit(p.at("omega")).empty()) {
      e.applicable = false;
      e.reason = wave_limit(p.at("omega"));
      return e;
    }
    // col/val, tile_ptr + eo_ptr, one descriptor word per lane; aux: empty_offset, empty rows and
    // the CSR tail's row pointers.
    const double eo = empty_offset_entries(s, tile, ntiles);
    e.matrix_bytes = a.nnz * (is + vs) + 16 * (ntiles + 1) + 8 * ntiles * p.at("omega") +
                     is * (int64_t(eo) + s.empty_rows + std::min<int64_t>(a.rows, tile) + 1);
    // Per row a segment flush; per tile the carries and their fixup. Tiles split evenly, so
    // the work is balanced whatever the row lengths (imbalance 1).
    e.cost_bytes = double(e.matrix_bytes) + 4.0 * double(a.rows) + 4.0 * double(vs) * double(ntiles) +
                   (t.backend == BackendKind::cpu ? 2000.0 * t.threads : 0.0);
    // GPU: the segment flush per row costs about 32 bytes' time (measured on an H100: short-8M,
    // 8M rows of 0..2 nonzeros, 0.372 ms vs 0.277 ms for csr_adaptive; equal on long rows).
    if (t.backend != BackendKind::cpu) e.cost_bytes += 28.0 * double(a.rows);
    e.reason = std::to_string(ntiles) + " tiles of " + std::to_string(tile) + " nonzeros";
    return e;
  }

  FormatParams kernel_constants(const FormatParams& p) const override {
    return {{"OMEGA", p.at("omega")}, {"SIGMA", p.at("sigma")}};
  }

  std::vector<FormatParams> kernel_variants(const TargetInfo& t, ValueType v) const override {
    std::vector<FormatParams> out;
    if (t.gpu() && !wave_limit(omega_of(t, size_of(v))).empty()) return out;  // no plan bakes one
    for (int64_t s = 4; s <= CSR5_MAX_SIGMA; s += 4)
      out.push_back({{"OMEGA", omega_of(t, size_of(v))}, {"SIGMA", s}});
    return out;
  }

  void to_triplets(const FormatData& d, const CsrRef& shape, std::vector<Triplet>& out) const override {
    const int64_t w = d.params.at("omega"), sg = d.params.at("sigma"), ntiles = d.ints[CSR5_N_TILES];
    const int64_t tail_start = d.ints[CSR5_N_TAIL_START], r_tail = d.ints[CSR5_N_TAIL_ROW];
    const int64_t n_eo = d.ints[CSR5_N_EMPTY_OFFSETS], n_empty = d.ints[CSR5_N_EMPTY_ROWS];
    const int64_t n_tail_rows = d.ints[CSR5_N_TAIL_ROWS];
    const int64_t* tp = d.arrays[CSR5_TILE_PTR].buf.as<int64_t>();
    const uint64_t* desc = d.arrays[CSR5_TILE_DESC].buf.as<uint64_t>();
    const int64_t* eo_ptr = d.arrays[CSR5_EO_PTR].buf.as<int64_t>();
    dispatch_types_complex(shape.index, shape.value, [&]<class I, class V>() {
      const I* col = d.arrays[CSR5_COL_IDX].buf.template as<I>();
      const V* val = d.arrays[CSR5_VALUES].buf.template as<V>();
      const I* aux = d.arrays[CSR5_AUX].buf.template as<I>();
      for (int64_t t = 0; t < ntiles; ++t) {
        const int64_t r0 = decode_row(tp[t]);
        int64_t q = -1;
        for (int64_t l = 0; l < w; ++l)
          for (int64_t k = 0; k < sg; ++k) {
            if ((desc[t * w + l] >> k) & 1) ++q;
            const int64_t at = t * w * sg + k * w + l;
            const int64_t row = tp[t] < 0 ? int64_t(aux[eo_ptr[t] + q]) : r0 + q;
            if (val[at] != V(0)) out.push_back(make_triplet(row, int64_t(col[at]), val[at]));
          }
      }
      const I* trp = aux + n_eo + n_empty;
      for (int64_t i = 0; i < n_tail_rows; ++i)
        for (int64_t k = (i ? int64_t(trp[i]) : tail_start); k < int64_t(trp[i + 1]); ++k)
          if (val[k] != V(0)) out.push_back(make_triplet(r_tail + i, int64_t(col[k]), val[k]));
    });
  }

  FormatData convert(const CsrRef& a, const FormatParams& p, const TargetInfo& t) const override {
    return dispatch_types_complex(a.index, a.value, [&]<class I, class V>() { return build<I, V>(a, p, t); });
  }

  // Every (omega, sigma) the host converter takes, so host and device input pick the same plan;
  // and a wavefront of 64 lanes, which both refuse (the estimate says why, for device input too).
  bool converts_on_device() const override { return true; }
  bool device_convertible(const FormatParams& p) const override {
    return p.at("omega") >= 1 && p.at("omega") <= 64 && p.at("sigma") >= 1 && p.at("sigma") <= CSR5_MAX_SIGMA;
  }
  std::vector<std::string> device_build_modules() const override { return {"csr5_build"}; }
  // Passes (templates/gpu/csr5_build.cu): the transposed entries; per tile its first row,
  // descriptors and empty_offset count; per window of rows its empty rows; scans of both counts;
  // then aux at the scanned offsets.
  FormatData convert_device(DeviceConverter& dc, const FormatParams& p, const TargetInfo& tg) const override {
    check_params(p, tg);
    const CsrRef& a = dc.shape();
    const int64_t w = p.at("omega"), S = w * p.at("sigma"), ntiles = a.nnz / S;
    const int64_t windows = ceil_div(a.rows, CSR5_BUILD_WINDOW);
    const size_t is = size_of(a.index), vs = size_of(a.value);
    FormatData d;
    d.declare(name(), p, contract_arrays(), a.index, a.value);
    d.put(CSR5_TILE_PTR, dc.alloc(ntiles + 1, sizeof(int64_t)));
    d.put(CSR5_TILE_DESC, dc.alloc(ntiles * w, sizeof(uint64_t)));
    d.put(CSR5_COL_IDX, dc.alloc(a.nnz, is));
    d.put(CSR5_VALUES, dc.alloc(a.nnz, vs));
    d.put(CSR5_EO_PTR, dc.alloc(ntiles + 1, sizeof(int64_t)));
    HostArray wempty = dc.alloc(windows + 1, sizeof(int64_t));
    auto dev = [&](int slot) { return d.arrays[size_t(slot)].device.get(); };
    SpmvArgs g = dc.args();
    g.n[CSR5_BUILD_N_OMEGA] = w;
    g.n[CSR5_BUILD_N_SIGMA] = p.at("sigma");
    g.n[CSR5_BUILD_N_TILES] = ntiles;
    g.n[CSR5_BUILD_N_NNZ] = a.nnz;
    SpmvArgs ge = g;  // spmvjit_build_entries: its own a[] slots
    ge.a[CSR5_BUILD_COL_IDX_IN] = a.col_idx;
    ge.a[CSR5_BUILD_VALUES_IN] = a.val;
    ge.a[CSR5_BUILD_COL_IDX] = dev(CSR5_COL_IDX);
    ge.a[CSR5_BUILD_VALUES] = dev(CSR5_VALUES);
    if (a.nnz) dc.launch("csr5_build", "spmvjit_build_entries", a.nnz, ge);
    g.a[CSR5_BUILD_ROW_PTR] = a.row_ptr;
    g.a[CSR5_BUILD_TILE_PTR] = dev(CSR5_TILE_PTR);
    g.a[CSR5_BUILD_TILE_DESC] = dev(CSR5_TILE_DESC);
    g.a[CSR5_BUILD_EO_PTR] = dev(CSR5_EO_PTR);
    g.a[CSR5_BUILD_WINDOW_EMPTY] = wempty.device.get();
    // One thread per tile or window: small blocks, so a few thousand still spread over the device.
    dc.launch("csr5_build", "spmvjit_build_tiles", ntiles + 1, g, 64);
    if (windows) dc.launch("csr5_build", "spmvjit_build_empty_count", windows, g, 32);
    dc.exclusive_scan(dev(CSR5_EO_PTR), ntiles);
    dc.exclusive_scan(wempty.device.get(), windows);
    const int64_t n_eo = dc.read_i64(static_cast<const int64_t*>(dev(CSR5_EO_PTR)) + ntiles);
    const int64_t n_empty = dc.read_i64(static_cast<const int64_t*>(wempty.device.get()) + windows);
    const int64_t r_tail = dc.read_i64(static_cast<const int64_t*>(dev(CSR5_TILE_PTR)) + ntiles);
    const int64_t aux = n_eo + n_empty + aux_tail(a.rows, r_tail);
    d.put(CSR5_AUX, dc.alloc(aux, is));
    g.a[CSR5_BUILD_AUX] = dev(CSR5_AUX);
    g.n[CSR5_BUILD_N_EMPTY_OFFSETS] = n_eo;
    g.n[CSR5_BUILD_N_EMPTY_ROWS] = n_empty;
    if (aux) dc.launch("csr5_build", "spmvjit_build_aux", ntiles + windows + aux_tail(a.rows, r_tail), g, 64);
    finish(d, a, ntiles, r_tail, n_eo, n_empty, tg);
    return d;
  }

 private:
  static void check_params(const FormatParams& p, const TargetInfo& tg) {
    const int64_t w = p.at("omega"), sg = p.at("sigma");
    if (tg.gpu() && w == tg.warp_size && !wave_limit(w).empty())
      fail(SPMV_STATUS_UNSUPPORTED, "csr5: " + wave_limit(w));
    if (w < 1 || w > CSR5_MAX_OMEGA || sg < 1 || sg > CSR5_MAX_SIGMA)
      fail(SPMV_STATUS_INVALID_VALUE, "csr5: omega must lie in [1, " + std::to_string(CSR5_MAX_OMEGA) +
                                          "] and sigma in [1, " + std::to_string(CSR5_MAX_SIGMA) +
                                          "] (bit_flag has a bit per entry of a lane)");
    if (tg.gpu() && w != tg.warp_size)
      fail(SPMV_STATUS_INVALID_VALUE,
           "csr5: omega must be the warp size (" + std::to_string(tg.warp_size) + ") on a GPU");
  }
  // Entries of the tail's row_ptr at the end of aux (none without tail rows).
  static int64_t aux_tail(int64_t rows, int64_t r_tail) { return rows > r_tail ? rows - r_tail + 1 : 0; }

  template <class I, class V>
  FormatData build(const CsrRef& a, const FormatParams& p, const TargetInfo& tg) const {
    check_params(p, tg);
    const int64_t w = p.at("omega"), sg = p.at("sigma"), S = w * sg;
    const I* rp = a.rp<I>();
    const I* ci = a.ci<I>();
    const V* av = a.vals<V>();
    const int64_t ntiles = a.nnz / S, tail_start = ntiles * S;
    FormatData d;
    d.declare(name(), p, contract_arrays(), a.index, a.value);
    int64_t* tile_ptr = d.make<int64_t>(CSR5_TILE_PTR, ntiles + 1);
    uint64_t* desc = d.make<uint64_t>(CSR5_TILE_DESC, ntiles * w);
    I* col = d.make<I>(CSR5_COL_IDX, a.nnz);
    V* val = d.make<V>(CSR5_VALUES, a.nnz);
    int64_t* eo_ptr = d.make<int64_t>(CSR5_EO_PTR, ntiles + 1);
    std::vector<I> eo;  // empty_offset: segment -> row, for tiles with empty rows
    std::vector<uint32_t> flags(static_cast<size_t>(w));
    // row_of(p): the non-empty row holding entry p (rows when p == nnz); p only grows.
    int64_t r = 0;
    auto row_of = [&](int64_t pos) {
      if (pos >= a.nnz) return a.rows;
      while (int64_t(rp[r + 1]) <= pos) ++r;
      return r;
    };
    for (int64_t t = 0; t < ntiles; ++t) {
      const int64_t base = t * S, r0 = row_of(base);
      std::fill(flags.begin(), flags.end(), 0u);
      flags[0] = 1;  // the first entry of a tile always opens segment 0 (row r0)
      int64_t nseg = 1, rr = r0 + 1;
      for (; rr < a.rows && int64_t(rp[rr]) < base + S; ++rr)
        if (rp[rr + 1] > rp[rr]) {
          const int64_t e = int64_t(rp[rr]) - base;
          flags[size_t(e / sg)] |= 1u << (e % sg);
          ++nseg;
        }
      const int64_t rlast = row_of(base + S - 1);
      eo_ptr[t] = int64_t(eo.size());
      tile_ptr[t] = r0;
      if (rlast - r0 + 1 != nseg) {  // empty rows between segments: map segments explicitly
        tile_ptr[t] = ~r0;
        eo.push_back(I(r0));
        for (int64_t q = r0 + 1; q <= rlast; ++q)
          if (rp[q + 1] > rp[q]) eo.push_back(I(q));
      }
      int64_t before = 0;
      for (int64_t l = 0; l < w; ++l) {
        int64_t quiet = 0;  // seg_offset: following lanes with no row start
        while (l + 1 + quiet < w && flags[size_t(l + 1 + quiet)] == 0) ++quiet;
        desc[t * w + l] = uint64_t(flags[size_t(l)]) | (uint64_t(before) << CSR5_Y_OFFSET_SHIFT) |
                          (uint64_t(quiet) << CSR5_SEG_OFFSET_SHIFT);
        before += __builtin_popcount(flags[size_t(l)]);
      }
      // Transpose: entry (lane l, step k) of the tile goes to base + k*omega + l.
      I* cdst = col + base;
      V* vdst = val + base;
      for (int64_t l = 0; l < w; ++l)
        for (int64_t k = 0; k < sg; ++k) {
          cdst[k * w + l] = ci[base + l * sg + k];
          vdst[k * w + l] = av[base + l * sg + k];
        }
    }
    const int64_t r_tail = row_of(tail_start);
    tile_ptr[ntiles] = r_tail;
    eo_ptr[ntiles] = int64_t(eo.size());
    if (a.nnz > tail_start) {
      std::memcpy(col + tail_start, ci + tail_start, size_t(a.nnz - tail_start) * sizeof(I));
      std::memcpy(val + tail_start, av + tail_start, size_t(a.nnz - tail_start) * sizeof(V));
    }
    // aux = [empty_offset][empty rows before the CSR tail][row_ptr of the tail rows]
    const int64_t n_eo = int64_t(eo.size());
    std::vector<I> empty;
    for (int64_t q = 0; q < r_tail; ++q)
      if (rp[q + 1] == rp[q]) empty.push_back(I(q));
    const int64_t n_empty = int64_t(empty.size());
    I* ax = d.make<I>(CSR5_AUX, n_eo + n_empty + aux_tail(a.rows, r_tail));
    if (n_eo) std::memcpy(ax, eo.data(), size_t(n_eo) * sizeof(I));
    if (n_empty) std::memcpy(ax + n_eo, empty.data(), size_t(n_empty) * sizeof(I));
    if (a.rows > r_tail)
      std::memcpy(ax + n_eo + n_empty, rp + r_tail, size_t(a.rows - r_tail + 1) * sizeof(I));
    finish(d, a, ntiles, r_tail, n_eo, n_empty, tg);
    return d;
  }

  // Sizes, bytes, facts and launch steps, the same from either converter.
  static void finish(FormatData& d, const CsrRef& a, int64_t ntiles, int64_t r_tail, int64_t n_eo,
                     int64_t n_empty, const TargetInfo& tg) {
    const int64_t w = d.params.at("omega"), S = w * d.params.at("sigma"), tail_start = ntiles * S;
    const size_t vs = size_of(a.value);
    d.stored_entries = a.nnz;
    d.matrix_bytes = sum_matrix_bytes(d);
    const int64_t parts = tg.backend == BackendKind::cpu ? std::max(1, tg.threads) : 1;
    d.ints[CSR5_N_TILES] = ntiles;
    d.ints[CSR5_N_PARTS] = parts;
    d.ints[CSR5_N_TAIL_START] = tail_start;
    d.ints[CSR5_N_TAIL_ROW] = r_tail;
    d.ints[CSR5_N_EMPTY_OFFSETS] = n_eo;
    d.ints[CSR5_N_EMPTY_ROWS] = n_empty;
    d.ints[CSR5_N_TAIL_ROWS] = a.rows - r_tail;
    d.scratch_bytes = int64_t(2 * size_t(ntiles + 1) * vs);  // head[] and tail[] carries per tile
    d.facts = Json::object({{"tiles", ntiles},
                            {"tile_nnz", S},
                            {"csr_tail_nnz", a.nnz - tail_start},
                            {"empty_offset", n_eo},
                            {"empty_rows", n_empty}});
    if (tg.backend == BackendKind::cpu) {
      // Tiles hold equal nonzeros: an even split of tiles is a balanced split of the work.
      d.steps.push_back({"spmvjit_part", parts, 1, 0});
      d.steps.push_back({"spmvjit_fixup", parts, 1, 0});
    } else {
      // A warp (w threads) per tile and one for the CSR tail; a fixup thread per tile and empty row.
      d.steps.push_back({"spmvjit_part", ceil_div((ntiles + 1) * w, CSR5_GPU_BLOCK), CSR5_GPU_BLOCK, 0});
      d.steps.push_back({"spmvjit_fixup", ceil_div(ntiles + 1 + n_empty, CSR5_GPU_FIXUP_BLOCK),
                         CSR5_GPU_FIXUP_BLOCK, 0, true});
    }
  }
};

}  // namespace

SPMVJIT_REGISTER_FORMAT(Csr5Format)

}  // namespace spmvjit
