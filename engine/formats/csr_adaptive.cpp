// CSR-adaptive (GPU-first): the CSR arrays plus plan-time row blocks (consecutive rows holding at
// most ADAPTIVE_S nonzeros and ADAPTIVE_GPU_ROWS rows; one GPU block each, streaming its nonzeros
// with coalesced 16-byte loads whatever the row lengths; templates/contract/csr_adaptive.h) and
// chunks of ADAPTIVE_S nonzeros for rows longer than that (one GPU block each, summed into y with
// atomics after the row-block step applied beta). Rows are binned by length per row block, not
// sorted into per-length lists: lists would read 4 bytes more per row and split the 32-byte
// sectors at every bin change.
// Index compression (COL_BITS 16, CSR-DU style): where every row block's and chunk's columns lie
// within 65,536 of each other (banded, FEM, mesh and block-diagonal matrices in a good order),
// col_idx becomes 16-bit offsets from a base column per segment: 2 bytes per entry instead of 4
// (int32) or 8 (int64). The sample decides whether to offer it; the conversion checks every
// segment and refuses (the planner's next candidate) when one does not fit.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <limits>

#include "core/parallel.hpp"
#include "engine/formats/device_converter.hpp"
#include "engine/formats/format.hpp"
#include "engine/formats/format_a_util.hpp"
#include "engine/sample.hpp"

