// CSR for k vectors (spmm_execute): the user's CSR arrays, as csr keeps them, read once for all k
// vectors of X and Y; k and the layout are kernel constants (VECTORS, LAYOUT). The planner's
// candidate when a plan multiplies several vectors (Format::multi_vector).
#include <algorithm>
#include <cstdio>
#include <limits>

#include "engine/formats/device_converter.hpp"
#include "engine/formats/format.hpp"
#include "engine/formats/format_a_util.hpp"
#include "engine/formats/gpu_cost.hpp"

namespace spmvjit {
#include "templates/contract/csr_mm.h"

namespace {

// WIDE 0: the fewest lanes per row (GPU row-major: one vector group; column-major: one thread),
// so a warp takes several rows; WIDE 1: a warp's 32 lanes (row-major) or 8 (column-major) share
// a row. A kernel constant the estimate picks from the row lengths.
constexpr const char* kWideParam = "WIDE";
// STAGE_X 1 (column-major X and Y, k up to 32): X copied row-major into the scratch by a
// first step, then the row-major kernel (LAYOUT 1 in the kernel; Y still in the caller's layout,
// args.layout). Not a kernel constant. Worth its copy where rows gather scattered columns: each
// index then reads k values in one run instead of k sectors of k columns (measured on an H100,
// k = 8: random:2000000:1:40 9.0 ms unstaged; docs/PERFORMANCE.md).
constexpr const char* kStageXParam = "STAGE_X";
// Rows gather scattered columns: the sampled rows' distinct diagonals past the statistics' cap.
bool scattered_columns(const MatrixStats& s) { return s.distinct_diagonals() > MatrixStats::kDiagonalCap; }
// CPU: an X of at most this many bytes stays in the caches (a share of a server's L3), where the
// caller's column-major X is gathered as fast as a staged copy and staging only adds the copy
// (measured on a 2-vCPU EPYC VM: rmat:17:16, k = 8, 8 MiB of X, 7.5 ms unstaged, 8.8 staged).
constexpr double kCpuCachedXBytes = 16.0 * (1 << 20);
// Largest staged copy of X (bytes); past it the plan reads X where it is.
constexpr double kMaxStagedBytes = 4.0 * (int64_t(1) << 30);

int64_t param(const FormatParams& p, const char* name, int64_t otherwise) {
  const auto it = p.find(name);
  return it == p.end() ? otherwise : it->second;
}

bool staged_x(const FormatParams& p) { return param(p, kStageXParam, 0) != 0; }
// The kernel's layout: row-major X for the caller's row-major X or a staged copy.
bool kernel_row_major(const FormatParams& p) { return param(p, kLayoutParam, 0) == 1 || staged_x(p); }

// GPU, row-major: lanes of a vector group (templates/contract/csr_mm.h), for values of `vs` bytes.
int64_t vector_lanes(const FormatParams& p, size_t vs) {
  return CSR_MM_VECTOR_LANES(param(p, kVectorsParam, 1), int64_t(vs));
}

// Row-major and one group a whole warp (32 vectors or more of 16-byte values): WIDE 1 would be the
// same kernel.
bool wide_is_narrow(const FormatParams& p, size_t vs) {
  return kernel_row_major(p) && vector_lanes(p, vs) == 32;
}

// GPU lanes per row (the kernel's SPMVJIT_LANES).
int64_t row_lanes(const FormatParams& p, size_t vs) {
  const bool wide = param(p, kWideParam, 0) != 0;
  if (kernel_row_major(p)) return wide ? 32 : vector_lanes(p, vs);
  return wide ? 8 : 1;
}

// GPU nonzeros per chunk of a long row: CSR_MM_CHUNK_PRODUCTS products per warp (k beyond 32
// counted as 32: a pass of vectors).
int64_t chunk_nonzeros(const FormatParams& p) {
  const int64_t k = param(p, kVectorsParam, 1), kk = k == 0 || k > 32 ? 32 : std::max<int64_t>(k, 1);
  return std::max<int64_t>(CSR_MM_MIN_CHUNK, CSR_MM_CHUNK_PRODUCTS / kk);
}

int log2_exact(int64_t v) {
  int l = 0;
  while ((int64_t(1) << (l + 1)) <= v) ++l;
  return l;
}

class CsrMmFormat final : public Format {
 public:
  std::string name() const override { return "csr_mm"; }
  std::span<const ArraySlot> contract_arrays() const override { return kCsrMmArrays; }
  bool keeps_csr_pattern(const FormatParams&) const override { return true; }
  bool supports(BackendKind) const override { return true; }
  // Real and complex: the templates are generic over V (complex sums, shuffles and atomics part by
  // part, alpha and beta through spmvjit_alpha/spmvjit_beta); the estimate counts size_of(value).
  bool supports_value(ValueType) const override { return true; }
  bool multi_vector() const override { return true; }
  std::vector<FormatParams> candidates(const CsrRef&, const MatrixStats&,
                                       const TargetInfo& t) const override {
    if (!t.gpu()) return {FormatParams{}, FormatParams{{kStageXParam, 1}}};
    std::vector<FormatParams> out;
    for (int64_t stage : {0, 1})
      for (int64_t wide : {0, 1})
        out.push_back(stage ? FormatParams{{kWideParam, wide}, {kStageXParam, 1}}
                            : FormatParams{{kWideParam, wide}});
    return out;
  }
  FormatParams kernel_constants(const FormatParams& p) const override {
    FormatParams k = p;
    k.erase(kDeterministicParam);  // a launch choice: no chunks
    k.erase(kStageXParam);         // a launch choice: the kernel reads X row-major either way
    if (staged_x(p)) k[kLayoutParam] = 1;
    return k;
  }
  // GPU: no chunks, so no atomics; every row summed by its own lanes in a fixed order.
  std::string make_deterministic(FormatParams& p, const TargetInfo& t) const override {
    if (t.gpu()) p[kDeterministicParam] = 1;
    return "";
  }
  Estimate estimate(const CsrRef& a, const MatrixStats& s, const FormatParams& p,
                    const TargetInfo& t) const override {
    // k vectors: the matrix once, then per vector a gathered x value per entry (cache lines of
    // row-major X serve several vectors) and y read and written.
    const int64_t k = std::max<int64_t>(1, param(p, kVectorsParam, 1));
    const double vs = double(size_of(a.value));
    Estimate e;
    e.stored_entries = a.nnz;
    e.matrix_bytes = int64_t(size_of(a.index)) * (a.rows + 1 + a.nnz) + int64_t(size_of(a.value)) * a.nnz;
    e.cost_bytes = double(e.matrix_bytes) + 24.0 * double(a.rows) +
                   double(k) * vs * (0.5 * double(a.nnz) + 2.0 * double(a.rows));
    e.reason = "the matrix read once for " + std::to_string(k) + " vectors";
    // Column-major X, rows gathering scattered columns (the sampled rows' distinct diagonals past
    // the statistics' cap): each of a row's column indices touches k 32-byte GPU sectors or 64-byte
    // CPU lines (and, on a CPU, k pages of a large X), one per vector, unless X is staged row-major
    // first (k values in one run).
    const double x_bytes = double(a.cols) * double(k) * vs;
    const bool scattered = scattered_columns(s) && (t.gpu() || x_bytes > kCpuCachedXBytes);
    const double line = t.gpu() ? 32.0 : 64.0;
    if (staged_x(p)) {
      const char* why = param(p, kLayoutParam, 0) == 1 ? "X is row-major already"
                        : param(p, kVectorsParam, 0) == 0
                            ? "more than 32 vectors: X is read in blocks of them"
                        : x_bytes > kMaxStagedBytes ? "a row-major copy of X would take too many bytes"
                                                    : nullptr;
      if (why) {
        e.applicable = false;
        e.reason = why;
        return e;
      }
      e.cost_bytes += 2.0 * x_bytes;  // X read, the copy written
      e.reason += ", X staged row-major";
      // Neighbouring rows reading neighbouring x (a stencil, FEM, a band, dense rows) read the
      // caller's column-major X coalesced (in runs, on a CPU) already: staged, the row-major kernel
      // ran 1.3-2.3x slower there on an H100 (docs/PERFORMANCE.md). The planner's preference, not
      // a limit.
      if (!scattered) {
        e.offered = false;
        e.reason = t.gpu() || !scattered_columns(s)
                       ? "neighbouring rows read X's columns coalesced: X staged only when forced"
                       : "X stays in the caches: X staged only when forced";
      }
    } else if (param(p, kLayoutParam, 0) == 0 && scattered) {
      e.cost_bytes += double(k) * double(a.nnz) * std::max(0.0, line - 0.5 * vs);
    }
    if (!t.gpu()) return e;
    if (param(p, kWideParam, 0) != 0 && wide_is_narrow(p, size_of(a.value))) {
      e.applicable = false;
      e.reason = "WIDE 1 is WIDE 0 for row-major X with one vector group per warp";
      return e;
    }
    // The warp's time against its share of the products. Several rows to a warp (narrow): the
    // longest of them (the statistics' slice maxima over as many rows); a row over many lanes
    // (wide): the lanes its length leaves idle and a shuffle tree per row.
    const int64_t lanes = row_lanes(p, size_of(a.value));
    const bool row_major = kernel_row_major(p);
    const int64_t vl = row_major ? vector_lanes(p, size_of(a.value)) : 1;
    const int64_t per_warp = 32 / lanes, groups = lanes / vl;  // rows per warp; groups per row
    const double nnz = std::max<double>(1.0, double(a.nnz));
    const int wr = std::min(log2_exact(per_warp), MatrixStats::kWidths - 1);
    const int wg = std::min(log2_exact(groups), MatrixStats::kWidths - 1);
    double spread = per_warp > 1 ? double(s.slice_width_sum[size_t(wr)]) * double(per_warp) / nnz : 1.0;
    if (groups > 1)
      spread = std::max(spread, (nnz + double(s.lane_idle[size_t(wg)])) / nnz) +
               double(a.rows) * log2_exact(groups) / nnz;
    // Column-major, a thread per row: each thread walks its row alone, so a warp's loads touch 32
    // rows' lines at once (uncoalesced); past a few entries per row the 8-lane shape reads them
    // coalesced. Measured (H100, k = 8): 8 lanes ran 4-6x faster on rows of 65-81 entries (mean) at
    // 192K-300K rows, where the imbalance terms alone had picked a thread per row.
    if (!row_major && lanes == 1) spread *= std::max(1.0, nnz / std::max<double>(1.0, double(a.rows)) / 8.0);
    e.imbalance = std::max({1.0, spread, gpu_row_starvation(a.rows * lanes, t)});
    char buf[160];
    std::snprintf(buf, sizeof buf, "%s, %lld lanes per row (warp time %.2fx its products)", e.reason.c_str(),
                  (long long)lanes, spread);
    e.reason = buf;
    return e;
  }
  void to_triplets(const FormatData& d, const CsrRef& shape, std::vector<Triplet>& out) const override {
    csr_layout_to_triplets(d, shape, out);
  }
  // Every VECTORS baked_vectors gives (0: any k, in blocks; 1 to 8; 16; 32), in both layouts; on a
  // GPU narrow and wide (where they differ).
  std::vector<FormatParams> kernel_variants(const TargetInfo& t, ValueType value) const override {
    std::vector<FormatParams> out;
    for (int layout = 0; layout < 2; ++layout)
      for (int k = 0; k <= kMaxBakedVectors; ++k) {
        if (baked_vectors(k) != k) continue;
        FormatParams p{{kLayoutParam, layout}, {kVectorsParam, k}};
        if (!t.gpu()) {
          out.push_back(p);
          continue;
        }
        for (int wide = 0; wide < 2; ++wide) {
          p[kWideParam] = wide;
          if (!wide || !wide_is_narrow(p, size_of(value))) out.push_back(p);
        }
      }
    return out;
  }
  bool converts_on_device() const override { return true; }
  std::vector<std::string> device_build_modules() const override { return {"csr_mm_build"}; }
  // The CSR arrays on the device and, as convert cuts them, the chunks of the long rows
  // (templates/gpu/csr_mm_build.cu: count, scan, write).
  FormatData convert_device(DeviceConverter& dc, const FormatParams& p, const TargetInfo& t) const override {
    const CsrRef& a = dc.shape();
    FormatData d;
    d.declare(name(), p, contract_arrays(), a.index, a.value);
    put_device_csr_arrays(d, dc, a.nnz);
    int64_t chunks = 0;
    if (t.gpu() && !deterministic_sums(p) && a.rows > 0) {
      HostArray counts = dc.alloc(a.rows + 1, sizeof(int64_t));
      SpmvArgs g = dc.args();
      g.a[CSR_MM_BUILD_ROW_PTR] = a.row_ptr;
      g.a[CSR_MM_BUILD_COUNTS] = counts.device.get();
      g.n[CSR_MM_BUILD_N_CHUNK] = chunk_nonzeros(p);
      dc.launch("csr_mm_build", "spmvjit_build_count", a.rows, g);
      dc.exclusive_scan(counts.device.get(), a.rows);
      chunks = dc.read_i64(static_cast<const int64_t*>(counts.device.get()) + a.rows);
      if (chunks > 0) {
        HostArray crow = dc.alloc(chunks, size_of(a.index)), cstart = dc.alloc(chunks, size_of(a.index));
        g.a[CSR_MM_BUILD_CHUNK_ROW] = crow.device.get();
        g.a[CSR_MM_BUILD_CHUNK_START] = cstart.device.get();
        dc.launch("csr_mm_build", "spmvjit_build_chunks", a.rows, g);
        d.put(CSR_MM_CHUNK_ROW, std::move(crow));
        d.put(CSR_MM_CHUNK_START, std::move(cstart));
      }
    }
    finish(d, a, p, t, chunks);
    return d;
  }
  FormatData convert(const CsrRef& a, const FormatParams& p, const TargetInfo& t) const override {
    FormatData d;
    d.declare(name(), p, contract_arrays(), a.index, a.value);
    copy_csr_arrays(d, a, a.nnz);
    int64_t chunks = 0;
    if (t.gpu() && !deterministic_sums(p)) {
      // Rows longer than a chunk, cut into chunks (one pass over row_ptr).
      const int64_t ch = chunk_nonzeros(p);
      std::vector<int64_t> crow, cstart;
      for (int64_t r = 0; r < a.rows; ++r)
        if (a.row_len(r) > ch)
          for (int64_t k = a.row_begin(r), e = k + a.row_len(r); k < e; k += ch)
            crow.push_back(r), cstart.push_back(k);
      dispatch_types_complex(a.index, a.value, [&]<class I, class V>() {
        I* out_row = d.make<I>(CSR_MM_CHUNK_ROW, int64_t(crow.size()));
        I* out_start = d.make<I>(CSR_MM_CHUNK_START, int64_t(cstart.size()));
        for (size_t i = 0; i < crow.size(); ++i) out_row[i] = I(crow[i]), out_start[i] = I(cstart[i]);
      });
      chunks = int64_t(crow.size());
    }
    finish(d, a, p, t, chunks);
    return d;
  }

