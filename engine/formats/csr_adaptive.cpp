// CSR-adaptive (GPU-first): the CSR arrays plus plan-time row blocks (consecutive rows holding at
// most kS nonzeros and kGpuRows rows; one GPU block each, streaming its nonzeros with coalesced
// 16-byte loads whatever the row lengths; adaptive_layout.hpp) and chunks of kS nonzeros for
// rows longer than that (one GPU block each, summed into y with atomics after the row-block step
// applied beta). Rows are binned by length per row block, not sorted into per-length lists:
// lists would read 4 bytes more per row and split the 32-byte sectors at every bin change.
#include <algorithm>
#include <cstring>

#include "core/parallel.hpp"
#include "engine/formats/adaptive_layout.hpp"
#include "engine/formats/device_converter.hpp"
#include "engine/formats/format.hpp"

namespace spmvjit {
namespace {

using namespace adaptive_layout;
// col_idx/values are padded to a multiple of this many entries so the last 16-byte load of a
// row block stays inside the allocation.
constexpr int64_t kPad = 4;

struct Layout {
  std::vector<int64_t> blocks;  // row-block starts, then rows
  std::vector<int64_t> chunk_row, chunk_start;
  int64_t long_rows = 0;
};

// One pass over row_ptr, window by window (adaptive_layout.hpp).
Layout make_layout(const CsrRef& a, const TargetInfo& t) {
  const int64_t max_rows = t.backend == BackendKind::cpu ? kCpuRows : kGpuRows;
  Layout l;
  for (int64_t w = 0; w < a.rows; w += kWindow)
    window(
        w, std::min(a.rows, w + kWindow), max_rows, [&](int64_t r) { return a.row_len(r); },
        [&](int64_t r) { l.blocks.push_back(r); },
        [&](int64_t r, int64_t len) {
          ++l.long_rows;
          for (int64_t k = a.row_begin(r), e = k + len; k < e; k += kS)
            l.chunk_row.push_back(r), l.chunk_start.push_back(k);
        });
  l.blocks.push_back(a.rows);
  return l;
}

template <class I>
HostArray index_array(const std::string& name, const std::vector<int64_t>& v) {
  HostArray h = make_array<I>(name, int64_t(v.size()));
  I* p = h.buf.template as<I>();
  for (size_t i = 0; i < v.size(); ++i) p[i] = I(v[i]);
  return h;
}

class CsrAdaptiveFormat final : public Format {
 public:
  std::string name() const override { return "csr_adaptive"; }
  bool keeps_csr_pattern() const override { return true; }
  bool supports(BackendKind) const override { return true; }
  std::vector<FormatParams> candidates(const CsrRef&, const MatrixStats&, const TargetInfo&) const override {
    return {FormatParams{}};
  }

  Estimate estimate(const CsrRef& a, const MatrixStats& s, const FormatParams&,
                    const TargetInfo& t) const override {
    // GPU: the statistics hold the layout's counts (so device-resident input is never read on the
    // host); CPU: its 256-row layout, counted here.
    int64_t nb = s.adaptive_blocks, long_rows = s.long_rows, nc = s.long_chunks;
    if (t.backend == BackendKind::cpu) {
      const Layout l = make_layout(a, t);
      nb = int64_t(l.blocks.size()) - 1, long_rows = l.long_rows, nc = int64_t(l.chunk_row.size());
    }
    const int64_t is = int64_t(size_of(a.index)), vs = int64_t(size_of(a.value));
    Estimate e;
    e.stored_entries = a.nnz;
    e.matrix_bytes = is * (a.rows + 1 + a.nnz + 2 * (nb + 1) + 2 * nc) + vs * a.nnz;
    e.reason = std::to_string(nb) + " row blocks, " + std::to_string(long_rows) + " long rows in " +
               std::to_string(nc) + " chunks";
    if (t.backend == BackendKind::cpu) {
      // A GPU format: the CPU runs it as scalar CSR (see templates/cpu/csr_adaptive.cpp), never
      // better than csr there, so it is charged half again csr's cost.
      e.cost_bytes = 1.5 * (double(e.matrix_bytes) + 24.0 * double(a.rows));
      return e;
    }
    // Every load coalesced and the work split in equal nonzero blocks (imbalance 1); per row
    // block a barrier and the shared-memory reduction, per chunk a block sum and an atomic.
    e.cost_bytes = double(e.matrix_bytes) + 2.0 * double(a.rows) + 128.0 * double(nb) + 256.0 * double(nc);
    return e;
  }