namespace spmvjit {
#include "templates/contract/csr_adaptive.h"

namespace {

struct Layout {
  std::vector<int64_t> blocks;  // row-block starts, then rows
  std::vector<int64_t> chunk_row, chunk_start;
  int64_t long_rows = 0;
};

int64_t max_block_rows(const TargetInfo& t) { return t.gpu() ? ADAPTIVE_GPU_ROWS : ADAPTIVE_CPU_ROWS; }

// One pass over row_ptr, window by window (the greedy rule of the contract header).
Layout make_layout(const CsrRef& a, const TargetInfo& t) {
  Layout l;
  for (int64_t w = 0; w < a.rows; w += ADAPTIVE_WINDOW)
    adaptive_window(
        w, std::min<int64_t>(a.rows, w + ADAPTIVE_WINDOW), max_block_rows(t),
        [&](int64_t r) { return a.row_len(r); }, [&](int64_t r) { l.blocks.push_back(r); },
        [&](int64_t r, int64_t len) {
          ++l.long_rows;
          for (int64_t k = a.row_begin(r), e = k + len; k < e; k += ADAPTIVE_S)
            l.chunk_row.push_back(r), l.chunk_start.push_back(k);
        });
  l.blocks.push_back(a.rows);
  return l;
}

// The layout's counts in closed form from the row-length histogram (bin k holds lengths in
// [2^(k-1), 2^k); a bin's rows are taken at 3/4 of its upper bound), O(1) whatever the matrix:
// the estimate's byte and overhead terms only need them to a few percent.
constexpr double kS = ADAPTIVE_S;

struct Shape {
  double blocks = 0, long_rows = 0, chunks = 0;
};
Shape layout_shape(const MatrixStats& s, const TargetInfo& t) {
  Shape sh;
  double long_nnz = 0;
  const int first_long = ceil_log2(ADAPTIVE_S + 1) + 1;  // bins of rows longer than S
  for (size_t k = size_t(first_long); k < s.row_hist.size(); ++k) {
    const double len = 0.75 * std::ldexp(1.0, int(k)), n = double(s.row_hist[k]);
    sh.long_rows += n;
    sh.chunks += n * std::ceil(len / kS);
    long_nnz += n * len;
  }
  long_nnz = std::min(long_nnz, double(s.nnz));
  // Short rows fill blocks up to the row or the nonzero limit (the greedy closes a block early
  // when the next row does not fit: about 85% full on nonzeros); a long row cuts a block in two
  // and takes one of its own; every window restarts.
  const double rows = double(s.rows) - sh.long_rows, nnz = double(s.nnz) - long_nnz;
  sh.blocks = std::ceil(std::max(rows / double(max_block_rows(t)), nnz / (0.85 * kS))) + 2 * sh.long_rows +
              std::ceil(double(s.rows) / double(ADAPTIVE_WINDOW));
  if (s.rows == 0) sh.blocks = 0;
  return sh;
}

int64_t padded_nnz(int64_t nnz) { return (nnz + ADAPTIVE_PAD - 1) / ADAPTIVE_PAD * ADAPTIVE_PAD; }

bool col16(const FormatParams& p) { return col_bits16(p); }

// Cost of 16-bit columns per entry on a GPU, in byte-equivalents, beyond the bytes they save
// (hand-set, not fitted): once values are compressed too, the x gathers bound the kernel and
// fewer column bytes stop paying. H100, varband-300K with unit values: csr_adaptive with 16-bit
// columns (about 2.1 bytes per entry) ran 0.0545 ms where sell_block's 4-wide blocks with
// one-byte codes (about 2.2) ran 0.0423; with random values the 16-bit columns were worth
// their bytes in full (bcsstk13 x191: 0.0887 ms -> 0.0714).
constexpr double kCol16Bytes = 1.0;

// Margin for row blocks longer than a sample group: a real row block may hold up to
// ADAPTIVE_GPU_ROWS rows where the sample's groups hold RowSample::kGroupRows, and its columns
// drift with its rows in a banded matrix.
constexpr int64_t kSpanMargin = 2 * ADAPTIVE_GPU_ROWS;

// True when the sample's row blocks (the greedy rule inside each sampled group) and long-row
// chunks all span at most ADAPTIVE_C16_MAX_SPAN - kSpanMargin columns: then 16-bit offsets are
// worth a conversion (which still checks every segment). O(sampled entries).
bool sample_fits_col16(const MatrixStats& s, const TargetInfo& t) {
  if (!s.sample) return false;
  const RowSample& r = *s.sample;
  if (r.rows == 0) return true;
  const int64_t limit = ADAPTIVE_C16_MAX_SPAN - kSpanMargin;
  if (limit <= 0) return false;
  // Entries [k0, k1) of rows [i0, i1): with every sampled row in column order (the usual CSR)
  // each row's span is its first and last entry, O(rows) instead of O(entries) (dense:2000's
  // 128,000 sampled entries took 0.1 ms of the choice on the 2-vCPU VM).
  const int64_t* ci = r.col_idx.data();
  const int64_t* rp = r.row_ptr.data();
  auto span_ok = [&](int64_t i0, int64_t i1, int64_t k0, int64_t k1) {
    if (k0 >= k1) return true;
    int64_t lo = std::numeric_limits<int64_t>::max(), hi = std::numeric_limits<int64_t>::min();
    if (r.rows_ascending) {
      for (int64_t i = i0; i < i1; ++i) {
        const int64_t b = std::max(rp[i], k0), e = std::min(rp[i + 1], k1);
        if (b < e) lo = std::min(lo, ci[b]), hi = std::max(hi, ci[e - 1]);
      }
    } else {
      for (int64_t k = k0; k < k1; ++k) lo = std::min(lo, ci[k]), hi = std::max(hi, ci[k]);
    }
    return hi - lo <= limit;
  };
  auto len = [&](int64_t i) { return rp[i + 1] - rp[i]; };
  bool ok = true;
  for (int64_t g0 = 0; g0 < r.rows && ok; g0 += RowSample::kGroupRows) {
    const int64_t g1 = std::min(r.rows, g0 + RowSample::kGroupRows);
    std::vector<int64_t> starts;
    adaptive_window(
        g0, g1, max_block_rows(t), len, [&](int64_t i) { starts.push_back(i); },
        [&](int64_t i, int64_t l) {
          for (int64_t k = rp[i], e = k + l; k < e && ok; k += ADAPTIVE_S)
            ok = span_ok(i, i + 1, k, std::min(e, k + ADAPTIVE_S));
        });
    starts.push_back(g1);
    for (size_t b = 0; b + 1 < starts.size() && ok; ++b) {
      const int64_t k0 = rp[starts[b]], k1 = rp[starts[b + 1]];
      if (k1 - k0 <= ADAPTIVE_S) ok = span_ok(starts[b], starts[b + 1], k0, k1);
    }
  }
  return ok;
}

// The host's 16-bit columns from the layout already in `d`: per segment (row block, then chunk;
// the contract's adaptive_segment) its lowest column as the base, the offsets from it. Throws
// UNSUPPORTED when a segment spans more than 16 bits, naming how many.
template <class I>
void encode_col16(FormatData& d, const CsrRef& a, int64_t padded) {
  const I* ci = static_cast<const I*>(a.col_idx);
  const I* bnnz = d.arrays[ADAPTIVE_BLOCK_NNZ].buf.as<I>();
  const I* crow = d.arrays[ADAPTIVE_CHUNK_ROW].buf.as<I>();
  const I* cstart = d.arrays[ADAPTIVE_CHUNK_START].buf.as<I>();
  const int64_t nb = d.arrays[ADAPTIVE_BLOCK_NNZ].count - 1, nc = d.arrays[ADAPTIVE_CHUNK_ROW].count;
  I* base = d.make<I>(ADAPTIVE_COL_BASE, nb + nc);
  HostArray& h = d.at(ADAPTIVE_COL_IDX, size_of(a.index));
  h.elem = 2, h.count = padded;
  h.buf = AlignedBuffer(2 * size_t(padded));
  uint16_t* off = h.buf.as<uint16_t>();
  std::atomic<int64_t> wide{0};
  parallel_for(nb + nc, plan_threads(a.nnz), [&](int64_t s0, int64_t s1, int) {
    for (int64_t s = s0; s < s1; ++s) {
      long long k0, k1;
      adaptive_segment(
          s, nb, [&](int64_t b) { return int64_t(bnnz[b]); }, [&](int64_t c) { return int64_t(cstart[c]); },
          [&](int64_t c) { return a.row_begin(crow[c] + 1); }, &k0, &k1);
      int64_t lo = k0 < k1 ? int64_t(ci[k0]) : 0, hi = lo;
      for (int64_t k = k0; k < k1; ++k) lo = std::min<int64_t>(lo, ci[k]), hi = std::max<int64_t>(hi, ci[k]);
      base[s] = I(lo);
      if (hi - lo > ADAPTIVE_C16_MAX_SPAN) {
        ++wide;
        continue;
      }
      for (int64_t k = k0; k < k1; ++k) off[k] = uint16_t(int64_t(ci[k]) - lo);
    }
  });
  if (wide > 0)
    fail(SPMV_STATUS_UNSUPPORTED, "csr_adaptive: " + std::to_string(wide.load()) +
                                      " row blocks or chunks span more than 16 bits of columns");
  std::fill(off + a.nnz, off + padded, uint16_t(0));
}

class CsrAdaptiveFormat final : public Format {
 public:
  std::string name() const override { return "csr_adaptive"; }
  std::span<const ArraySlot> contract_arrays() const override { return kCsrAdaptiveArrays; }
  bool supports(BackendKind) const override { return true; }
  bool supports_value(ValueType) const override { return true; }  // real and complex
  bool keeps_csr_pattern(const FormatParams& p) const override { return !col16(p); }
  std::vector<FormatParams> candidates(const CsrRef&, const MatrixStats& s,
                                       const TargetInfo& t) const override {
    std::vector<FormatParams> out = {FormatParams{}};
    if (s.nnz > 0 && sample_fits_col16(s, t)) out.push_back({{kColBitsParam, 16}});
    return out;
  }
  std::vector<FormatParams> kernel_variants(const TargetInfo&, ValueType) const override {
    return {FormatParams{}, FormatParams{{kColBitsParam, 16}}};
  }
  // GPU long rows: each chunk's sum goes to scratch and a second pass adds a row's chunks in
  // chunk order (spmvjit_long_part, spmvjit_long_sum) instead of one atomic per chunk.
  std::string make_deterministic(FormatParams& p, const TargetInfo& t) const override {
    if (t.gpu()) p[kDeterministicParam] = 1;
    return "";
  }

