// BSR (block sparse row) with r x c register blocks: block rows of R rows, each block covering C
// columns aligned to a multiple of C and storing all R*C values (zeros where the pattern has
// none). One index serves R*C values, and the kernels unroll a block completely. The shape comes
// from block rows of the statistics' row sample (device-resident input is planned alike): only
// shapes that stream clearly fewer bytes than CSR become candidates, so most matrices get none.
#include <algorithm>
#include <array>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <limits>
#include <memory>
#include <mutex>
#include <type_traits>

#include "core/parallel.hpp"
#include "engine/formats/bsr_blocks.hpp"
#include "engine/formats/device_converter.hpp"
#include "engine/formats/format.hpp"
#include "engine/formats/format_a_util.hpp"
#include "engine/formats/gpu_cost.hpp"
#include "engine/formats/partition.hpp"
#include "engine/formats/slice_util.hpp"

namespace spmvjit {
#include "templates/contract/bsr.h"

namespace {

using namespace bsr_blocks;
using slice_util::ceil_div;

static_assert(kMaxSide == BSR_MAX_SIDE, "the device build walks as many rows per block row");
constexpr size_t kMaxCandidates = 3;
// A shape must stream at most this share of CSR's bytes to be a candidate: one that saves less
// cannot pay for its per-block work (stencil27's 1 x 2 blocks save 1%).
constexpr double kMaxBytesVsCsr = 0.95;
// Cost-model overheads in byte-equivalents, beyond the bytes streamed: per block (loop control,
// index decode) and, on the CPU, per block row (loop setup, the R*C -> R sums, R stores).
constexpr double kPerBlock = 4.0, kPerBlockRow = 16.0, kPerRow = 8.0;

bool valid_side(int64_t n) { return std::find(std::begin(kSides), std::end(kSides), n) != std::end(kSides); }

int64_t next_pow2(double m) {
  int64_t l = 1;
  while (double(l) < m && l < (int64_t(1) << 30)) l <<= 1;
  return l;
}

// The census of one sample, by block height, kept with the sample (RowSample::memo): each
// height is counted once, by estimate_parts' task for it on another planner thread or by the
// first candidates() or estimate() that needs it, and read by every later one.
struct Census {
  std::once_flag once[kMaxSide + 1];
  std::array<Sample, std::size(kSides)> by_height[kMaxSide + 1];
};

const std::array<Sample, std::size(kSides)>& census(const RowSample& smp, int64_t r) {
  Census& c = smp.memo<Census>();
  std::call_once(c.once[r], [&] { c.by_height[r] = sample_widths(smp, r); });
  return c.by_height[r];
}

Sample census_shape(const std::shared_ptr<const RowSample>& smp, int64_t r, int64_t c) {
  const auto* it = std::find(std::begin(kSides), std::end(kSides), c);
  if (!valid_side(r) || it == std::end(kSides)) return sample_shape(*smp, r, c);
  return census(*smp, r)[size_t(it - std::begin(kSides))];
}

class BsrFormat final : public Format {
 public:
  std::string name() const override { return "bsr"; }
  bool supports_value(ValueType) const override { return true; }  // real and complex
  std::span<const ArraySlot> contract_arrays() const override { return kBsrArrays; }
  bool supports(BackendKind) const override { return true; }
  // CPU: time per modeled byte relative to csr, measured with `spmvjit bench --formats csr,bsr,...`
  // (int32/double, 4 alternating timings each, best kept) on this 2-vCPU Zen 5 VM, 2026-11-23:
  // single thread, blockfem:40:B with B = 2 / 3 / 4 (2x2 / 3x3 / 4x4 blocks): 0.77 / 1.19 / 0.94,
  // again 0.80 / 1.09 / 0.82; median 0.88. Two threads gave 0.88-1.33 but were dominated by the
  // shared machine's scheduling (2x2 runs quantized at 4.0 ms). dense:1000 (8x8, in cache):
  // 0.29 and 0.47, left out. Power-of-two widths pay less per byte than 3 and 6.
  double efficiency(const MatrixStats&, const TargetInfo& t) const override { return t.gpu() ? 1.0 : 0.9; }

  // Every height's census, a task each: candidates() reads them (the heights its pruning skips
  // are counted for nothing, on threads that would otherwise wait).
  std::vector<std::function<void()>> estimate_parts(const CsrRef& a, const MatrixStats& s,
                                                    const TargetInfo&) const override {
    if (a.nnz == 0 || !s.sample) return {};
    std::vector<std::function<void()>> parts;
    for (int64_t r : kSides) parts.push_back([smp = s.sample, r] { census(*smp, r); });
    return parts;
  }

