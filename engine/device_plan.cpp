// DevicePlanner: drives the kernels of templates/gpu/device_plan.cu and the formats' build modules.
#include "engine/device_plan.hpp"

#include "engine/value_codec.hpp"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <set>
#include <vector>

#include "core/plan_pool.hpp"
#include "engine/validate.hpp"
#include "engine/value_codec.hpp"
#include "runtime/cache/kernel_cache.hpp"

namespace spmvjit {
#include "templates/contract/csr_adaptive.h"
#include "templates/contract/device_plan.h"

namespace {

constexpr uint64_t kNone = ~uint64_t(0);
static_assert(DP_WIDTHS == MatrixStats::kWidths &&
                  DP_HIST_BINS == int(std::tuple_size_v<decltype(MatrixStats::row_hist)>) &&
                  DP_SHORT_LENGTHS == MatrixStats::kShortLengths &&
                  int(DP_LEN_COUNT) == int(DP_HIST) + int(DP_HIST_BINS),
              "device statistics and MatrixStats disagree");

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// prefetch_pattern pads col_idx to a multiple of this: csr_adaptive's padding, so its plans take
// the prefetched copy too (a request for fewer entries gets the same zeros past nnz).
constexpr int64_t kPatternPad = ADAPTIVE_PAD;

// SPMVJIT_TRACE_SYNC=1 (with SPMVJIT_LOG_LEVEL=trace): each launch of the device planner waits
// for its kernel, so the trace gives every kernel its device time instead of the host's
// enqueue time (the waits then land on later downloads). A diagnosis knob: it slows plans.
bool trace_sync() {
  static const bool on = [] {
    const char* e = std::getenv("SPMVJIT_TRACE_SYNC");
    return e && std::string(e) == "1" && log_enabled(SPMV_LOG_TRACE);
  }();
  return on;
}

}  // namespace

KernelSpec device_module_spec(const TargetInfo& t, const std::string& module, IndexType index,
                              ValueType value) {
  return spec_for(t, module, module, index, value);
}

std::vector<KernelSpec> all_kernel_specs(const TargetInfo& t) {
  std::vector<KernelSpec> out;
  for (ValueType v : {ValueType::f32, ValueType::f64, ValueType::c32, ValueType::c64})
    for (IndexType i : {IndexType::i32, IndexType::i64}) {
      // Complex values: the formats that take them, plain values only, and no device builds (their
      // GPU plans are made on the host).
      const bool complex = is_complex(v);
      std::set<std::string> build_modules;  // several formats may share one (sell and sellp do)
      for (const Format* f : all_formats()) {
        if (!f->supports(t.backend) || !f->supports_value(v)) continue;
        // Each variant with plain values, then compressed (engine/value_codec.hpp).
        for (int codec = SPMVJIT_VALUES_PLAIN;
             codec < (complex ? SPMVJIT_VALUES_PLAIN + 1 : SPMVJIT_VALUES_CODES); ++codec)
          for (FormatParams c : f->kernel_variants(t, v)) {
            if (codec != SPMVJIT_VALUES_PLAIN) c[kValueCodecParam] = codec;
            out.push_back(spec_for(t, f->name(), f->template_name(), i, v, c));
          }
        if (t.gpu() && f->converts_on_device() && !complex)
          for (const std::string& m : f->device_build_modules())
            if (build_modules.insert(m).second) out.push_back(device_module_spec(t, m, i, v));
      }
      if (t.gpu() && !complex) out.push_back(device_module_spec(t, "device_plan", i, v));
      if (t.gpu() && !complex) out.push_back(device_module_spec(t, "value_map", i, v));        // updates
      if (t.gpu() && !complex) out.push_back(device_module_spec(t, "transpose_build", i, v));  // plans of A^T
    }
  return out;
}

DevicePlanner::DevicePlanner(Backend& backend, const CsrRef& input, int base, const std::string& cache_dir)
    : b_(backend), in_(input), base_(base), cache_dir_(cache_dir) {
  SPMVJIT_ASSERT(!backend.is_host(), "device planning on a host backend");
  module("device_plan");  // compiled (or loaded) before any timing starts
  exec_ = b_.make_executor(1);
}

LoadedModule& DevicePlanner::module(const std::string& name) {
  auto& m = modules_[name];
  if (!m) {
    CacheOutcome o;
    m = get_kernel(b_, device_module_spec(b_.target(), name, in_.index, in_.value), cache_dir_, &o);
    compile_s_ += o.compile_seconds;
    load_s_ += o.load_seconds;
  }
  return *m;
}

SpmvArgs DevicePlanner::args() const {
  SpmvArgs a{};
  a.rows = in_.rows;
  a.cols = in_.cols;
  a.n[DP_N_BASE] = base_;
  a.scratch = stats_.get();
  return a;
}

LaunchStep grid_stride_step(const TargetInfo& t, const std::string& entry, int64_t items, int block) {
  const int64_t cap = int64_t(std::max(t.sm_count, 1)) * 2048 / block;
  return LaunchStep{entry, std::clamp<int64_t>(ceil_div(items, block), 1, std::max<int64_t>(cap, 1)), block,
                    0};
}

void DevicePlanner::launch(const std::string& module_name, const std::string& entry, int64_t items,
                           const SpmvArgs& args, int block) {
  trace_.begin();  // device operations log their own time, not the host work before them
  exec_->run(module(module_name).entry(entry), grid_stride_step(b_.target(), entry, items, block), args,
             nullptr);
  if (trace_sync()) b_.synchronize(nullptr);
  trace_.step(entry);
}

HostArray DevicePlanner::alloc(int64_t count, size_t elem) {
  trace_.begin();
  HostArray h;
  h.count = count;
  h.elem = elem;
  h.device = DeviceBuffer(b_, size_t(count) * elem);
  trace_.step("alloc");
  return h;
}

void DevicePlanner::exclusive_scan(void* v, int64_t n) {
  SpmvArgs a = args();
  a.a[DP_SRC] = v;
  a.n[DP_N_COUNT] = n;
  if (n <= DP_SCAN_TILE) {  // one block
    launch("device_plan", "spmvjit_dp_scan", 1, a, DP_SCAN_BLOCK);
    return;
  }
  // Tile sums, their scan (recursively), then every tile from its scanned sum: one block alone
  // took about 1 ms for 2M entries.
  const int64_t tiles = ceil_div(n, DP_SCAN_TILE);
  HostArray sums = alloc(tiles + 1, sizeof(int64_t));
  a.a[DP_DST] = sums.device.get();
  launch("device_plan", "spmvjit_dp_scan_reduce", tiles * DP_SCAN_BLOCK, a, DP_SCAN_BLOCK);
  exclusive_scan(sums.device.get(), tiles);
  launch("device_plan", "spmvjit_dp_scan_apply", tiles * DP_SCAN_BLOCK, a, DP_SCAN_BLOCK);
}

int64_t DevicePlanner::read_i64(const void* p) {
  trace_.begin();
  int64_t v = 0;
  b_.download(&v, p, sizeof v);
  trace_.step("read_i64");
  return v;
}

MatrixStats DevicePlanner::analyze() {
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<uint64_t> v(DP_SLOTS, 0);
  stats_ = DeviceBuffer(b_, sizeof(uint64_t) * DP_SLOTS);
  trace_.step("statistics block");
  SpmvArgs a = args();
  launch("device_plan", "spmvjit_dp_init_stats", DP_SLOTS, a);  // an upload would wait for its copy
  a.a[DP_SRC] = in_.row_ptr;
  a.n[DP_N_COUNT] = in_.nnz;
  // spmvjit_dp_rows reduces over aligned DP_BLOCK-row groups: its block size is fixed. Four
  // blocks per multiprocessor: each block ends in two dozen atomics on the same counters.
  launch("device_plan", "spmvjit_dp_rows",
         std::min<int64_t>(in_.rows, int64_t(std::max(b_.target().sm_count, 1)) * 4 * DP_BLOCK), a, DP_BLOCK);
  a.a[DP_SRC] = in_.col_idx;
  if (in_.nnz) launch("device_plan", "spmvjit_dp_cols", in_.nnz, a);
  // The sample's row lengths and their scan need the sizes alone: queued now, one wait covers
  // them and the statistics (a round trip less). On a defective row_ptr they compute numbers
  // nothing reads: the defect is reported first.
  SampleStart sample = start_sample();
  b_.download(v.data(), stats_.get(), sizeof(uint64_t) * DP_SLOTS);  // waits for the kernels
  trace_.step("statistics download");
  if (v[DP_ERR_ENDS] || v[DP_ERR_ROW] != kNone || v[DP_ERR_COL] != kNone) report_invalid();

  MatrixStats s;
  s.rows = in_.rows;
  s.cols = in_.cols;
  s.nnz = in_.nnz;
  s.row_min = in_.rows ? int64_t(v[DP_ROW_MIN]) : 0;
  s.row_max = int64_t(v[DP_ROW_MAX]);
  s.empty_rows = int64_t(v[DP_EMPTY]);
  for (size_t k = 0; k < s.row_hist.size(); ++k) s.row_hist[k] = int64_t(v[DP_HIST + k]);
  for (size_t k = 0; k < s.len_count.size(); ++k) s.len_count[k] = int64_t(v[DP_LEN_COUNT + k]);
  double sum_sq;
  static_assert(sizeof(double) == sizeof(uint64_t));
  std::memcpy(&sum_sq, &v[DP_SUM_SQ], sizeof sum_sq);
  finish_row_moments(s, sum_sq);
  for (int k = 0; k < MatrixStats::kWidths; ++k) {
    s.slice_width_sum[size_t(k)] = int64_t(v[size_t(DP_WIDTH_SUM + k)]);
    s.lane_idle[size_t(k)] = int64_t(v[size_t(DP_IDLE + k)]);
    s.lane_rem[size_t(k)] = int64_t(v[size_t(DP_REM + k)]);
  }
  s.sample = finish_sample(sample);
  sample_entry_facts(s);
  trace_.step("entry facts");
  s.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return s;
}

// The rows engine/sample.hpp's sample_rows takes on the host, gathered here and copied back (at
// most RowSample::kMaxEntries or so entries): lengths and their scan (start_sample), then the
// entries (finish_sample).
DevicePlanner::SampleStart DevicePlanner::start_sample() {
  static_assert(DP_SAMPLE_GROUP_ROWS == RowSample::kGroupRows, "sample groups differ");
  SampleStart st;
  st.smp = std::make_shared<RowSample>();
  RowSample& smp = *st.smp;
  smp.cols = in_.cols;
  smp.value = in_.value;
  smp.matrix_groups = ceil_div(in_.rows, RowSample::kGroupRows);
  smp.groups = sample_groups(in_.rows, in_.nnz);
  const int64_t n = smp.groups * RowSample::kGroupRows;
  if (n == 0) return st;
  st.offsets = alloc(n + 1, sizeof(int64_t));
  SpmvArgs a = args();
  a.a[DP_SAMPLE_ROW_PTR] = in_.row_ptr;
  a.a[DP_SAMPLE_OFFSETS] = st.offsets.device.get();
  a.n[DP_N_SAMPLE_GROUPS] = smp.groups;
  a.n[DP_N_MATRIX_GROUPS] = smp.matrix_groups;
  launch("device_plan", "spmvjit_dp_sample_lengths", n, a);
  exclusive_scan(st.offsets.device.get(), n);
  return st;
}

std::shared_ptr<const RowSample> DevicePlanner::finish_sample(SampleStart& st) {
  std::shared_ptr<RowSample> smp = std::move(st.smp);
  const int64_t n = smp->groups * RowSample::kGroupRows;
  if (n == 0) {
    mark_ascending(*smp);  // vacuously, as on the host
    return smp;
  }
  const HostArray& off = st.offsets;
  SpmvArgs a = args();
  a.a[DP_SAMPLE_ROW_PTR] = in_.row_ptr;
  a.a[DP_SAMPLE_COL_IDX] = in_.col_idx;
  a.a[DP_SAMPLE_VALUES] = in_.val;
  a.a[DP_SAMPLE_OFFSETS] = off.device.get();
  a.n[DP_N_SAMPLE_GROUPS] = smp->groups;
  a.n[DP_N_MATRIX_GROUPS] = smp->matrix_groups;
  std::vector<int64_t> offsets(size_t(n) + 1);
  b_.download(offsets.data(), off.device.get(), offsets.size() * sizeof(int64_t));
  trace_.step("sample offsets download");
  // A sample of one group of long rows keeps its first rows (sample_kept_rows); the device
  // gathers the whole group, the host copies back the rows kept.
  const int64_t first_rows =
      std::min(RowSample::kGroupRows, in_.rows - sample_group_start(0, smp->groups, smp->matrix_groups));
  const int64_t kept =
      sample_kept_rows(smp->groups, first_rows, [&](int64_t j) { return offsets[size_t(j)]; });
  const int64_t total = offsets.back(), copied = smp->groups == 1 ? offsets[size_t(kept)] : total;
  HostArray cols = alloc(total, sizeof(int64_t)), vals = alloc(total, size_of(in_.value));
  a.a[DP_SAMPLE_COLS] = cols.device.get();
  a.a[DP_SAMPLE_VALS] = vals.device.get();
  if (total)
    launch("device_plan", "spmvjit_dp_sample_gather", n * b_.target().warp_size, a);  // a warp per row
  // The choice's estimates run on the plan pool within a few tenths of a millisecond: its helpers
  // wake now, while the sample comes down, not when the estimates start.
  plan_pool_warm();
  smp->col_idx.resize(size_t(copied));
  smp->values = AlignedBuffer(size_t(copied) * size_of(in_.value));
  b_.download(smp->col_idx.data(), cols.device.get(), size_t(copied) * sizeof(int64_t));
  b_.download(smp->values.data(), vals.device.get(), smp->values.bytes());
  trace_.step("sample entries download (" + std::to_string(copied) + ")");
  // Rows past the matrix's end (only in its last, partial group) are not sample rows.
  for (int64_t g = 0; g < smp->groups; ++g) {
    const int64_t r0 = sample_group_start(g, smp->groups, smp->matrix_groups);
    const int64_t n = smp->groups == 1 ? kept : std::min(RowSample::kGroupRows, in_.rows - r0);
    for (int64_t j = 0; j < n; ++j)
      smp->row_ptr.push_back(offsets[size_t(g * RowSample::kGroupRows + j + 1)]);
    smp->rows += n;
  }
  mark_ascending(*smp);
  trace_.step("sample rows");
  return smp;
}

void DevicePlanner::report_invalid() {
  // The slow path, taken only for a defective matrix: the host validator names the defect.
  const size_t is = size_of(in_.index);
  AlignedBuffer rp(is * size_t(in_.rows + 1)), ci(is * size_t(in_.nnz));
  b_.download(rp.data(), in_.row_ptr, rp.bytes());
  if (in_.nnz) b_.download(ci.data(), in_.col_idx, ci.bytes());
  CsrRef host = in_;
  host.row_ptr = rp.data();
  host.col_idx = ci.data();
  host.val = in_.nnz ? ci.data() : nullptr;  // values are not validated
  validate_csr(host, base_);
  fail(SPMV_STATUS_INTERNAL_ERROR, "device validation found a defect the host validation does not see");
}

void DevicePlanner::prefetch_pattern() {
  pre_row_ptr_ = row_ptr();
  pre_col_idx_ = col_idx(ceil_div(in_.nnz, kPatternPad) * kPatternPad);
}

HostArray DevicePlanner::row_ptr() {
  if (pre_row_ptr_) {
    HostArray h = std::move(*pre_row_ptr_);
    pre_row_ptr_.reset();
    return h;
  }
  HostArray h = alloc(in_.rows + 1, size_of(in_.index));
  SpmvArgs a = args();
  a.a[DP_SRC] = in_.row_ptr;
  a.a[DP_DST] = h.device.get();
  a.n[DP_N_COUNT] = a.n[DP_N_PADDED] = in_.rows + 1;
  launch("device_plan", "spmvjit_dp_copy_index", in_.rows + 1, a);
  return h;
}

HostArray DevicePlanner::col_idx(int64_t padded) {
  SPMVJIT_ASSERT(padded >= in_.nnz, "col_idx padding below nnz");
  if (pre_col_idx_ && padded <= pre_col_idx_->count) {  // zeros past nnz either way
    HostArray h = std::move(*pre_col_idx_);
    pre_col_idx_.reset();
    h.count = padded;
    return h;
  }
  HostArray h = alloc(padded, size_of(in_.index));
  SpmvArgs a = args();
  a.a[DP_SRC] = in_.col_idx;
  a.a[DP_DST] = h.device.get();
  a.n[DP_N_COUNT] = in_.nnz;
  a.n[DP_N_PADDED] = padded;
  if (padded) launch("device_plan", "spmvjit_dp_copy_index", padded, a);
  return h;
}

HostArray DevicePlanner::values(int64_t padded) {
  SPMVJIT_ASSERT(padded >= in_.nnz, "values padding below nnz");
  HostArray h = alloc(padded, size_of(in_.value));
  SpmvArgs a = args();
  a.a[DP_SRC] = in_.val;
  a.a[DP_DST] = h.device.get();
  a.n[DP_N_COUNT] = in_.nnz;
  a.n[DP_N_PADDED] = padded;
  if (padded) launch("device_plan", "spmvjit_dp_copy_values", padded, a);
  return h;
}

}  // namespace spmvjit
