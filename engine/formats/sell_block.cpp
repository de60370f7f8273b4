// Sliced ELL of short dense row blocks (1xB, B = 2 or 4): one column index per block of B
// consecutive columns, B values (zeros fill incomplete blocks). Rows are cut into blocks
// greedily and UNALIGNED: a block starts at the first column not yet covered (moved left to
// cols - B at the right edge, so x[col + B - 1] stays in range). Slices of C rows are stored
// column-major over blocks: slot (slice s, block j, row i) = slice_ptr[s] + j*C + i, its B values
// at B*slice_ptr[s] + j*C*B + b*C + i, so every b is a contiguous SIMD vector of C rows.
#include <algorithm>
#include <cstring>

#include "engine/formats/device_converter.hpp"
#include "engine/formats/format.hpp"
#include "engine/formats/gpu_cost.hpp"
#include "engine/formats/partition.hpp"
#include "engine/formats/slice_util.hpp"

namespace spmvjit {
#include "templates/contract/sell_block.h"

namespace {

using namespace slice_util;

// The greedy block decomposition of one row with sorted columns (sell_block_cut, shared with the
// device build): f(block_col, first, last) for the entries [first, last) of each block.
template <class I, class F>
int64_t blocks_of_row(const I* col, int64_t len, int64_t cols, int64_t b, F&& f) {
  auto column = [&](long long k) { return (long long)col[k]; };
  return sell_block_cut(len, cols, b, column, f);
}

// Columns of row r sorted, with their values (copies only when the row is not sorted).
template <class I, class V>
struct RowView {
  const I* col;
  const V* val;
  int64_t len;
  std::vector<std::pair<I, V>> tmp;
  std::vector<I> c;
  std::vector<V> v;
  RowView(const CsrRef& a, int64_t r, bool ascending = false) {
    const int64_t b = a.rp<I>()[r];
    len = a.rp<I>()[r + 1] - b;
    col = a.ci<I>() + b;
    val = a.vals<V>() + b;
    if (ascending || std::is_sorted(col, col + len)) return;
    tmp.resize(size_t(len));
    for (int64_t k = 0; k < len; ++k) tmp[size_t(k)] = {col[k], val[k]};
    std::stable_sort(tmp.begin(), tmp.end(), [](auto& x, auto& y) { return x.first < y.first; });
    c.resize(size_t(len));
    v.resize(size_t(len));
    for (int64_t k = 0; k < len; ++k)
      c[size_t(k)] = tmp[size_t(k)].first, v[size_t(k)] = tmp[size_t(k)].second;
    col = c.data();
    val = v.data();
  }
};

template <class I, class V>
int64_t count_blocks(const CsrRef& a, int64_t r, int64_t b, bool ascending = false, bool strict = false) {
  RowView<I, V> row(a, r, ascending);
  // A consecutive run (a dense row): blocks of b from its first column, the last one shorter, as
  // sell_block_cut cuts it (dense:2000's estimates cut 128,000 sampled entries one by one, 0.09 ms
  // of the choice on the 2-vCPU VM).
  if (strict && row.len > 0 && int64_t(row.col[row.len - 1]) - int64_t(row.col[0]) == row.len - 1)
    return ceil_div(row.len, b);
  return blocks_of_row(row.col, row.len, a.cols, b, [](int64_t, int64_t, int64_t) {});
}

class SellBlockFormat final : public Format {
 public:
  std::string name() const override { return "sell_block"; }
  bool supports_value(ValueType) const override { return true; }  // real and complex
  std::span<const ArraySlot> contract_arrays() const override { return kSellBlockArrays; }
  // CPU: measured time per modeled byte relative to csr (docs/PERFORMANCE.md, 2-vCPU Zen 4).
  double efficiency(const MatrixStats&, const TargetInfo& t) const override { return t.gpu() ? 1.0 : 2.6; }
  bool supports(BackendKind) const override { return true; }