  std::vector<FormatParams> candidates(const CsrRef& a, const MatrixStats& s,
                                       const TargetInfo& t) const override {
    if (a.nnz == 0 || !s.sample) return {};
    // Fill only grows from a shape to its multiples (an r x c block holds whole r' x c' blocks
    // when r' | r and c' | c): a sampled shape's fill bounds its multiples' from below, so on
    // irregular matrices a few small shapes rule out all the others.
    double fill[kMaxSide + 1][kMaxSide + 1] = {};
    std::vector<std::pair<double, FormatParams>> ranked;
    for (int64_t r : kSides)
      for (int64_t c : kSides) {
        if (r * c == 1) continue;
        double bound = 1.0;
        for (int64_t r2 : kSides)
          for (int64_t c2 : kSides)
            if (r2 <= r && c2 <= c && r % r2 == 0 && c % c2 == 0 && r2 * c2 < r * c)
              bound = std::max(bound, fill[r2][c2]);
        if (bytes_for_fill(a, r, c, bound) > kMaxBytesVsCsr * csr_bytes(a)) {
          fill[r][c] = bound;
          continue;
        }
        const Sample sm = census_shape(s.sample, r, c);
        if (sm.entries == 0) return {};  // the sample saw only empty rows: no basis to choose
        const double f = double(sm.blocks * r * c) / double(sm.entries);  // as estimate() sees it
        fill[r][c] = std::max(bound, f);
        if (bytes_for_fill(a, r, c, fill[r][c]) > kMaxBytesVsCsr * csr_bytes(a)) continue;
        FormatParams p{{"R", r}, {"C", c}, {"COL_EDGE", a.cols % c != 0}};
        if (t.gpu()) p["G"] = lanes_for(a, r, blocks_for_fill(a, r, c, f), t);
        ranked.push_back({cost(a, p, blocks_for_fill(a, r, c, f), t), p});
      }
    std::stable_sort(ranked.begin(), ranked.end(),
                     [](const auto& x, const auto& y) { return x.first < y.first; });
    std::vector<FormatParams> out;
    for (size_t i = 0; i < ranked.size() && i < kMaxCandidates; ++i) out.push_back(ranked[i].second);
    return out;
  }

  Estimate estimate(const CsrRef& a, const MatrixStats& s, const FormatParams& p,
                    const TargetInfo& t) const override {
    const int64_t r = p.at("R"), c = p.at("C");
    const Sample sm = s.sample ? census_shape(s.sample, r, c) : Sample{};
    const double f = sm.entries ? double(sm.blocks * r * c) / double(sm.entries) : 1.0;
    const int64_t blocks = blocks_for_fill(a, r, c, f);
    const std::string shape = std::to_string(r) + "x" + std::to_string(c);
    Estimate e;
    e.stored_entries = blocks * r * c;
    e.matrix_bytes = int64_t(bytes_for_fill(a, r, c, f));
    e.cost_bytes = cost(a, p, blocks, t);
    e.imbalance =
        t.gpu() ? gpu_row_starvation(ceil_div(a.rows, r) * p.at("G"), t) : row_split_imbalance(s, t);
    if (e.stored_entries > slice_util::kMaxPaddingFactor * a.nnz + r * c) {
      e.applicable = false;
      e.reason = shape + " blocks would store about " + std::to_string(e.stored_entries) + " values for " +
                 std::to_string(a.nnz) + " nonzeros";
    } else {
      char fill[32];
      std::snprintf(fill, sizeof fill, "%.2f", f);
      e.reason = "about " + std::to_string(blocks) + " " + shape + " blocks, fill " + fill + " (sampled)";
    }
    return e;
  }

  // G is not baked on a GPU: its 6 values would make 420 variants per type pair, and NVRTC takes
  // 0.3-0.5 s per kernel (measured on this 2-core machine): 3360 more compiles for sm_80 + sm_90
  // in warmup and in the every-spec NVRTC test (239 s today), past ctest's time limit. As an
  // argument it costs a shift per thread and a shuffle loop that is not unrolled, per block row.
  FormatParams kernel_constants(const FormatParams& p) const override {
    return {{"R", p.at("R")}, {"C", p.at("C")}, {"COL_EDGE", p.at("COL_EDGE")}};
  }