  // Arrays 0-2 are the CSR arrays (the padding past nnz is never reached through row_ptr).
  void to_triplets(const FormatData& d, const CsrRef& shape, std::vector<Triplet>& out) const override {
    csr_layout_to_triplets(d, shape, out);
  }

  bool converts_on_device() const override { return true; }
  FormatData convert_device(DeviceConverter& dc, const FormatParams& p, const TargetInfo& t) const override {
    FormatData d;
    d.format = name();
    d.params = p;
    const int64_t padded = padded_nnz(dc.shape().nnz);
    d.arrays.push_back(dc.row_ptr());
    d.arrays.push_back(dc.col_idx(padded));
    d.arrays.push_back(dc.values(padded));
    d.arrays.resize(7);
    const AdaptiveCounts c = dc.adaptive_layout(d.arrays[3], d.arrays[4], d.arrays[5], d.arrays[6]);
    finish(d, dc.shape(), c.blocks, c.long_rows, c.chunks, t);
    return d;
  }

  FormatData convert(const CsrRef& a, const FormatParams& p, const TargetInfo& t) const override {
    return dispatch_types(a.index, a.value, [&]<class I, class V>() {
      FormatData d;
      d.format = name();
      d.params = p;
      const int64_t padded = padded_nnz(a.nnz);
      HostArray rp = make_array<I>("row_ptr", a.rows + 1);
      HostArray ci = make_array<I>("col_idx", padded);
      HostArray va = make_array<V>("values", padded, true);
      parallel_copy(rp.buf.data(), a.row_ptr, rp.buf.bytes());
      parallel_copy(ci.buf.data(), a.col_idx, size_t(a.nnz) * sizeof(I));
      parallel_copy(va.buf.data(), a.val, size_t(a.nnz) * sizeof(V));
      for (int64_t k = a.nnz; k < padded; ++k) ci.buf.template as<I>()[k] = I(0), va.buf.template as<V>()[k] = V(0);
      const Layout l = make_layout(a, t);
      d.arrays.push_back(std::move(rp));
      d.arrays.push_back(std::move(ci));
      d.arrays.push_back(std::move(va));
      d.arrays.push_back(index_array<I>("row_blocks", l.blocks));
      d.arrays.push_back(index_array<I>("chunk_row", l.chunk_row));
      d.arrays.push_back(index_array<I>("chunk_start", l.chunk_start));
      HostArray bk = make_array<I>("block_nnz", int64_t(l.blocks.size()));
      for (size_t i = 0; i < l.blocks.size(); ++i) bk.buf.template as<I>()[i] = I(a.row_begin(l.blocks[i]));
      d.arrays.push_back(std::move(bk));
      finish(d, a, int64_t(l.blocks.size()) - 1, l.long_rows, int64_t(l.chunk_row.size()), t);
      return d;
    });
  }

 private:
  static int64_t padded_nnz(int64_t nnz) { return (nnz + kPad - 1) / kPad * kPad; }
  static void finish(FormatData& d, const CsrRef& a, int64_t nb, int64_t long_rows, int64_t nc,
                     const TargetInfo& t) {
    d.stored_entries = a.nnz;
    d.matrix_bytes = sum_matrix_bytes(d);
    const int64_t parts = t.backend == BackendKind::cpu ? std::max(1, t.threads) : 1;
    d.ints[0] = nb;
    d.ints[1] = long_rows;
    d.ints[2] = nc;
    d.ints[3] = parts;
    d.facts_json = "{\"row_blocks\":" + std::to_string(nb) + ",\"long_rows\":" + std::to_string(long_rows) +
                   ",\"long_chunks\":" + std::to_string(nc) +
                   ",\"padding_entries\":" + std::to_string(padded_nnz(a.nnz) - a.nnz) + "}";
    // The row-block step goes first: it applies beta to the long rows the chunks add into.
    const bool cpu = t.backend == BackendKind::cpu;
    if (nb > 0) d.steps.push_back({"spmvjit_part", cpu ? parts : nb, cpu ? 1 : int(kBlock), 0});
    if (nc > 0) d.steps.push_back({"spmvjit_long", cpu ? parts : nc, cpu ? 1 : int(kBlock), 0, !cpu});
  }
};

}  // namespace

SPMVJIT_REGISTER_FORMAT(CsrAdaptiveFormat)

}  // namespace spmvjit
