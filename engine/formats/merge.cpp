// Merge-path CSR (Merrill & Garland 2016): the CSR arrays, with work split into equal lengths of
// the merge path over (row ends, nonzero indices), so every worker gets the same rows + nonzeros
// whatever the row lengths. Rows cut by a split are finished by a carry fixup.
//
// CPU: the path coordinates of the part boundaries are found at plan time (binary search per
// boundary) and stored in the parts slot as (row, nonzero) pairs. GPU: each thread searches
// its own segment's coordinates in the kernel (no plan-time array that depends on the grid).
#include <algorithm>
#include <cstring>

#include "engine/formats/device_converter.hpp"
#include "engine/formats/format.hpp"
#include "engine/formats/format_a_util.hpp"

namespace spmvjit {
#include "templates/contract/merge.h"

// keeps_csr_pattern and csr_layout_to_triplets read the CSR arrays from slots 0-2.
static_assert(MERGE_ROW_PTR == 0 && MERGE_COL_IDX == 1 && MERGE_VALUES == 2, "merge keeps CSR first");

namespace {

// Modeled cost of the extra (fixup) launch on the CPU thread pool, in byte-equivalents.
constexpr double kExtraStepBytes = 32768;

// Coordinate (row, nonzero) where the merge path crosses diagonal `diag`: the rows before it
// have ended and the nonzeros before it are consumed; rp[row] <= nonzero <= rp[row + 1].
template <class I>
void merge_search(const I* rp, int64_t rows, int64_t nnz, int64_t diag, int64_t& i, int64_t& j) {
  int64_t lo = diag > nnz ? diag - nnz : 0, hi = std::min(diag, rows);
  while (lo < hi) {
    const int64_t mid = lo + (hi - lo) / 2;
    if (int64_t(rp[mid + 1]) <= diag - mid - 1)
      lo = mid + 1;
    else
      hi = mid;
  }
  i = lo;
  j = diag - lo;
}

class MergeFormat final : public Format {
 public:
  std::string name() const override { return "merge"; }
  std::span<const ArraySlot> contract_arrays() const override { return kMergeArrays; }
  bool keeps_csr_pattern(const FormatParams&) const override { return true; }
  // CPU: measured time per modeled byte relative to csr (docs/PERFORMANCE.md, 2-vCPU Zen 4).
  double efficiency(const MatrixStats&, const TargetInfo& t) const override { return t.gpu() ? 1.0 : 1.13; }
  bool supports(BackendKind) const override { return true; }
  bool supports_value(ValueType) const override { return true; }  // real and complex
  std::vector<FormatParams> candidates(const CsrRef&, const MatrixStats&,
                                       const TargetInfo&) const override {
    return {FormatParams{}};
  }
  FormatParams kernel_constants(const FormatParams&) const override { return {}; }
  std::string make_deterministic(FormatParams&, const TargetInfo& t) const override {
    return t.gpu() ? "its GPU kernel adds the carries of long rows into y with atomics" : "";
  }

  Estimate estimate(const CsrRef& a, const MatrixStats&, const FormatParams&,
                    const TargetInfo& t) const override {
    Estimate e;
    const int64_t is = int64_t(size_of(a.index)), vs = int64_t(size_of(a.value));
    e.stored_entries = a.nnz;
    e.matrix_bytes = is * (a.rows + 1 + a.nnz) + vs * a.nnz;
    if (t.backend == BackendKind::cpu) {
      // CSR's per-row cost, plus one extra launch for the carries; perfectly balanced.
      e.cost_bytes = double(e.matrix_bytes) + 24.0 * double(a.rows) + kExtraStepBytes;
    } else {
      const int64_t segs = (a.rows + a.nnz + MERGE_GPU_ITEMS - 1) / MERGE_GPU_ITEMS;
      // Carry (row + value) written and read back per segment, one atomic each.
      e.cost_bytes =
          double(e.matrix_bytes) + 24.0 * double(a.rows) + double(segs) * double(2 * (8 + vs) + 8);
    }
    e.reason = "merge path split: rows + nonzeros balanced exactly";
    return e;
  }