  std::vector<FormatParams> kernel_variants(const TargetInfo&, ValueType) const override {
    std::vector<FormatParams> out;
    for (int64_t r : kSides)
      for (int64_t c : kSides)
        for (int64_t edge : {0, 1})
          if (r * c > 1) out.push_back({{"R", r}, {"C", c}, {"COL_EDGE", edge}});
    return out;
  }

  void to_triplets(const FormatData& d, const CsrRef& shape, std::vector<Triplet>& out) const override {
    const int64_t r = d.params.at("R"), c = d.params.at("C"), block_rows = d.ints[BSR_N_BLOCK_ROWS];
    dispatch_types_complex(shape.index, shape.value, [&]<class I, class V>() {
      const I* bp = d.arrays[BSR_BLOCK_PTR].buf.template as<I>();
      const I* bc = d.arrays[BSR_BLOCK_COL].buf.template as<I>();
      const V* val = d.arrays[BSR_VALUES].buf.template as<V>();
      for (int64_t b = 0; b < block_rows; ++b)
        for (int64_t k = bp[b]; k < bp[b + 1]; ++k)
          for (int64_t i = 0; i < r; ++i)
            for (int64_t j = 0; j < c; ++j)
              if (const V v = val[k * r * c + i * c + j]; v != V(0))
                out.push_back(make_triplet(b * r + i, int64_t(bc[k]) * c + j, v));
    });
  }

  // Blocks of R x C slots, rows in order (update_values' map keeps a bit mask a block).
  bool blocked_values(const FormatData& d, BlockedValues& out) const override {
    const int64_t block_rows = d.ints[BSR_N_BLOCK_ROWS];
    out.array = BSR_VALUES;
    out.r = d.params.at("R");
    out.c = d.params.at("C");
    out.block_ptr.resize(size_t(block_rows) + 1);
    dispatch_index(d.index, [&]<class I>() {
      const I* bp = d.arrays[BSR_BLOCK_PTR].buf.template as<I>();
      for (int64_t b = 0; b <= block_rows; ++b) out.block_ptr[size_t(b)] = int64_t(bp[b]);
    });
    return true;
  }

  // Rows ascend, so a row's entries come block by block (block columns ascend in a block row)
  // and column by column within a block: the held slots of row i, in that order, are its
  // entries. Two passes over the block rows (each row's count, then the positions), balanced by
  // blocks, and a scan of the counts between.
  bool numbers_slots() const override { return true; }
  bool number_slots(const FormatData& d, const CsrRef& shape, const HeldSlots& held, void* const* positions,
                    size_t pos_bytes) const override {
    const int64_t r = d.params.at("R"), c = d.params.at("C"), rc = r * c, rows = shape.rows;
    const int64_t block_rows = d.ints[BSR_N_BLOCK_ROWS];
    const int64_t base = value_slot_bases(d)[BSR_VALUES];
    return dispatch_index(shape.index, [&]<class I>() {
      const I* bp = d.arrays[BSR_BLOCK_PTR].buf.template as<I>();
      const int threads = plan_threads(int64_t(bp[block_rows]) * rc + rows);
      const std::vector<int64_t> split =
          split_prefix(block_rows, threads, [&](int64_t u) { return int64_t(bp[u]) * rc + u * r; });
      SPMVJIT_ASSERT(held.marks(), "bsr numbers its slots from marks");
      const uint8_t* h = held.marks() + base;
      HostVector<int64_t> start(size_t(rows) + 1);
      start[0] = 0;
      std::atomic<bool> ok{true};
      parallel_for(threads, threads, [&](int64_t p0, int64_t, int) {
        bool bad = false;
        for (int64_t b = split[size_t(p0)]; b < split[size_t(p0) + 1]; ++b) {
          int64_t len[kMaxSide] = {};
          for (int64_t q = int64_t(bp[b]) * rc; q < int64_t(bp[b + 1]) * rc; q += rc)
            for (int64_t i = 0; i < r; ++i)
              for (int64_t j = 0; j < c; ++j) len[i] += h[q + i * c + j] != 0;
          for (int64_t i = 0; i < r; ++i) {
            if (b * r + i < rows)
              start[size_t(b * r + i) + 1] = len[i];
            else
              bad |= len[i] != 0;  // the last block row's rows past the matrix hold nothing
          }
        }
        if (bad) ok = false;
      });
      if (!ok) return false;
      parallel_prefix_sum(start.data() + 1, rows);
      if (start[size_t(rows)] != shape.nnz) return false;
      with_position_type(pos_bytes, [&]<class P>() {
        P* out = static_cast<P*>(positions[BSR_VALUES]);
        parallel_for(threads, threads, [&](int64_t p0, int64_t, int) {
          for (int64_t b = split[size_t(p0)]; b < split[size_t(p0) + 1]; ++b) {
            int64_t next[kMaxSide] = {};
            for (int64_t i = 0; i < r && b * r + i < rows; ++i) next[i] = start[size_t(b * r + i)];
            for (int64_t q = int64_t(bp[b]) * rc; q < int64_t(bp[b + 1]) * rc; q += rc)
              for (int64_t i = 0; i < r; ++i)
                for (int64_t j = 0; j < c; ++j) out[q + i * c + j] = h[q + i * c + j] ? P(next[i]++) : P(-1);
          }
        });
      });
      return true;
    });
  }