  std::vector<FormatParams> candidates(const CsrRef& a, const MatrixStats&,
                                       const TargetInfo& t) const override {
    const int64_t c = lanes(t, size_of(a.value));  // SIMD lanes on the CPU, one warp of rows on a GPU
    std::vector<FormatParams> out;
    for (int64_t b : {2, 4})
      if (b <= a.cols) out.push_back({{"B", b}, {"C", c}});
    // Fewer than two columns: 1x1 blocks keep the format usable (it is then plain sliced ELL).
    if (out.empty()) out.push_back({{"B", 1}, {"C", c}});
    return out;
  }

  Estimate estimate(const CsrRef& a, const MatrixStats& s, const FormatParams& p,
                    const TargetInfo& t) const override {
    const int64_t c = p.at("C"), b = p.at("B");
    const int64_t is = int64_t(size_of(a.index)), vs = int64_t(size_of(a.value));
    const int64_t slices = ceil_div(a.rows, c);
    // Block counts of the statistics' row sample (whole slices): O(sampled nonzeros), and the
    // same for a matrix in device memory. Slice widths in blocks follow the widths in entries,
    // known exactly for every slice (MatrixStats::slice_width_sum): the sample gives their ratio,
    // so long rows it missed still count.
    // A sample of long rows (one group can hold far more than RowSample::kMaxEntries) is read in
    // whole slices up to four times that: dense rows repeat their structure.
    const CsrRef smp = s.sample->ref();
    const int64_t rows =
        std::min(smp.rows, ceil_div(s.sample->prefix_rows(4 * RowSample::kMaxEntries), c) * c);
    const bool ascending = s.sample->rows_ascending, strict = s.sample->rows_strict;
    double real = 0, stored = 0, sampled_width = 0;
    dispatch_types_complex(smp.index, smp.value, [&]<class I, class V>() {
      for (int64_t sl = 0; sl < ceil_div(rows, c); ++sl) {
        int64_t w = 0, wl = 0;
        for (int64_t r = sl * c; r < std::min(rows, (sl + 1) * c); ++r) {
          const int64_t len = smp.row_len(r);
          // A row of at most one entry is that many blocks (short-row matrices are mostly such).
          const int64_t nb = len <= 1 ? len : count_blocks<I, V>(smp, r, b, ascending, strict);
          real += double(nb);
          w = std::max(w, nb);
          wl = std::max(wl, len);
        }
        stored += double(w * c);
        sampled_width += double(wl * c);
      }
    });
    if (c <= 64 && (c & (c - 1)) == 0 && sampled_width > 0) {
      stored *=
          double(c) * double(s.slice_width_sum[size_t(63 - __builtin_clzll(uint64_t(c)))]) / sampled_width;
      real *= double(s.nnz) / double(s.sample->row_ptr[size_t(rows)]);
    } else {
      const double scale = rows ? double(a.rows) / double(rows) : 1.0;
      real *= scale;
      stored *= scale;
    }
    Estimate e;
    e.imbalance = gpu_row_starvation(a.rows, t);
    e.stored_entries = int64_t(stored) * b;
    e.matrix_bytes = int64_t(stored) * (is + b * vs) + 8 * (slices + 1);
    e.cost_bytes = double(e.matrix_bytes) + 8.0 * double(slices);
    const double fill = real * double(b) - double(s.nnz);
    if (real * double(is + b * vs) > double(s.nnz * (is + vs))) {
      e.applicable = false;
      e.reason = "1x" + std::to_string(b) + " blocks store about " + std::to_string(int64_t(fill)) +
                 " zeros: more bytes than CSR";
    } else if (e.stored_entries > kMaxPaddingFactor * s.nnz + c * b * slices) {
      e.applicable = false;
      e.reason = "padding to about " + std::to_string(e.stored_entries) + " values for " +
                 std::to_string(s.nnz) + " nonzeros";
    } else {
      e.reason = "about " + std::to_string(int64_t(real)) + " 1x" + std::to_string(b) + " blocks, " +
                 std::to_string(int64_t(fill)) + " zeros filled";
    }
    return e;
  }