  Estimate estimate(const CsrRef& a, const MatrixStats& s, const FormatParams& p,
                    const TargetInfo& t) const override {
    const Shape sh = layout_shape(s, t);
    const double is = double(size_of(a.index)), vs = double(size_of(a.value));
    const bool c16 = col16(p);
    Estimate e;
    e.stored_entries = a.nnz;
    // With 16-bit columns: 2 bytes per entry and one base column per row block and chunk.
    const double col_bytes = c16 ? 2.0 * double(a.nnz) + is * (sh.blocks + sh.chunks) : is * double(a.nnz);
    e.matrix_bytes = int64_t(is * (double(a.rows + 1) + 2 * (sh.blocks + 1) + 2 * sh.chunks) + col_bytes +
                             vs * double(a.nnz));
    char buf[160];
    std::snprintf(buf, sizeof buf, "about %.0f row blocks, %.0f long rows in %.0f chunks%s", sh.blocks,
                  sh.long_rows, sh.chunks, c16 ? ", 16-bit column offsets" : "");
    e.reason = buf;
    if (!t.gpu()) {
      // A GPU format: the CPU runs it as scalar CSR (see templates/cpu/csr_adaptive.cpp), never
      // better than csr there, so it is charged half again csr's cost.
      e.cost_bytes = 1.5 * (double(e.matrix_bytes) + 24.0 * double(a.rows));
      return e;
    }
    // Every load coalesced and the work split in equal nonzero blocks (imbalance 1); per row
    // block a barrier and the shared-memory reduction, per chunk a block sum and an atomic.
    // Rows of a few entries cost more than that: on an H100 (2026-11-28, docs/PERFORMANCE.md),
    // short:8000000:{1,2,3} and short:4000000:4 (mean 0.5-2 entries a row) ran 4-22% slower
    // than ell, sellp or csr_vector, which the bytes alone rank below. 8 more per row at a mean
    // of 2 or less, none from a mean of 4 (random, power-law, R-MAT, circuit rows are longer).
    const double thin = std::clamp((4.0 - s.row_mean) / 2.0, 0.0, 1.0);
    e.cost_bytes =
        double(e.matrix_bytes) + (2.0 + 8.0 * thin) * double(a.rows) + 128.0 * sh.blocks + 256.0 * sh.chunks;
    if (c16) e.cost_bytes += kCol16Bytes * double(a.nnz);
    return e;
  }