  FormatData convert(const CsrRef& a, const FormatParams& p, const TargetInfo& t) const override {
    return dispatch_types_complex(a.index, a.value, [&]<class I, class V>() {
      return with_width(p.at("C"), [&](auto cw) { return build<decltype(cw)::value, I, V>(a, p, t); });
    });
  }
  bool converts_codes() const override { return true; }
  FormatData convert_codes(const CsrRef& a, const FormatParams& p, const TargetInfo& t) const override {
    return dispatch_index(a.index, [&]<class I>() {
      return with_width(p.at("C"), [&](auto cw) { return build<decltype(cw)::value, I, uint8_t>(a, p, t); });
    });
  }

  bool converts_on_device() const override { return true; }
  // Every shape the candidates propose on a GPU (G is only the SpMV's lanes per block row).
  bool device_convertible(const FormatParams& p) const override {
    const int64_t g = p.count("G") ? p.at("G") : 0;
    return p.count("R") && p.count("C") && p.count("COL_EDGE") && valid_side(p.at("R")) &&
           valid_side(p.at("C")) && p.at("R") * p.at("C") > 1 && g >= 1 && (g & (g - 1)) == 0;
  }
  std::vector<std::string> device_build_modules() const override { return {"bsr_build"}; }
  // A block row without fill needs no map (templates/gpu/bsr_build.cu, spmvjit_update_gather).
  bool device_gather(const FormatData& d, DeviceGather& out) const override {
    const int64_t block_rows = d.ints[BSR_N_BLOCK_ROWS];
    out.module = "bsr_build";
    out.entry = "spmvjit_update_gather";
    out.layout = {BSR_BLOCK_PTR};
    out.params = {d.params.at("R"), d.params.at("C"), block_rows};
    out.items = block_rows * BSR_UPD_LANES;
    out.block = BSR_UPD_BLOCK;
    static_assert(int(BSR_UPD_BLOCK_PTR) == int(VG_LAYOUT0) && int(BSR_UPD_N_R) == int(VG_N_PARAM0) &&
                  int(BSR_UPD_N_C) == VG_N_PARAM0 + 1 && int(BSR_UPD_N_BLOCK_ROWS) == VG_N_PARAM0 + 2);
    return true;
  }
  // Each block row's blocks are counted, the counts scanned into block_ptr, and the blocks
  // written (templates/gpu/bsr_build.cu: a warp per block row, or a thread where rows are out
  // of order, repeat a column, or hold many blocks). Rows out of column order (rare) are sorted
  // first, into an order array allocated only when there are some.
  FormatData convert_device(DeviceConverter& dc, const FormatParams& p, const TargetInfo& t) const override {
    const CsrRef& a = dc.shape();
    if (!device_convertible(p) || !t.gpu())
      fail(SPMV_STATUS_UNSUPPORTED, "bsr: no device conversion for these parameters");
    check_params(a, p, t);
    const int64_t r = p.at("R"), c = p.at("C"), rc = r * c, block_rows = ceil_div(a.rows, r);
    const size_t is = size_of(a.index), vs = size_of(a.value);
    FormatData d;
    d.declare(name(), p, contract_arrays(), a.index, a.value);
    // counts[block_rows] counts the block rows with a row out of order until the scan puts the
    // total there; the block rows' regular flags follow (templates/contract/bsr.h).
    HostArray counts = dc.alloc(2 * block_rows + 1, sizeof(int64_t)), order;
    int64_t* const total = static_cast<int64_t*>(counts.device.get()) + block_rows;
    SpmvArgs g = dc.args();
    g.a[BSR_BUILD_ROW_PTR] = a.row_ptr;
    g.a[BSR_BUILD_COL_IDX_IN] = a.col_idx;
    g.a[BSR_BUILD_VALUES_IN] = a.val;
    g.a[BSR_BUILD_COUNTS] = counts.device.get();
    g.n[BSR_BUILD_N_R] = r;
    g.n[BSR_BUILD_N_C] = c;
    g.n[BSR_BUILD_N_BLOCK_ROWS] = block_rows;
    // Threads per row for the regular check: the mean row length, up to a warp.
    g.n[BSR_BUILD_N_LANES_LOG2] = ceil_log2(std::clamp<int64_t>(a.nnz / std::max<int64_t>(a.rows, 1), 1, 32));
    // A warp per block row where the device's lanes cooperate (a thread per block row walked
    // 0.4 and 1.4 ms on blockfem:40:3, H200), else a thread per block row.
    const bool warp = dc.cooperative();
    const std::string count = warp ? "spmvjit_build_count_warp" : "spmvjit_build_count";
    const std::string write = warp ? "spmvjit_build_write_warp" : "spmvjit_build_write";
    const int block = warp ? t.warp_size : 64;
    const int64_t per_block_row = warp ? t.warp_size : 1;
    if (block_rows) {
      dc.exclusive_scan(total, 0);  // an empty scan writes its total, 0
      // Regular block rows first (flagged and counted), then the count of the others. On
      // blockfem:40:3 (3 x 3, every block row regular) the warps' count and write passes took
      // 0.20 and 0.33 ms (H200), the regular passes 0.14 (rows and entries) and 0.11.
      dc.launch("bsr_build", "spmvjit_build_regular_rows", block_rows, g);
      if (a.nnz)
        dc.launch("bsr_build", "spmvjit_build_regular_entries", a.rows << g.n[BSR_BUILD_N_LANES_LOG2], g);
      dc.launch("bsr_build", count, block_rows * per_block_row, g, block);
      if (dc.read_i64(total)) {
        order = dc.alloc(a.nnz, is);
        g.a[BSR_BUILD_ORDER] = order.device.get();
        dc.launch("bsr_build", "spmvjit_build_order", a.rows, g, 64);
        dc.launch("bsr_build", count, block_rows * per_block_row, g, block);
      }
    }
    dc.exclusive_scan(counts.device.get(), block_rows);
    const int64_t blocks = dc.read_i64(total);
    slice_util::check_padding("bsr", blocks * rc, a.nnz, rc, double(is) / double(rc) + double(vs), false);
    d.put(BSR_BLOCK_PTR, dc.alloc(block_rows + 1, is));
    d.put(BSR_BLOCK_COL, dc.alloc(blocks, is));
    d.put(BSR_VALUES, dc.alloc(blocks * rc, vs));
    g.a[BSR_BUILD_BLOCK_PTR] = d.arrays[BSR_BLOCK_PTR].device.get();
    g.a[BSR_BUILD_BLOCK_COL] = d.arrays[BSR_BLOCK_COL].device.get();
    g.a[BSR_BUILD_VALUES] = d.arrays[BSR_VALUES].device.get();
    if (block_rows) dc.launch("bsr_build", "spmvjit_build_write_regular", block_rows * BSR_BUILD_LANES, g);
    dc.launch("bsr_build", write, std::max<int64_t>(block_rows, 1) * per_block_row, g, block);
    finish(d, a, p, block_rows, blocks, t);
    return d;
  }