 private:
  static void finish(FormatData& d, const CsrRef& a, const FormatParams& p, const TargetInfo& t,
                     int64_t chunks) {
    d.stored_entries = a.nnz;
    d.matrix_bytes = sum_matrix_bytes(d);
    const int64_t k = param(p, kVectorsParam, 1);
    if (staged_x(p)) {  // X copied row-major first: cols x k values (k's bound; the kernel's exact k)
      d.scratch_bytes = a.cols * k * int64_t(size_of(a.value));
      d.facts["x_staged_bytes"] = d.scratch_bytes;
    }
    if (!t.gpu()) {
      if (staged_x(p)) {  // parts of columns, before the row parts
        d.ints[CSR_MM_N_STAGED] = std::max<int64_t>(1, std::min<int64_t>(t.threads, a.cols));
        d.steps.push_back({"spmvjit_stage_x", d.ints[CSR_MM_N_STAGED], 1, 0});
      }
      set_cpu_parts(d, CSR_MM_PARTS, balance_rows(a, t.threads, 1));
      return;
    }
    d.ints[CSR_MM_N_LONG] = chunks > 0 ? chunk_nonzeros(p) : std::numeric_limits<int64_t>::max();
    d.ints[CSR_MM_N_CHUNK] = chunk_nonzeros(p);
    d.ints[CSR_MM_N_CHUNKS] = chunks;
    d.facts["lanes_per_row"] = row_lanes(p, size_of(a.value));
    d.facts["long_chunks"] = chunks;
    const int64_t rows_per_block = CSR_MM_GPU_BLOCK / row_lanes(p, size_of(a.value));
    const int64_t row_blocks = (a.rows + rows_per_block - 1) / rows_per_block;
    const int64_t chunk_blocks = gpu_grid(chunks, CSR_MM_GPU_BLOCK / t.warp_size);
    // Column-major 16 or 32 vectors: the grids once per slice of 8 vectors (the kernel's kSliced).
    const int64_t slices = !kernel_row_major(p) && k > SPMVJIT_EXACT_VECTORS ? k / CSR_MM_BLOCK_VECTORS : 1;
    d.ints[CSR_MM_N_ROW_BLOCKS] = row_blocks;
    d.ints[CSR_MM_N_CHUNK_BLOCKS] = chunk_blocks;
    if (staged_x(p)) {
      d.ints[CSR_MM_N_STAGED] = 1;
      d.steps.push_back({"spmvjit_stage_x", gpu_grid(a.cols * k, CSR_MM_GPU_BLOCK), CSR_MM_GPU_BLOCK, 0});
    }
    // The row step first: it applies beta to the chunked rows the chunk step adds into.
    d.steps.push_back({"spmvjit_part", row_blocks * slices, CSR_MM_GPU_BLOCK, 0});
    if (chunks > 0) d.steps.push_back({"spmvjit_long", chunk_blocks * slices, CSR_MM_GPU_BLOCK, 0});
  }
};

}  // namespace

SPMVJIT_REGISTER_FORMAT(CsrMmFormat)

}  // namespace spmvjit