  void to_triplets(const FormatData& d, const CsrRef& shape, std::vector<Triplet>& out) const override {
    csr_layout_to_triplets(d, shape, out);
  }

  FormatData convert(const CsrRef& a, const FormatParams& p, const TargetInfo& t) const override {
    return dispatch_types_complex(a.index, a.value, [&]<class I, class V>() {
      FormatData d;
      d.declare(name(), p, contract_arrays(), a.index, a.value);
      std::copy_n(a.rp<I>(), a.rows + 1, d.make<I>(MERGE_ROW_PTR, a.rows + 1));
      std::copy_n(a.ci<I>(), a.nnz, d.make<I>(MERGE_COL_IDX, a.nnz));
      std::copy_n(a.vals<V>(), a.nnz, d.make<V>(MERGE_VALUES, a.nnz));
      finish(d, a, t);
      if (t.backend == BackendKind::cpu) {
        const int64_t parts = d.ints[MERGE_N_SEGMENTS], total = a.rows + a.nnz;
        // Not plain boundaries (set_cpu_parts): a (row, nonzero) coordinate per boundary.
        int64_t* coords = d.make<int64_t>(MERGE_PARTS, 2 * (parts + 1));
        for (int64_t q = 0; q <= parts; ++q) {
          const int64_t diag = int64_t((__int128)total * q / parts);
          merge_search(a.rp<I>(), a.rows, a.nnz, diag, coords[2 * q], coords[2 * q + 1]);
        }
      }
      return d;
    });
  }

  // The CSR arrays only: a GPU thread searches its own merge-path coordinates.
  bool converts_on_device() const override { return true; }
  FormatData convert_device(DeviceConverter& dc, const FormatParams& p, const TargetInfo& t) const override {
    const CsrRef& a = dc.shape();
    if (!t.gpu()) fail(SPMV_STATUS_UNSUPPORTED, "merge: device conversion is for GPU targets");
    FormatData d;
    d.declare(name(), p, contract_arrays(), a.index, a.value);
    put_device_csr_arrays(d, dc, a.nnz);
    finish(d, a, t);
    return d;
  }

 private:
  // Sizes, bytes, segments, scratch and launch steps (the CPU's coordinates are the caller's).
  static void finish(FormatData& d, const CsrRef& a, const TargetInfo& t) {
    d.stored_entries = a.nnz;
    d.matrix_bytes = sum_matrix_bytes(d);
    const int64_t total = a.rows + a.nnz, vs = int64_t(size_of(a.value));
    if (t.backend == BackendKind::cpu) {
      const int64_t parts = std::max(1, t.threads);
      d.ints[MERGE_N_SEGMENTS] = parts;
      d.scratch_bytes = parts * vs;  // trailing partial-row sum per part
      d.steps.push_back({"spmvjit_part", parts, 1, 0});
      d.steps.push_back({"spmvjit_fixup", 1, 1, 0});
    } else {
      const int64_t segs = std::max<int64_t>(1, (total + MERGE_GPU_ITEMS - 1) / MERGE_GPU_ITEMS);
      d.ints[MERGE_N_SEGMENTS] = segs;
      d.ints[MERGE_N_ITEMS] = MERGE_GPU_ITEMS;
      // Carry rows (i64), then carry sums from an even slot: 16-byte aligned for complex doubles.
      d.scratch_bytes = (segs + (segs & 1)) * 8 + segs * vs;
      d.steps.push_back({"spmvjit_part", gpu_grid(segs, MERGE_GPU_BLOCK), MERGE_GPU_BLOCK, 0});
      d.steps.push_back({"spmvjit_fixup", gpu_grid(segs, MERGE_GPU_BLOCK), MERGE_GPU_BLOCK, 0, true});
    }
  }
};

}  // namespace

SPMVJIT_REGISTER_FORMAT(MergeFormat)

}  // namespace spmvjit
