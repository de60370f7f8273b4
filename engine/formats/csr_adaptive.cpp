// CSR-adaptive (GPU-first): the CSR arrays plus plan-time row blocks (consecutive rows holding at
// most ADAPTIVE_S nonzeros and ADAPTIVE_GPU_ROWS rows; one GPU block each, streaming its nonzeros
// with coalesced 16-byte loads whatever the row lengths; templates/contract/csr_adaptive.h) and
// chunks of ADAPTIVE_S nonzeros for rows longer than that (one GPU block each, summed into y with
// atomics after the row-block step applied beta). Rows are binned by length per row block, not
// sorted into per-length lists: lists would read 4 bytes more per row and split the 32-byte
// sectors at every bin change.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "engine/formats/device_converter.hpp"
#include "engine/formats/format.hpp"

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
  sh.blocks = std::ceil(std::max(rows / double(max_block_rows(t)), nnz / (0.85 * kS))) +
              2 * sh.long_rows + std::ceil(double(s.rows) / double(ADAPTIVE_WINDOW));
  if (s.rows == 0) sh.blocks = 0;
  return sh;
}

int64_t padded_nnz(int64_t nnz) { return (nnz + ADAPTIVE_PAD - 1) / ADAPTIVE_PAD * ADAPTIVE_PAD; }

class CsrAdaptiveFormat final : public Format {
 public:
  std::string name() const override { return "csr_adaptive"; }
  std::span<const ArraySlot> contract_arrays() const override { return kCsrAdaptiveArrays; }
  bool keeps_csr_pattern() const override { return true; }
  bool supports(BackendKind) const override { return true; }
  std::vector<FormatParams> candidates(const CsrRef&, const MatrixStats&, const TargetInfo&) const override {
    return {FormatParams{}};
  }

  Estimate estimate(const CsrRef& a, const MatrixStats& s, const FormatParams&,
                    const TargetInfo& t) const override {
    const Shape sh = layout_shape(s, t);
    const double is = double(size_of(a.index)), vs = double(size_of(a.value));
    Estimate e;
    e.stored_entries = a.nnz;
    e.matrix_bytes =
        int64_t(is * (double(a.rows + 1 + a.nnz) + 2 * (sh.blocks + 1) + 2 * sh.chunks) + vs * double(a.nnz));
    char buf[160];
    std::snprintf(buf, sizeof buf, "about %.0f row blocks, %.0f long rows in %.0f chunks", sh.blocks,
                  sh.long_rows, sh.chunks);
    e.reason = buf;
    if (!t.gpu()) {
      // A GPU format: the CPU runs it as scalar CSR (see templates/cpu/csr_adaptive.cpp), never
      // better than csr there, so it is charged half again csr's cost.
      e.cost_bytes = 1.5 * (double(e.matrix_bytes) + 24.0 * double(a.rows));
      return e;
    }
    // Every load coalesced and the work split in equal nonzero blocks (imbalance 1); per row
    // block a barrier and the shared-memory reduction, per chunk a block sum and an atomic.
    e.cost_bytes = double(e.matrix_bytes) + 2.0 * double(a.rows) + 128.0 * sh.blocks + 256.0 * sh.chunks;
    return e;
  }

  // Arrays 0-2 are the CSR arrays (the padding past nnz is never reached through row_ptr).
  void to_triplets(const FormatData& d, const CsrRef& shape, std::vector<Triplet>& out) const override {
    csr_layout_to_triplets(d, shape, out);
  }

  bool converts_on_device() const override { return true; }
  std::vector<std::string> device_build_modules() const override { return {"csr_adaptive_build"}; }
  FormatData convert_device(DeviceConverter& dc, const FormatParams& p, const TargetInfo& t) const override {
    const CsrRef& a = dc.shape();
    FormatData d;
    d.declare(name(), p, contract_arrays(), a.index, a.value);
    put_device_csr_arrays(d, dc, padded_nnz(a.nnz));
    // Per-window counts, scanned into offsets, then the layout written at them (one thread per
    // window, small blocks so a few thousand windows still spread over the device).
    const int64_t windows = (a.rows + ADAPTIVE_WINDOW - 1) / ADAPTIVE_WINDOW;
    HostArray wb = dc.alloc(windows + 1, 8), wc = dc.alloc(windows + 1, 8), wl = dc.alloc(windows + 1, 8);
    SpmvArgs g = dc.args();
    g.a[ADAPTIVE_BUILD_ROW_PTR] = a.row_ptr;
    g.a[ADAPTIVE_BUILD_WIN_BLOCKS] = wb.device.get();
    g.a[ADAPTIVE_BUILD_WIN_CHUNKS] = wc.device.get();
    g.a[ADAPTIVE_BUILD_WIN_LONG_ROWS] = wl.device.get();
    g.n[ADAPTIVE_BUILD_N_WINDOWS] = windows;
    g.n[ADAPTIVE_BUILD_N_NNZ] = a.nnz;
    if (windows) dc.launch("csr_adaptive_build", "spmvjit_build_count", windows, g, 32);
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
    dc.launch("csr_adaptive_build", "spmvjit_build_write", std::max<int64_t>(windows, 1), g, 32);
    finish(d, a, nb, long_rows, nc, t);
    return d;
  }

  FormatData convert(const CsrRef& a, const FormatParams& p, const TargetInfo& t) const override {
    FormatData d;
    d.declare(name(), p, contract_arrays(), a.index, a.value);
    copy_csr_arrays(d, a, padded_nnz(a.nnz));
    const Layout l = make_layout(a, t);
    dispatch_types(a.index, a.value, [&]<class I, class V>() {
      auto fill = [&](int slot, const std::vector<int64_t>& v) {
        I* out = d.make<I>(slot, int64_t(v.size()));
        for (size_t i = 0; i < v.size(); ++i) out[i] = I(v[i]);
      };
      fill(ADAPTIVE_ROW_BLOCKS, l.blocks);
      fill(ADAPTIVE_CHUNK_ROW, l.chunk_row);
      fill(ADAPTIVE_CHUNK_START, l.chunk_start);
      I* bnnz = d.make<I>(ADAPTIVE_BLOCK_NNZ, int64_t(l.blocks.size()));
      for (size_t i = 0; i < l.blocks.size(); ++i) bnnz[i] = I(a.row_begin(l.blocks[i]));
    });
    finish(d, a, int64_t(l.blocks.size()) - 1, l.long_rows, int64_t(l.chunk_row.size()), t);
    return d;
  }

 private:
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
    // The row-block step goes first: it applies beta to the long rows the chunks add into.
    const bool cpu = !t.gpu();
    if (nb > 0) d.steps.push_back({"spmvjit_part", cpu ? parts : nb, cpu ? 1 : int(ADAPTIVE_BLOCK), 0});
    if (nc > 0) d.steps.push_back({"spmvjit_long", cpu ? parts : nc, cpu ? 1 : int(ADAPTIVE_BLOCK), 0, !cpu});
  }
};

}  // namespace

SPMVJIT_REGISTER_FORMAT(CsrAdaptiveFormat)

}  // namespace spmvjit