  // Arrays 0-2 are the CSR arrays (the padding past nnz is never reached through row_ptr); 16-bit
  // columns are decoded segment by segment.
  void to_triplets(const FormatData& d, const CsrRef& shape, std::vector<Triplet>& out) const override {
    if (!col16(d.params)) return csr_layout_to_triplets(d, shape, out);
    const int64_t nb = d.ints[ADAPTIVE_N_BLOCKS], nc = d.ints[ADAPTIVE_N_CHUNKS];
    dispatch_types_complex(shape.index, shape.value, [&]<class I, class V>() {
      const I* rp = d.arrays[ADAPTIVE_ROW_PTR].buf.template as<I>();
      const uint16_t* off = d.arrays[ADAPTIVE_COL_IDX].buf.template as<uint16_t>();
      const V* va = d.arrays[ADAPTIVE_VALUES].buf.template as<V>();
      const I* blk = d.arrays[ADAPTIVE_ROW_BLOCKS].buf.template as<I>();
      const I* crow = d.arrays[ADAPTIVE_CHUNK_ROW].buf.template as<I>();
      const I* cstart = d.arrays[ADAPTIVE_CHUNK_START].buf.template as<I>();
      const I* base = d.arrays[ADAPTIVE_COL_BASE].buf.template as<I>();
      auto emit = [&](int64_t r, int64_t k0, int64_t k1, int64_t b) {
        for (int64_t k = k0; k < k1; ++k)
          if (va[k] != V(0)) out.push_back(make_triplet(r, b + int64_t(off[k]), va[k]));
      };
      for (int64_t s = 0; s < nb; ++s) {
        if (int64_t(rp[blk[s + 1]]) - int64_t(rp[blk[s]]) > ADAPTIVE_S) continue;  // its chunks'
        for (int64_t r = blk[s]; r < blk[s + 1]; ++r) emit(r, rp[r], rp[r + 1], base[s]);
      }
      for (int64_t c = 0; c < nc; ++c) {
        const int64_t r = crow[c], k0 = cstart[c];
        emit(r, k0, std::min<int64_t>(k0 + ADAPTIVE_S, rp[r + 1]), base[nb + c]);
      }
    });
  }

