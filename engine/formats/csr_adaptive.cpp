// CSR-adaptive (GPU-first): the CSR arrays plus plan-time row blocks (consecutive rows holding at
// most kAdaptiveS nonzeros and kAdaptiveRows rows; one GPU block each, streaming its nonzeros
// with coalesced 16-byte loads whatever the row lengths) and chunks of kAdaptiveS nonzeros for
// rows longer than that (one GPU block each, summed into y with atomics after the row-block step
// applied beta). Rows are binned by length per row block, not sorted into per-length lists:
// lists would read 4 bytes more per row and split the 32-byte sectors at every bin change.
#include <algorithm>
#include <cstring>

#include "engine/formats/format.hpp"
#include "engine/parallel.hpp"

namespace spmvjit {
namespace {

// Must match SPMVJIT_ADAPTIVE_BLOCK / SPMVJIT_ADAPTIVE_ROWS / SPMVJIT_S in
// templates/gpu/csr_adaptive.cu.
constexpr int64_t kAdaptiveBlock = 256;
// Rows per GPU row block at most: up to 4 rows per thread, so rows of 0-2 nonzeros still fill a
// block with work (H100, 256-row blocks: short-2M ran 0.057 ms against scalar csr's 0.033 ms).
constexpr int64_t kAdaptiveRows = 1024;
// The CPU runs row blocks as plain row loops and only splits them into parts: its layout (and so
// its cost) keeps the original 256-row blocks.
constexpr int64_t kCpuRows = 256;
constexpr int64_t kAdaptiveS = 2048;
// col_idx/values are padded to a multiple of this many entries so the last 16-byte load of a
// row block stays inside the allocation.
constexpr int64_t kPad = 4;

struct Layout {
  std::vector<int64_t> blocks{0};  // row-block starts, then rows
  std::vector<int64_t> chunk_row, chunk_start;
  int64_t long_rows = 0;
};

// One pass over row_ptr. A long row (> S nonzeros) is a row block of its own (the GPU stream
// step applies beta to it) plus ceil(len / S) chunks.
Layout make_layout(const CsrRef& a, bool with_chunks, const TargetInfo& t) {
  const int64_t max_rows = t.backend == BackendKind::cpu ? kCpuRows : kAdaptiveRows;
  Layout l;
  int64_t start = 0, nnz = 0;
  for (int64_t r = 0; r < a.rows; ++r) {
    const int64_t len = a.row_len(r);
    if (len > kAdaptiveS) {
      if (r > start) l.blocks.push_back(r);
      l.blocks.push_back(r + 1);
      start = r + 1, nnz = 0;
      ++l.long_rows;
      const int64_t b = a.row_begin(r);
      if (with_chunks) {
        for (int64_t k = b; k < b + len; k += kAdaptiveS) l.chunk_row.push_back(r), l.chunk_start.push_back(k);
      } else {
        l.chunk_row.resize(l.chunk_row.size() + size_t((len + kAdaptiveS - 1) / kAdaptiveS));
      }
      continue;
    }
    if (r - start + 1 > max_rows || nnz + len > kAdaptiveS) {
      l.blocks.push_back(r);
      start = r, nnz = 0;
    }
    nnz += len;
  }
  if (a.rows > start) l.blocks.push_back(a.rows);
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
  bool supports(BackendKind) const override { return true; }
  std::vector<FormatParams> candidates(const CsrRef&, const MatrixStats&, const TargetInfo&) const override {
    return {FormatParams{}};
  }

  Estimate estimate(const CsrRef& a, const MatrixStats&, const FormatParams&,
                    const TargetInfo& t) const override {
    const Layout l = make_layout(a, false, t);
    const int64_t is = int64_t(size_of(a.index)), vs = int64_t(size_of(a.value));
    const int64_t nb = int64_t(l.blocks.size()) - 1, nc = int64_t(l.chunk_row.size());
    Estimate e;
    e.stored_entries = a.nnz;
    e.matrix_bytes = is * (a.rows + 1 + a.nnz + nb + 1 + 2 * nc) + vs * a.nnz;
    e.reason = std::to_string(nb) + " row blocks, " + std::to_string(l.long_rows) + " long rows in " +
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

  void to_triplets(const FormatData& d, const CsrRef& shape, std::vector<Triplet>& out) const override {
    dispatch_types(shape.index, shape.value, [&]<class I, class V>() {
      const I* rp = d.arrays[0].buf.template as<I>();
      const I* ci = d.arrays[1].buf.template as<I>();
      const V* va = d.arrays[2].buf.template as<V>();
      for (int64_t r = 0; r < shape.rows; ++r)
        for (int64_t k = rp[r]; k < rp[r + 1]; ++k)
          if (va[k] != V(0)) out.push_back({r, int64_t(ci[k]), double(va[k])});
    });
  }

  FormatData convert(const CsrRef& a, const FormatParams& p, const TargetInfo& t) const override {
    return dispatch_types(a.index, a.value, [&]<class I, class V>() {
      FormatData d;
      d.format = name();
      d.params = p;
      const int64_t padded = (a.nnz + kPad - 1) / kPad * kPad;
      HostArray rp = make_array<I>("row_ptr", a.rows + 1);
      HostArray ci = make_array<I>("col_idx", padded);
      HostArray va = make_array<V>("values", padded, true);
      parallel_copy(rp.buf.data(), a.row_ptr, rp.buf.bytes());
      parallel_copy(ci.buf.data(), a.col_idx, size_t(a.nnz) * sizeof(I));
      parallel_copy(va.buf.data(), a.val, size_t(a.nnz) * sizeof(V));
      for (int64_t k = a.nnz; k < padded; ++k) ci.buf.template as<I>()[k] = I(0), va.buf.template as<V>()[k] = V(0);
      const Layout l = make_layout(a, true, t);
      const int64_t nb = int64_t(l.blocks.size()) - 1, nc = int64_t(l.chunk_row.size());
      d.arrays.push_back(std::move(rp));
      d.arrays.push_back(std::move(ci));
      d.arrays.push_back(std::move(va));
      d.arrays.push_back(index_array<I>("row_blocks", l.blocks));
      d.arrays.push_back(index_array<I>("chunk_row", l.chunk_row));
      d.arrays.push_back(index_array<I>("chunk_start", l.chunk_start));
      d.stored_entries = a.nnz;
      d.matrix_bytes = sum_matrix_bytes(d);
      const int64_t parts = t.backend == BackendKind::cpu ? std::max(1, t.threads) : 1;
      d.ints[0] = nb;
      d.ints[1] = l.long_rows;
      d.ints[2] = nc;
      d.ints[3] = parts;
      d.facts_json = "{\"row_blocks\":" + std::to_string(nb) + ",\"long_rows\":" + std::to_string(l.long_rows) +
                     ",\"long_chunks\":" + std::to_string(nc) + ",\"padding_entries\":" +
                     std::to_string(padded - a.nnz) + "}";
      // The row-block step goes first: it applies beta to the long rows the chunks add into.
      if (nb > 0) d.steps.push_back({"spmvjit_part", t.backend == BackendKind::cpu ? parts : nb,
                                     t.backend == BackendKind::cpu ? 1 : int(kAdaptiveBlock), 0});
      if (nc > 0) d.steps.push_back({"spmvjit_long", t.backend == BackendKind::cpu ? parts : nc,
                                     t.backend == BackendKind::cpu ? 1 : int(kAdaptiveBlock), 0});
      return d;
    });
  }
};

}  // namespace

const Format& csr_adaptive_format() {
  static const CsrAdaptiveFormat f;
  return f;
}

}  // namespace spmvjit