 private:
  static double csr_bytes(const CsrRef& a) {
    const double is = double(size_of(a.index)), vs = double(size_of(a.value));
    return double(a.nnz) * (is + vs) + double(a.rows + 1) * is;
  }
  static int64_t blocks_for_fill(const CsrRef& a, int64_t r, int64_t c, double fill) {
    return int64_t(fill * double(a.nnz) / double(r * c) + 0.5);
  }
  // Bytes one SpMV streams: an index and R*C values per block, a block pointer per block row.
  static double bytes_for_fill(const CsrRef& a, int64_t r, int64_t c, double fill) {
    const double is = double(size_of(a.index)), vs = double(size_of(a.value));
    return fill * double(a.nnz) / double(r * c) * (is + double(r * c) * vs) +
           double(ceil_div(a.rows, r) + 1) * is;
  }
  // Lanes per block row on a GPU: the mean blocks per block row, rounded up to a power of two.
  static int64_t lanes_for(const CsrRef& a, int64_t r, int64_t blocks, const TargetInfo& t) {
    const double mean = double(blocks) / double(std::max<int64_t>(1, ceil_div(a.rows, r)));
    return std::clamp<int64_t>(next_pow2(mean), 1, std::max(1, t.warp_size));
  }
  static double cost(const CsrRef& a, const FormatParams& p, int64_t blocks, const TargetInfo& t) {
    const int64_t r = p.at("R"), c = p.at("C");
    const double block_rows = double(ceil_div(a.rows, r));
    const double bytes =
        bytes_for_fill(a, r, c, double(blocks * r * c) / double(std::max<int64_t>(a.nnz, 1)));
    if (!t.gpu())
      return bytes + kPerBlock * double(blocks) + kPerBlockRow * block_rows + kPerRow * double(a.rows);
    // log2(G) + 1 shuffle steps for each of R sums per block row; idle lanes of the last step
    // still take issue slots (about one entry each, as csr_vector counts them).
    const int64_t g = p.at("G");
    const double mean = double(blocks) / std::max(1.0, block_rows);
    const double idle = (std::ceil(mean / double(g)) * double(g) - mean) * block_rows;
    return bytes + kPerBlock * double(blocks) + 8.0 * double(ceil_log2(g) + 1) * double(r) * block_rows +
           double(size_of(a.index) + size_of(a.value)) * idle;
  }