  bool converts_on_device() const override { return true; }
  std::vector<std::string> device_build_modules() const override { return {"csr_adaptive_build"}; }
  FormatData convert_device(DeviceConverter& dc, const FormatParams& p, const TargetInfo& t) const override {
    const CsrRef& a = dc.shape();
    FormatData d;
    d.declare(name(), p, contract_arrays(), a.index, a.value);
    const bool c16 = col16(p);
    d.put(ADAPTIVE_ROW_PTR, dc.row_ptr());
    if (!c16) d.put(ADAPTIVE_COL_IDX, dc.col_idx(padded_nnz(a.nnz)));
    d.put(ADAPTIVE_VALUES, dc.values(padded_nnz(a.nnz)));
    // Per-window counts, scanned into offsets, then the layout written at them: a block per
    // window where the device's threads cooperate, else one thread per window (small blocks so a
    // few thousand windows still spread over the device). One thread walked a window's rows one
    // dependent load at a time: 0.7-0.8 ms a pass on 4M rows on an H200.
    const bool coop = dc.cooperative();
    const std::string count = coop ? "spmvjit_build_count_coop" : "spmvjit_build_count";
    const std::string write = coop ? "spmvjit_build_write_coop" : "spmvjit_build_write";
    const int64_t per_window = coop ? ADAPTIVE_COOP_BLOCK : 1;
    const int block = coop ? ADAPTIVE_COOP_BLOCK : 32;
    const int64_t windows = (a.rows + ADAPTIVE_WINDOW - 1) / ADAPTIVE_WINDOW;
    HostArray wb = dc.alloc(windows + 1, 8), wc = dc.alloc(windows + 1, 8), wl = dc.alloc(windows + 1, 8);
    SpmvArgs g = dc.args();
    g.a[ADAPTIVE_BUILD_ROW_PTR] = a.row_ptr;
    g.a[ADAPTIVE_BUILD_WIN_BLOCKS] = wb.device.get();
    g.a[ADAPTIVE_BUILD_WIN_CHUNKS] = wc.device.get();
    g.a[ADAPTIVE_BUILD_WIN_LONG_ROWS] = wl.device.get();
    g.n[ADAPTIVE_BUILD_N_WINDOWS] = windows;
    g.n[ADAPTIVE_BUILD_N_NNZ] = a.nnz;
    if (windows) dc.launch("csr_adaptive_build", count, windows * per_window, g, block);
    for (const HostArray* h : {&wb, &wc, &wl}) dc.exclusive_scan(h->device.get(), windows);
    const int64_t nb = dc.read_i64(static_cast<const int64_t*>(wb.device.get()) + windows);
    const int64_t nc = dc.read_i64(static_cast<const int64_t*>(wc.device.get()) + windows);
    const int64_t long_rows = dc.read_i64(static_cast<const int64_t*>(wl.device.get()) + windows);
    const size_t is = size_of(a.index);
    d.put(ADAPTIVE_ROW_BLOCKS, dc.alloc(nb + 1, is));
    d.put(ADAPTIVE_CHUNK_ROW, dc.alloc(nc, is));
    d.put(ADAPTIVE_CHUNK_START, dc.alloc(nc, is));
    d.put(ADAPTIVE_BLOCK_NNZ, dc.alloc(nb + 1, is));
    g.a[ADAPTIVE_BUILD_ROW_BLOCKS] = d.arrays[ADAPTIVE_ROW_BLOCKS].device.get();
    g.a[ADAPTIVE_BUILD_CHUNK_ROW] = d.arrays[ADAPTIVE_CHUNK_ROW].device.get();
    g.a[ADAPTIVE_BUILD_CHUNK_START] = d.arrays[ADAPTIVE_CHUNK_START].device.get();
    g.a[ADAPTIVE_BUILD_BLOCK_NNZ] = d.arrays[ADAPTIVE_BLOCK_NNZ].device.get();
    dc.launch("csr_adaptive_build", write, std::max<int64_t>(windows, 1) * per_window, g, block);
    if (c16) encode_col16_device(dc, d, nb, nc);
    finish(d, a, nb, long_rows, nc, t);
    return d;
  }