  FormatParams kernel_constants(const FormatParams& p) const override {
    return {{"B", p.at("B")}, {"C", p.at("C")}};
  }

  std::vector<FormatParams> kernel_variants(const TargetInfo& t, ValueType v) const override {
    const int64_t c = lanes(t, size_of(v));  // as candidates choose it
    return {{{"B", 1}, {"C", c}}, {{"B", 2}, {"C", c}}, {{"B", 4}, {"C", c}}};
  }

  void to_triplets(const FormatData& d, const CsrRef& shape, std::vector<Triplet>& out) const override {
    const int64_t c = d.params.at("C"), b = d.params.at("B"), slices = d.ints[SELL_BLOCK_N_SLICES];
    const int64_t* sp = d.arrays[SELL_BLOCK_SLICE_PTR].buf.as<int64_t>();
    dispatch_types_complex(shape.index, shape.value, [&]<class I, class V>() {
      const I* col = d.arrays[SELL_BLOCK_BLOCK_COL].buf.template as<I>();
      const V* val = d.arrays[SELL_BLOCK_VALUES].buf.template as<V>();
      for (int64_t s = 0; s < slices; ++s)
        for (int64_t k = sp[s]; k < sp[s + 1]; ++k) {
          const int64_t j = (k - sp[s]) / c, i = (k - sp[s]) % c, r = s * c + i;
          for (int64_t bb = 0; bb < b; ++bb) {
            const V v = val[b * sp[s] + j * c * b + bb * c + i];
            if (r < shape.rows && v != V(0)) out.push_back(make_triplet(r, int64_t(col[k]) + bb, v));
          }
        }
    });
  }

  FormatData convert(const CsrRef& a, const FormatParams& p, const TargetInfo& t) const override {
    return dispatch_types_complex(a.index, a.value, [&]<class I, class V>() { return build<I, V>(a, p, t); });
  }

  // Every parameter set of a GPU target's candidates: slices of C rows, C a power of two up to 64
  // (templates/gpu/sell_block_build.cu sums windows of SELL_BLOCK_BUILD_WINDOW rows), any B.
  bool converts_on_device() const override { return true; }
  bool device_convertible(const FormatParams& p) const override {
    const int64_t c = p.at("C");
    return c >= 1 && c <= 64 && (c & (c - 1)) == 0 && p.at("B") >= 1;
  }
  FormatData convert_device(DeviceConverter& dc, const FormatParams& p, const TargetInfo& tg) const override;
  std::vector<std::string> device_build_modules() const override { return {"sell_block_build"}; }

 private:
  static void check_params(const CsrRef& a, int64_t c, int64_t b) {
    if (c < 1 || b < 1 || (a.nnz > 0 && b > a.cols))
      fail(SPMV_STATUS_INVALID_VALUE, "sell_block: need C >= 1 and 1 <= B <= cols (B = " + std::to_string(b) +
                                          ", cols = " + std::to_string(a.cols) + ")");
  }
  // Sizes, bytes, facts and launch steps, from `stored` block slots holding `real` blocks
  // (slice_ptr on the host, for CPU parts).
  static void finish(FormatData& d, const CsrRef& a, int64_t c, int64_t b, int64_t slices, int64_t stored,
                     int64_t real, const int64_t* slice_ptr, const TargetInfo& tg);