  static void check_params(const CsrRef& a, const FormatParams& p, const TargetInfo& t) {
    const int64_t r = p.at("R"), c = p.at("C");
    if (!valid_side(r) || !valid_side(c) || r * c == 1 || (p.at("COL_EDGE") != 0 && p.at("COL_EDGE") != 1) ||
        (a.cols % c != 0 && p.at("COL_EDGE") == 0))
      fail(SPMV_STATUS_INVALID_VALUE,
           "bsr: R and C in {1, 2, 3, 4, 6, 8}, not both 1, and COL_EDGE = (cols % C != 0); got " +
               params_json(p).dump() + " for " + std::to_string(a.cols) + " columns");
    if (t.gpu()) {
      const int64_t g = p.count("G") ? p.at("G") : 0;
      if (g < 1 || (g & (g - 1)) || g > t.warp_size)
        fail(SPMV_STATUS_INVALID_VALUE,
             "bsr: G must be a power of two <= the warp size, got " + std::to_string(g));
    }
  }

  // Block rows whose rows all strictly ascend (nearly every matrix) take a marks pass: each
  // thread tags the block columns it meets with the block row's number, so a block column's
  // first entry counts it and, in the write pass, gives its place. The rest go through
  // walk_blocks, which sorts rows and keeps repeated columns apart. Both give the same layout;
  // the marks made blockfem:20:3's conversion (1.8M entries, 3 x 3) about twice as fast on the
  // 2-vCPU VM (docs/PERFORMANCE.md).
  template <int64_t C, class I, class V>
  FormatData build(const CsrRef& a, const FormatParams& p, const TargetInfo& t) const {
    check_params(a, p, t);
    const int64_t r = p.at("R"), rc = r * C;
    const int64_t block_rows = ceil_div(a.rows, r), block_cols = ceil_div(a.cols, C);
    const int threads = plan_threads(a.nnz + a.rows);
    const I* rp = a.rp<I>();
    const I* ci = a.ci<I>();
    const V* av = a.vals<V>();
    TraceSteps trace("bsr build");
    // Pass 1: blocks per block row, and each block row's block columns in order of appearance,
    // written where its entries start in `lists` (one slot per entry: a block row has no more
    // blocks than entries), so pass 2 reads the columns once, to place the values. `merged` marks
    // the block rows walk_blocks must take.
    std::vector<int64_t> count(size_t(block_rows) + 1, 0);
    std::vector<uint8_t> merged(size_t(block_rows), 0);
    AlignedBuffer lists(sizeof(I) * size_t(std::max<int64_t>(a.nnz, 1)));
    // The marks cost two arrays of block columns a thread: with far more block columns than
    // entries and rows (a few entries over 2^31 columns), every block row is walked instead.
    const bool marks = block_cols <= 4 * (a.nnz + a.rows) + 65536;
    // A regular block row (every one of its R rows holds the same L columns, in aligned runs of
    // C consecutive ones, strictly ascending: most block FEM and dense matrices) has L / C blocks
    // without fill, each a run: its blocks are counted from its first row and its values copied
    // a run at a time (merged = kRegular). The marks took 1.4 and 2.1 ms of dense:1000's 8 x 8
    // conversion on the 2-vCPU VM.
    constexpr uint8_t kWalk = 1, kRegular = 2;
    auto regular_blocks = [&](int64_t b) -> int64_t {
      const int64_t first = b * r;
      if (first + r > a.rows) return -1;
      const int64_t k0 = int64_t(rp[first]), len = int64_t(rp[first + 1]) - k0;
      if (len % C) return -1;
      for (int64_t i = 1; i < r; ++i)
        if (int64_t(rp[first + i + 1]) - int64_t(rp[first + i]) != len) return -1;
      const I* c0 = ci + k0;
      for (int64_t q = 0; q < len; q += C) {
        const int64_t start = int64_t(c0[q]);
        if (start % C || (q > 0 && start <= int64_t(c0[q - 1]))) return -1;
        for (int64_t j = 1; j < C; ++j)
          if (int64_t(c0[q + j]) != start + j) return -1;
      }
      for (int64_t i = 1; i < r; ++i)
        if (!std::equal(c0, c0 + len, c0 + i * len)) return -1;
      return len / C;
    };
    parallel_for(block_rows, threads, [&](int64_t b0, int64_t b1, int) {
      std::vector<int64_t> tag(static_cast<size_t>(marks ? block_cols : 0), -1);
      BlockRowView<I, V> w;
      for (int64_t b = b0; b < b1; ++b) {
        if (const int64_t nb = regular_blocks(b); nb >= 0) {
          merged[size_t(b)] = kRegular;
          count[size_t(b) + 1] = nb;
          continue;
        }
        int64_t n = 0;
        bool ascending = marks;
        I* list = lists.as<I>() + int64_t(rp[b * r]);
        for (int64_t row = b * r; row < std::min(a.rows, (b + 1) * r); ++row) {
          const int64_t k0 = int64_t(rp[row]), k1 = int64_t(rp[row + 1]);
          // A row's entries of one block column come one after another: the mark is read and
          // written once per run, not per entry (a store the next entry's load waited on).
          int64_t prev = -1, last = -1;
          for (int64_t k = k0; marks && k < k1; ++k) {
            const int64_t c = int64_t(ci[k]), q = c / C;
            ascending &= c > prev;
            prev = c;
            if (q != last) {
              last = q;
              if (tag[size_t(q)] != b) list[n++] = I(q);
              tag[size_t(q)] = b;
            }
          }
        }
        if (!ascending) {
          merged[size_t(b)] = kWalk;
          w.load(a, b * r, r);
          n = walk_blocks<C>(
              w, [](int64_t, int, int64_t, V) {}, [](int64_t, int64_t) {});
        }
        count[size_t(b) + 1] = n;
      }
    });
    for (int64_t b = 0; b < block_rows; ++b) count[size_t(b) + 1] += count[size_t(b)];
    const int64_t blocks = count[size_t(block_rows)];
    trace.step("count blocks");
    // Refused before the arrays exist. Every block holds an entry, so blocks <= nnz fits I.
    slice_util::check_padding("bsr", blocks * rc, a.nnz, rc,
                              double(sizeof(I)) / double(rc) + double(size_of(a.value)), false);
    FormatData d;
    d.declare(name(), p, contract_arrays(), a.index, a.value);
    I* bp = d.make<I>(BSR_BLOCK_PTR, block_rows + 1);
    I* bc = d.make<I>(BSR_BLOCK_COL, blocks);
    V* bv = d.make<V>(BSR_VALUES, blocks * rc);
    // Pass 2: each block row zeroes its own values (first touch by the thread that fills them),
    // then scatters its entries.
    // Zero values placed by the marks pass, each in a slot of its own (d.nonzero_slots).
    std::atomic<int64_t> zero_values{0};
    std::atomic<bool> any_merged{false};
    parallel_for(block_rows + 1, threads, [&](int64_t b0, int64_t b1, int) {
      std::vector<int64_t> place(static_cast<size_t>(marks ? block_cols : 0));
      BlockRowView<I, V> w;
      int64_t zeros = 0;
      for (int64_t b = b0; b < b1; ++b) {
        bp[b] = I(count[size_t(b)]);
        if (b == block_rows) break;
        I* col = bc + count[size_t(b)];
        V* val = bv + count[size_t(b)] * rc;
        const int64_t first = b * r, last = std::min(a.rows, first + r);
        const int64_t slots = (count[size_t(b) + 1] - count[size_t(b)]) * rc;
        // Zeros where the entries leave slots empty; rows in strict column order that fill every
        // slot (dense blocks: FEM, dense rows) write each slot once (8 MB less on dense:1000).
        if (merged[size_t(b)] == kRegular) {
          const int64_t nb = slots / rc, len = nb * C, k0 = int64_t(rp[first]);
          for (int64_t j = 0; j < nb; ++j) col[j] = I(int64_t(ci[k0 + j * C]) / C);
          for (int64_t i = 0; i < r; ++i) {
            const V* src = av + k0 + i * len;
            for (int64_t j = 0; j < nb; ++j)
              for (int64_t c = 0; c < C; ++c) {
                const V v = src[j * C + c];
                val[j * rc + i * C + c] = v;
                zeros += v == V(0);
              }
          }
          continue;
        }
        if (merged[size_t(b)] == kWalk || int64_t(rp[last]) - int64_t(rp[first]) != slots)
          std::fill(val, val + slots, V(0));
        if (merged[size_t(b)] == kWalk) {
          any_merged.store(true, std::memory_order_relaxed);
          w.load(a, b * r, r);
          walk_blocks<C>(
              w, [&](int64_t k, int i, int64_t j, V v) { val[k * rc + i * C + j] = v; },
              [&](int64_t k, int64_t c) { col[k] = I(c); });
          continue;
        }
        // The block columns in order of appearance (pass 1's list): each row's ascend, so the
        // list is a few ascending runs (usually one); short lists finish with an insertion sort.
        const int64_t nb = count[size_t(b) + 1] - count[size_t(b)];
        const I* list = lists.as<I>() + int64_t(rp[first]);
        std::copy(list, list + nb, col);
        if (nb > 64)
          std::sort(col, col + nb);
        else
          for (int64_t i = 1; i < nb; ++i)
            for (int64_t j = i; j > 0 && col[j - 1] > col[j]; --j) std::swap(col[j - 1], col[j]);
        for (int64_t j = 0; j < nb; ++j) place[size_t(col[j])] = j * rc;
        for (int64_t row = first; row < last; ++row) {
          V* out = val + (row - first) * C;
          int64_t run = -1, shift = 0;  // out[shift + c] is column c's slot in block column `run`
          for (int64_t k = int64_t(rp[row]); k < int64_t(rp[row + 1]); ++k) {
            const int64_t c = int64_t(ci[k]), q = c / C;
            if (q != run) run = q, shift = place[size_t(q)] - q * C;
            out[shift + c] = av[k];
            zeros += av[k] == V(0);
          }
        }
      }
      zero_values += zeros;
    });
    if (!any_merged.load()) d.nonzero_slots = a.nnz - zero_values.load();
    trace.step("place entries");
    finish(d, a, p, block_rows, blocks, t);
    if (t.backend == BackendKind::cpu)
      set_cpu_parts(d, BSR_PARTS,
                    split_prefix(block_rows, t.threads, [&](int64_t u) { return count[size_t(u)] + u; }));
    return d;
  }
  // Sizes, bytes and facts; the GPU launch (G threads per block row).
  static void finish(FormatData& d, const CsrRef& a, const FormatParams& p, int64_t block_rows,
                     int64_t blocks, const TargetInfo& t) {
    const int64_t rc = p.at("R") * p.at("C");
    d.stored_entries = blocks * rc;
    d.matrix_bytes = sum_matrix_bytes(d);
    d.ints[BSR_N_BLOCK_ROWS] = block_rows;
    d.ints[BSR_N_GROUP_LOG2] = t.gpu() ? ceil_log2(p.at("G")) : 0;
    const int64_t is = int64_t(size_of(a.index));
    const int64_t csr_index = is * (a.rows + 1 + a.nnz), own_index = is * (block_rows + 1 + blocks);
    d.facts = Json::object({{"block_rows", block_rows},
                            {"blocks", blocks},
                            {"fill_zeros", blocks * rc - a.nnz},
                            {"index_bytes_csr", csr_index},
                            {"index_bytes", own_index},
                            {"index_bytes_saved", csr_index - own_index}});
    if (t.gpu())
      d.steps.push_back({"spmvjit_part", gpu_grid(block_rows * p.at("G"), BSR_GPU_BLOCK), BSR_GPU_BLOCK, 0});
  }
};

}  // namespace

SPMVJIT_REGISTER_FORMAT(BsrFormat)

}  // namespace spmvjit