  FormatData convert(const CsrRef& a, const FormatParams& p, const TargetInfo& t) const override {
    FormatData d;
    d.declare(name(), p, contract_arrays(), a.index, a.value);
    const Layout l = make_layout(a, t);
    const bool c16 = col16(p);
    copy_csr_arrays(d, a, padded_nnz(a.nnz), !c16);
    dispatch_types_complex(a.index, a.value, [&]<class I, class V>() {
      auto fill = [&](int slot, const std::vector<int64_t>& v) {
        I* out = d.make<I>(slot, int64_t(v.size()));
        for (size_t i = 0; i < v.size(); ++i) out[i] = I(v[i]);
      };
      fill(ADAPTIVE_ROW_BLOCKS, l.blocks);
      fill(ADAPTIVE_CHUNK_ROW, l.chunk_row);
      fill(ADAPTIVE_CHUNK_START, l.chunk_start);
      I* bnnz = d.make<I>(ADAPTIVE_BLOCK_NNZ, int64_t(l.blocks.size()));
      for (size_t i = 0; i < l.blocks.size(); ++i) bnnz[i] = I(a.row_begin(l.blocks[i]));
      if (c16) encode_col16<I>(d, a, padded_nnz(a.nnz));
    });
    finish(d, a, int64_t(l.blocks.size()) - 1, l.long_rows, int64_t(l.chunk_row.size()), t);
    return d;
  }

