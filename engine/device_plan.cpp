// DevicePlanner: drives the kernels of templates/gpu/device_plan.cu.
#include "engine/device_plan.hpp"

#include <algorithm>
#include <chrono>
#include <vector>

#include "core/log.hpp"
#include "engine/formats/adaptive_layout.hpp"
#include "engine/formats/slice_util.hpp"
#include "engine/validate.hpp"
#include "runtime/cache/kernel_cache.hpp"

namespace spmvjit {
namespace {

// Slots of the statistics block: must match dp::Slot in templates/gpu/device_plan.cu.
enum Slot {
  kErrRow = 0,
  kErrEnds = 1,
  kErrCol = 2,
  kRowMin = 3,
  kRowMax = 4,
  kEmpty = 5,
  kLongRows = 6,
  kLongChunks = 7,
  kBlocks = 8,
  kSumSq = 9,
  kWidthSum = 10,
  kIdle = 17,
  kRem = 24,
  kHist = 31,
  kSlots = 79
};
constexpr uint64_t kNone = ~uint64_t(0);
// Threads per block of the one-thread-per-window passes: small, so a few thousand windows still
// spread over every multiprocessor.
constexpr int kWindowBlock = 32;

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

}  // namespace

KernelSpec device_plan_spec(const Backend& backend, IndexType index, ValueType value) {
  return spec_for(backend.target(), "device_plan", "device_plan", index, value);
}

std::shared_ptr<void> device_alloc(Backend& backend, size_t bytes) {
  if (!bytes) return nullptr;
  Backend* b = &backend;  // backends live for the whole process
  return std::shared_ptr<void>(b->alloc(bytes), [b](void* p) {
    try {
      b->free(p);
    } catch (const std::exception& e) {
      log_warn(std::string("plan: freeing device memory failed: ") + e.what());
    }
  });
}

DevicePlanner::DevicePlanner(Backend& backend, const CsrRef& input, int base, const std::string& cache_dir)
    : b_(backend), in_(input), base_(base) {
  SPMVJIT_ASSERT(!backend.is_host(), "device planning on a host backend");
  CacheOutcome o;
  module_ = get_kernel(b_, device_plan_spec(b_, in_.index, in_.value), cache_dir, &o);
  compile_s_ = o.compile_seconds;
  load_s_ = o.load_seconds;
  exec_ = b_.make_executor(1);
}

SpmvArgs DevicePlanner::args() const {
  SpmvArgs a{};
  a.rows = in_.rows;
  a.cols = in_.cols;
  a.n[7] = base_;
  a.scratch = stats_.get();
  return a;
}

void DevicePlanner::launch(const char* entry, int64_t items, const SpmvArgs& args, int block) {
  // Grid-stride kernels: enough blocks to fill the device, never more than the items need.
  const int64_t cap = int64_t(std::max(b_.target().sm_count, 1)) * 2048 / block;
  const LaunchStep step{entry, std::clamp<int64_t>(ceil_div(items, block), 1, std::max<int64_t>(cap, 1)),
                        block, 0};
  exec_->run(module_->entry(entry), step, args, nullptr);
}

HostArray DevicePlanner::alloc(const std::string& name, int64_t count, size_t elem, bool values) {
  HostArray h;
  h.name = name;
  h.count = count;
  h.elem = elem;
  h.kind = values ? ArrayKind::value : ArrayKind::index;
  h.device = device_alloc(b_, size_t(count) * elem);
  return h;
}

MatrixStats DevicePlanner::analyze() {
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<uint64_t> v(kSlots, 0);
  v[kErrRow] = v[kErrCol] = v[kRowMin] = kNone;
  stats_ = device_alloc(b_, sizeof(uint64_t) * kSlots);
  b_.upload(stats_.get(), v.data(), sizeof(uint64_t) * kSlots);
  SpmvArgs a = args();
  a.a[0] = in_.row_ptr;
  a.a[1] = in_.col_idx;
  a.n[0] = in_.nnz;
  // spmvjit_dp_rows reduces over aligned 256-row groups: its block size is fixed.
  launch("spmvjit_dp_rows", in_.rows, a, 256);
  if (in_.nnz) launch("spmvjit_dp_cols", in_.nnz, a);
  windows_ = ceil_div(in_.rows, adaptive_layout::kWindow);
  win_blocks_ = device_alloc(b_, sizeof(int64_t) * size_t(windows_ + 1));
  win_chunks_ = device_alloc(b_, sizeof(int64_t) * size_t(windows_ + 1));
  if (windows_) {
    a.a[1] = win_blocks_.get();
    a.a[2] = win_chunks_.get();
    a.n[1] = windows_;
    launch("spmvjit_dp_adaptive_count", windows_, a, kWindowBlock);
  }
  b_.download(v.data(), stats_.get(), sizeof(uint64_t) * kSlots);  // waits for the kernels
  if (v[kErrEnds] || v[kErrRow] != kNone || v[kErrCol] != kNone) report_invalid();

  MatrixStats s;
  s.rows = in_.rows;
  s.cols = in_.cols;
  s.nnz = in_.nnz;
  s.row_min = in_.rows ? int64_t(v[kRowMin]) : 0;
  s.row_max = int64_t(v[kRowMax]);
  s.empty_rows = int64_t(v[kEmpty]);
  for (size_t k = 0; k < s.row_hist.size(); ++k) s.row_hist[k] = int64_t(v[kHist + k]);
  double sum_sq;
  static_assert(sizeof(double) == sizeof(uint64_t));
  std::memcpy(&sum_sq, &v[kSumSq], sizeof sum_sq);
  finish_row_moments(s, sum_sq);
  s.entry_facts = false;
  for (int k = 0; k < MatrixStats::kWidths; ++k) {
    s.slice_width_sum[size_t(k)] = int64_t(v[size_t(kWidthSum + k)]);
    s.lane_idle[size_t(k)] = int64_t(v[size_t(kIdle + k)]);
    s.lane_rem[size_t(k)] = int64_t(v[size_t(kRem + k)]);
  }
  s.long_rows = int64_t(v[kLongRows]);
  s.long_chunks = int64_t(v[kLongChunks]);
  s.adaptive_blocks = int64_t(v[kBlocks]);
  s.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  analyzed_ = true;
  return s;
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

HostArray DevicePlanner::row_ptr() {
  HostArray h = alloc("row_ptr", in_.rows + 1, size_of(in_.index));
  SpmvArgs a = args();
  a.a[0] = in_.row_ptr;
  a.a[1] = h.device.get();
  a.n[0] = a.n[1] = in_.rows + 1;
  launch("spmvjit_dp_copy_index", in_.rows + 1, a);
  return h;
}

HostArray DevicePlanner::col_idx(int64_t padded) {
  SPMVJIT_ASSERT(padded >= in_.nnz, "col_idx padding below nnz");
  HostArray h = alloc("col_idx", padded, size_of(in_.index));
  SpmvArgs a = args();
  a.a[0] = in_.col_idx;
  a.a[1] = h.device.get();
  a.n[0] = in_.nnz;
  a.n[1] = padded;
  if (padded) launch("spmvjit_dp_copy_index", padded, a);
  return h;
}

HostArray DevicePlanner::values(int64_t padded) {
  SPMVJIT_ASSERT(padded >= in_.nnz, "values padding below nnz");
  HostArray h = alloc("values", padded, size_of(in_.value), true);
  SpmvArgs a = args();
  a.a[0] = in_.val;
  a.a[1] = h.device.get();
  a.n[0] = in_.nnz;
  a.n[1] = padded;
  a.n[7] = 0;
  if (padded) launch("spmvjit_dp_copy_values", padded, a);
  return h;
}

AdaptiveCounts DevicePlanner::adaptive_layout(HostArray& blocks, HostArray& chunk_row, HostArray& chunk_start,
                                              HostArray& block_nnz) {
  SPMVJIT_ASSERT(analyzed_, "adaptive_layout before analyze");
  SpmvArgs a = args();
  a.n[0] = windows_;
  for (void* counts : {win_blocks_.get(), win_chunks_.get()}) {
    a.a[0] = counts;
    launch("spmvjit_dp_scan", 1, a, 1024);
  }
  int64_t nb = 0, nc = 0;
  b_.download(&nb, static_cast<int64_t*>(win_blocks_.get()) + windows_, sizeof nb);
  b_.download(&nc, static_cast<int64_t*>(win_chunks_.get()) + windows_, sizeof nc);
  const size_t is = size_of(in_.index);
  blocks = alloc("row_blocks", nb + 1, is);
  chunk_row = alloc("chunk_row", nc, is);
  chunk_start = alloc("chunk_start", nc, is);
  block_nnz = alloc("block_nnz", nb + 1, is);
  a = args();
  a.a[0] = in_.row_ptr;
  a.a[1] = win_blocks_.get();
  a.a[2] = win_chunks_.get();
  a.a[3] = blocks.device.get();
  a.a[4] = chunk_row.device.get();
  a.a[5] = chunk_start.device.get();
  a.a[6] = block_nnz.device.get();
  a.n[0] = in_.nnz;
  a.n[1] = windows_;
  launch("spmvjit_dp_adaptive_write", std::max<int64_t>(windows_, 1), a, kWindowBlock);
  int64_t long_rows = 0;
  b_.download(&long_rows, static_cast<uint64_t*>(stats_.get()) + kLongRows, sizeof long_rows);
  return {nb, long_rows, nc};
}

void DevicePlanner::sell(int64_t c, HostArray& slice_ptr, HostArray& col_idx, HostArray& values) {
  SPMVJIT_ASSERT(c >= 1 && c <= 64 && (c & (c - 1)) == 0, "device SELL needs C a power of two <= 64");
  const int64_t slices = ceil_div(in_.rows, c), windows = ceil_div(in_.rows, adaptive_layout::kWindow);
  slice_ptr = alloc("slice_ptr", slices + 1, sizeof(int64_t));
  std::shared_ptr<void> wsum = device_alloc(b_, sizeof(int64_t) * size_t(windows + 1));
  SpmvArgs a = args();
  a.a[0] = in_.row_ptr;
  a.a[1] = slice_ptr.device.get();
  a.a[2] = wsum.get();
  a.n[0] = c;
  a.n[1] = windows;
  a.n[2] = slices;
  if (windows) launch("spmvjit_dp_sell_sizes", windows, a, kWindowBlock);
  SpmvArgs scan = args();
  scan.a[0] = wsum.get();
  scan.n[0] = windows;
  launch("spmvjit_dp_scan", 1, scan, 1024);
  launch("spmvjit_dp_sell_ptr", std::max<int64_t>(windows, 1), a, kWindowBlock);
  int64_t stored = 0;
  b_.download(&stored, static_cast<int64_t*>(slice_ptr.device.get()) + slices, sizeof stored);
  const size_t is = size_of(in_.index), vs = size_of(in_.value);
  slice_util::check_padding("sell", stored, in_.nnz, c * slices, double(is + vs),
                            in_.index == IndexType::i32);
  col_idx = alloc("col_idx", stored, is);
  values = alloc("values", stored, vs, true);
  a.a[1] = in_.col_idx;
  a.a[2] = in_.val;
  a.a[3] = slice_ptr.device.get();
  a.a[4] = col_idx.device.get();
  a.a[5] = values.device.get();
  if (slices) launch("spmvjit_dp_sell_fill", slices * c, a);
}

}  // namespace spmvjit