  template <class I, class V>
  FormatData build(const CsrRef& a, const FormatParams& p, const TargetInfo& tg) const {
    const int64_t c = p.at("C"), b = p.at("B");
    check_params(a, c, b);
    const int64_t slices = ceil_div(a.rows, c);
    HostVector<int64_t> nb(size_t(a.rows));
    for (int64_t r = 0; r < a.rows; ++r) nb[size_t(r)] = count_blocks<I, V>(a, r, b);
    FormatData d;
    d.declare(name(), p, contract_arrays(), a.index, a.value);
    int64_t* slice_ptr = d.make<int64_t>(SELL_BLOCK_SLICE_PTR, slices + 1);
    slice_ptr[0] = 0;
    int64_t real = 0;
    for (int64_t s = 0; s < slices; ++s) {
      int64_t w = 0;
      for (int64_t r = s * c; r < std::min(a.rows, (s + 1) * c); ++r)
        w = std::max(w, nb[size_t(r)]), real += nb[size_t(r)];
      slice_ptr[s + 1] = slice_ptr[s] + w * c;
    }
    const int64_t stored = slice_ptr[slices];
    check_padding("sell_block", stored * b, a.nnz, c * b * slices, sizeof(I) / double(b) + sizeof(V),
                  sizeof(I) == 4);
    I* bc = d.make<I>(SELL_BLOCK_BLOCK_COL, stored);
    V* bv = d.make<V>(SELL_BLOCK_VALUES, stored * b);
    std::fill(bv, bv + stored * b, V(0));
    for (int64_t s = 0; s < slices; ++s) {
      const int64_t w = (slice_ptr[s + 1] - slice_ptr[s]) / c;
      for (int64_t i = 0; i < c; ++i) {
        const int64_t r = s * c + i;
        int64_t j = 0, last = 0;
        if (r < a.rows) {
          RowView<I, V> row(a, r);
          blocks_of_row(row.col, row.len, a.cols, b, [&](int64_t start, int64_t first, int64_t end) {
            bc[slice_ptr[s] + j * c + i] = I(start);
            V* v = bv + b * slice_ptr[s] + j * c * b + i;
            for (int64_t k = first; k < end; ++k) v[(int64_t(row.col[k]) - start) * c] = row.val[k];
            last = start;
            ++j;
          });
        }
        // Padding blocks repeat the row's last block column (in cache) with zero values.
        for (; j < w; ++j) bc[slice_ptr[s] + j * c + i] = I(last);
      }
    }
    finish(d, a, c, b, slices, stored, real, slice_ptr, tg);
    return d;
  }
};

FormatData SellBlockFormat::convert_device(DeviceConverter& dc, const FormatParams& p,
                                           const TargetInfo& tg) const {
  if (!device_convertible(p))
    fail(SPMV_STATUS_UNSUPPORTED, "sell_block: no device conversion for these parameters");
  const CsrRef& a = dc.shape();
  const int64_t c = p.at("C"), b = p.at("B");
  check_params(a, c, b);
  const int64_t slices = ceil_div(a.rows, c), windows = ceil_div(a.rows, SELL_BLOCK_BUILD_WINDOW);
  const char* module = "sell_block_build";
  HostArray sp = dc.alloc(slices + 1, sizeof(int64_t));
  HostArray work = dc.alloc(a.rows + SELL_BLOCK_WORK_SUMS * (windows + 1), sizeof(int64_t));
  int64_t* sums = static_cast<int64_t*>(work.device.get()) + a.rows;  // device addresses
  auto window_sums = [&](int which) { return sums + which * (windows + 1); };
  SpmvArgs g = dc.args();
  g.a[SELL_BLOCK_BUILD_ROW_PTR] = a.row_ptr;
  g.a[SELL_BLOCK_BUILD_COL_IDX_IN] = a.col_idx;
  g.a[SELL_BLOCK_BUILD_VALUES_IN] = a.val;
  g.a[SELL_BLOCK_BUILD_SLICE_PTR] = sp.device.get();
  g.a[SELL_BLOCK_BUILD_WORK] = work.device.get();
  g.n[SELL_BLOCK_BUILD_N_C] = c;
  g.n[SELL_BLOCK_BUILD_N_B] = b;
  g.n[SELL_BLOCK_BUILD_N_WINDOWS] = windows;
  g.n[SELL_BLOCK_BUILD_N_SLICES] = slices;
  // The staged count (templates/gpu/sell_block_build.cu) where a block's warps cooperate.
  const bool staged = dc.cooperative();
  constexpr int kStageWarps = SELL_BLOCK_BUILD_STAGE_WARPS;
  auto count = [&] {
    if (!windows) return;
    if (staged)
      dc.launch(module, "spmvjit_build_count_staged", ceil_div(a.rows, tg.warp_size) * tg.warp_size, g,
                kStageWarps * tg.warp_size);
    else
      dc.launch(module, "spmvjit_build_row_blocks", a.rows, g);
    // One thread per window: small blocks, so a few thousand windows still spread over the device.
    dc.launch(module, "spmvjit_build_sizes", windows, g, 32);
  };
  count();
  // Rows with unsorted columns (the API allows them): their entries' column order, then again.
  dc.exclusive_scan(window_sums(SELL_BLOCK_WORK_UNSORTED), windows);
  HostArray order;
  if (dc.read_i64(window_sums(SELL_BLOCK_WORK_UNSORTED) + windows) > 0) {
    order = dc.alloc(a.nnz, size_of(a.index));
    g.a[SELL_BLOCK_BUILD_ORDER] = order.device.get();
    dc.launch(module, "spmvjit_build_sort_rows", a.rows, g);
    count();
  }
  dc.exclusive_scan(window_sums(SELL_BLOCK_WORK_STORED), windows);
  dc.exclusive_scan(window_sums(SELL_BLOCK_WORK_BLOCKS), windows);
  dc.launch(module, "spmvjit_build_offsets", std::max<int64_t>(windows, 1), g, 32);
  const int64_t stored = dc.read_i64(static_cast<const int64_t*>(sp.device.get()) + slices);
  const int64_t real = dc.read_i64(window_sums(SELL_BLOCK_WORK_BLOCKS) + windows);
  const size_t is = size_of(a.index), vs = size_of(a.value);
  check_padding("sell_block", stored * b, a.nnz, c * b * slices, double(is) / double(b) + double(vs),
                a.index == IndexType::i32);
  HostArray bc = dc.alloc(stored, is), val = dc.alloc(stored * b, vs);
  g.a[SELL_BLOCK_BUILD_BLOCK_COL] = bc.device.get();
  g.a[SELL_BLOCK_BUILD_VALUES] = val.device.get();
  if (slices) dc.launch(module, "spmvjit_build_fill", slices * c, g);
  FormatData d;
  d.declare(name(), p, contract_arrays(), a.index, a.value);
  d.put(SELL_BLOCK_SLICE_PTR, std::move(sp));
  d.put(SELL_BLOCK_BLOCK_COL, std::move(bc));
  d.put(SELL_BLOCK_VALUES, std::move(val));
  finish(d, a, c, b, slices, stored, real, nullptr, tg);
  return d;
}

void SellBlockFormat::finish(FormatData& d, const CsrRef& a, int64_t c, int64_t b, int64_t slices,
                             int64_t stored, int64_t real, const int64_t* slice_ptr, const TargetInfo& tg) {
  d.stored_entries = stored * b;
  d.matrix_bytes = sum_matrix_bytes(d);
  d.ints[SELL_BLOCK_N_SLICES] = slices;
  const int64_t is = int64_t(size_of(a.index));
  const int64_t csr_index = is * (a.rows + 1 + a.nnz), own_index = is * stored + 8 * (slices + 1);
  d.facts = Json::object({{"decomposition", "greedy unaligned"},
                          {"slices", slices},
                          {"blocks", real},
                          {"stored_blocks", stored},
                          {"index_bytes_csr", csr_index},
                          {"index_bytes", own_index},
                          {"index_bytes_saved", csr_index - own_index},
                          {"fill_zeros", real * b - a.nnz},
                          {"padding_zeros", (stored - real) * b}});
  if (tg.backend == BackendKind::cpu) {
    set_cpu_parts(d, SELL_BLOCK_PARTS,
                  split_prefix(slices, tg.threads, [&](int64_t u) { return slice_ptr[u] * b + u * c; }));
  } else if (slices > 0) {
    // One thread per row.
    d.steps.push_back({"spmvjit_part", ceil_div(slices * c, SELL_BLOCK_GPU_BLOCK), SELL_BLOCK_GPU_BLOCK, 0});
  }
}

}  // namespace

SPMVJIT_REGISTER_FORMAT(SellBlockFormat)

}  // namespace spmvjit