 private:
  // The device's 16-bit columns (templates/gpu/csr_adaptive_build.cu, spmvjit_c16_*) from the
  // input's col_idx and the layout just built; refuses as the host does.
  static void encode_col16_device(DeviceConverter& dc, FormatData& d, int64_t nb, int64_t nc) {
    const CsrRef& a = dc.shape();
    const int64_t segs = nb + nc, padded = padded_nnz(a.nnz);
    HostArray work = dc.alloc(3 * segs + 1, 8);
    d.put(ADAPTIVE_COL_BASE, dc.alloc(segs, size_of(a.index)));
    HostArray off = dc.alloc(padded, 2);
    SpmvArgs g = dc.args();
    g.a[ADAPTIVE_C16_ROW_PTR] = a.row_ptr;
    g.a[ADAPTIVE_C16_COL_IDX] = a.col_idx;
    g.a[ADAPTIVE_C16_BLOCK_NNZ] = d.arrays[ADAPTIVE_BLOCK_NNZ].device.get();
    g.a[ADAPTIVE_C16_CHUNK_ROW] = d.arrays[ADAPTIVE_CHUNK_ROW].device.get();
    g.a[ADAPTIVE_C16_CHUNK_START] = d.arrays[ADAPTIVE_CHUNK_START].device.get();
    g.a[ADAPTIVE_C16_COL_BASE] = d.arrays[ADAPTIVE_COL_BASE].device.get();
    g.a[ADAPTIVE_C16_OFFSETS] = off.device.get();
    g.a[ADAPTIVE_C16_WORK] = work.device.get();
    g.n[ADAPTIVE_C16_N_BLOCKS] = nb;
    g.n[ADAPTIVE_C16_N_CHUNKS] = nc;
    g.n[ADAPTIVE_C16_N_PADDED] = padded;
    g.n[ADAPTIVE_C16_N_NNZ] = a.nnz;
    if (segs > 0) {
      dc.launch("csr_adaptive_build", "spmvjit_c16_init", segs, g);
      dc.launch("csr_adaptive_build", "spmvjit_c16_span", segs * ADAPTIVE_C16_PIECES, g);
    }
    dc.launch("csr_adaptive_build", "spmvjit_c16_write", std::max<int64_t>(segs * ADAPTIVE_C16_PIECES, 1), g);
    dc.exclusive_scan(work.device.get(), segs);
    const int64_t wide = dc.read_i64(static_cast<const int64_t*>(work.device.get()) + segs);
    if (wide > 0)
      fail(SPMV_STATUS_UNSUPPORTED, "csr_adaptive: " + std::to_string(wide) +
                                        " row blocks or chunks span more than 16 bits of columns");
    HostArray& h = d.at(ADAPTIVE_COL_IDX, size_of(a.index));
    h.count = padded, h.elem = 2, h.device = std::move(off.device);
  }

  static void finish(FormatData& d, const CsrRef& a, int64_t nb, int64_t long_rows, int64_t nc,
                     const TargetInfo& t) {
    d.stored_entries = a.nnz;
    d.matrix_bytes = sum_matrix_bytes(d);
    const int64_t parts = t.gpu() ? 1 : std::max(1, t.threads);
    d.ints[ADAPTIVE_N_BLOCKS] = nb;
    d.ints[ADAPTIVE_N_LONG_ROWS] = long_rows;
    d.ints[ADAPTIVE_N_CHUNKS] = nc;
    d.ints[ADAPTIVE_N_PARTS] = parts;
    d.facts = Json::object({{"row_blocks", nb},
                            {"long_rows", long_rows},
                            {"long_chunks", nc},
                            {"padding_entries", padded_nnz(a.nnz) - a.nnz}});
    if (col16(d.params)) {
      d.facts["col_bits"] = 16;
      d.facts["index_bytes_saved"] =
          int64_t(size_of(a.index) - 2) * padded_nnz(a.nnz) - int64_t(size_of(a.index)) * (nb + nc);
    }
    // The row-block step goes first: it applies beta to the long rows the chunks add into.
    const bool cpu = !t.gpu();
    if (nb > 0) d.steps.push_back({"spmvjit_part", cpu ? parts : nb, cpu ? 1 : int(ADAPTIVE_BLOCK), 0});
    if (nc == 0) return;
    if (cpu || !deterministic_sums(d.params)) {
      d.steps.push_back({"spmvjit_long", cpu ? parts : nc, cpu ? 1 : int(ADAPTIVE_BLOCK), 0, !cpu});
      return;
    }
    // Deterministic: chunk sums to scratch, then one warp per long row adds them in order.
    d.scratch_bytes = nc * int64_t(size_of(a.value));
    d.steps.push_back({"spmvjit_long_part", nc, int(ADAPTIVE_BLOCK), 0, true});
    d.steps.push_back(
        {"spmvjit_long_sum", gpu_grid(nc, ADAPTIVE_BLOCK / t.warp_size), ADAPTIVE_BLOCK, 0, true});
  }
};

}  // namespace

SPMVJIT_REGISTER_FORMAT(CsrAdaptiveFormat)

}  // namespace spmvjit
