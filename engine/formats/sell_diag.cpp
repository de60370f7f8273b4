// Sliced ELL with diagonals (compressed indices, after Monakov et al. 2010): each slice of C
// rows keeps a small set of diagonal offsets shared by its rows; an entry on one of them is
// stored as a value only (slot (j, i) of the slice, x index = row + offset), so banded and
// stencil matrices move almost no index bytes. A diagonal is kept in a slice when storing it
// whole (C values + one offset) costs fewer bytes than its entries would with explicit indices.
// Everything else (off-diagonal entries, duplicates) goes to a per-slice ELL remainder with
// explicit columns, so the format is exact for any matrix.
#include <algorithm>
#include <atomic>
#include <cstring>

#include "core/parallel.hpp"
#include "engine/formats/device_converter.hpp"
#include "engine/formats/format.hpp"
#include "engine/formats/gpu_cost.hpp"
#include "engine/formats/partition.hpp"
#include "engine/formats/sell_diag_slots.hpp"
#include "engine/formats/slice_util.hpp"
#include "engine/formats/sliced_estimate.hpp"

namespace spmvjit {
#include "templates/contract/sell_diag.h"

namespace {

using namespace slice_util;

// Sampled entries the estimate lays out at most (about: whole slices). The sample holds 12-18K
// entries on the suite but for long rows (384K on dense:2000).
constexpr int64_t kEstimateEntries = 32768;

// Per-slice decision: the kept diagonal offsets (sorted) and the remainder width.
struct SliceLayout {
  std::vector<int64_t> offsets;
  int64_t rem_width = 0;
  int64_t rem_entries = 0;  // entries in the remainder, over the slice's rows
  bool sort_first = false;  // the last slice chosen had too many distinct offsets for the table
};

// The offsets of rows [r0, r1) that hold at least min_count entries, when every row's columns
// strictly ascend (else false, nothing chosen). A row then holds an offset at most once, so a
// kept offset is in at least one of the first r1 - r0 - min_count + 1 rows: only their offsets
// are candidates, counted by merging each further row (its offsets ascend too) against them.
// O(entries), against a sort of the slice's entries: sell_diag's estimate on scattered rows took
// 35-50% less time this way (docs/PERFORMANCE.md). Sets sort_first when the leading rows share few offsets.
template <class I>
bool choose_diagonals_sorted(const I* rp, const I* ci, int64_t r0, int64_t r1, int64_t min_count,
                             SliceLayout& lay, std::vector<int64_t>& scratch) {
  for (int64_t r = r0; r < r1; ++r)
    for (int64_t k = int64_t(rp[r]) + 1; k < int64_t(rp[r + 1]); ++k)
      if (ci[k] <= ci[k - 1]) return false;
  lay.offsets.clear();
  const int64_t lead = (r1 - r0) - min_count + 1;
  if (lead <= 0) return true;  // fewer rows than min_count: no diagonal fills enough slots
  // The leading rows' offsets, merged row by row (each row's ascend): a dense row costs its length.
  thread_local std::vector<int64_t> row, merged;
  scratch.clear();
  for (int64_t r = r0; r < r0 + lead; ++r) {
    row.clear();
    for (int64_t k = rp[r]; k < rp[r + 1]; ++k) row.push_back(int64_t(ci[k]) - r);
    merged.resize(scratch.size() + row.size());
    std::merge(scratch.begin(), scratch.end(), row.begin(), row.end(), merged.begin());
    scratch.swap(merged);
  }
  // Candidates in place: scratch[0, n) distinct offsets, their counts in `count` (so far).
  thread_local std::vector<int64_t> count;
  count.clear();
  size_t n = 0;
  for (size_t i = 0; i < scratch.size(); ++n) {
    size_t j = i;
    while (j < scratch.size() && scratch[j] == scratch[i]) ++j;
    scratch[n] = scratch[i];
    count.push_back(int64_t(j - i));
    i = j;
  }
  const auto cand = scratch.begin();
  for (int64_t r = r0 + lead; r < r1; ++r) {
    // A row much shorter than the candidates (next to a dense one) searches them, else merges.
    const bool search = int64_t(n) > 16 * (int64_t(rp[r + 1]) - int64_t(rp[r]));
    size_t j = 0;
    for (int64_t k = rp[r]; k < rp[r + 1] && j < n; ++k) {
      const int64_t d = int64_t(ci[k]) - r;
      if (search)
        j = size_t(std::lower_bound(cand + ptrdiff_t(j), cand + ptrdiff_t(n), d) - cand);
      else
        while (j < n && scratch[j] < d) ++j;
      if (j < n && scratch[j] == d) ++count[j++];
    }
  }
  for (size_t j = 0; j < n; ++j)
    if (count[j] >= min_count) lay.offsets.push_back(scratch[j]);
  // Rows with the same offsets (a band) share their candidates; scattered ones hardly any.
  const int64_t lead_entries = int64_t(rp[r0 + lead]) - int64_t(rp[r0]);
  lay.sort_first = 2 * int64_t(n) * lead > (lead + 1) * lead_entries;
  return true;
}

// The offsets (col - row) holding at least min_count entries of rows [r0, r1), sorted: the
// contract's table (sell_diag_table, which a device build runs too) when the slice has few
// distinct offsets (banded and stencil matrices), else the leading rows' candidates when the rows
// strictly ascend (the usual CSR), else a sort. Each slice decides alone (every way gives the
// same set); the last slice only says whether to try the table first, as scattered columns fill
// it in vain (that cost random:200000:1:40 17% more time).
template <class I>
void choose_diagonals(const CsrRef& a, int64_t r0, int64_t r1, int64_t min_count, SliceLayout& lay,
                      std::vector<int64_t>& scratch) {
  const I* rp = a.rp<I>();
  const I* ci = a.ci<I>();
  if (!lay.sort_first) {
    long long off[SELL_DIAG_TABLE], count[SELL_DIAG_TABLE];
    const long long kept = sell_diag_table(
        [&](auto&& f) {
          for (int64_t r = r0; r < r1; ++r)
            for (int64_t k = rp[r]; k < rp[r + 1]; ++k)
              if (!f(int64_t(ci[k]) - r)) return;
        },
        min_count, off, count);
    if (kept >= 0) {
      lay.offsets.assign(off, off + kept);
      return;
    }
  }
  if (choose_diagonals_sorted(rp, ci, r0, r1, min_count, lay, scratch)) return;
  scratch.clear();
  for (int64_t r = r0; r < r1; ++r)
    for (int64_t k = rp[r]; k < rp[r + 1]; ++k) scratch.push_back(int64_t(ci[k]) - r);
  std::sort(scratch.begin(), scratch.end());
  lay.offsets.clear();
  int64_t distinct = 0;
  for (size_t i = 0; i < scratch.size(); ++distinct) {
    size_t j = i;
    while (j < scratch.size() && scratch[j] == scratch[i]) ++j;
    if (int64_t(j - i) >= min_count) lay.offsets.push_back(scratch[i]);
    i = j;
  }
  lay.sort_first = distinct > SELL_DIAG_TABLE;
}

// Places the entries of row r on the slice's sorted diagonal offsets off[0..n): on_diag(j, k) for
// entry k on diagonal j (the first entry of each diagonal in the row), on_rem(k) for the rest;
// returns the remainder count. A row in strictly increasing column order (the usual CSR) is
// merged with the offsets; any other row takes a binary search and `used` (n flags).
template <class I, class O, class OnDiag, class OnRem>
int64_t place_row(const I* ci, int64_t b, int64_t e, int64_t r, const O* off, int64_t n,
                  std::vector<char>& used, OnDiag&& on_diag, OnRem&& on_rem) {
  bool sorted = true;
  for (int64_t k = b + 1; k < e && sorted; ++k) sorted = ci[k - 1] < ci[k];
  int64_t rem = 0;
  if (sorted) {
    int64_t j = 0;
    for (int64_t k = b; k < e; ++k) {
      const int64_t d = int64_t(ci[k]) - r;
      while (j < n && int64_t(off[j]) < d) ++j;
      if (j < n && int64_t(off[j]) == d) {
        on_diag(j++, k);
      } else {
        on_rem(k);
        ++rem;
      }
    }
    return rem;
  }
  used.assign(size_t(n), 0);
  for (int64_t k = b; k < e; ++k) {
    const int64_t d = int64_t(ci[k]) - r;
    const O* it = std::lower_bound(off, off + n, d, [](O x, int64_t v) { return int64_t(x) < v; });
    const int64_t j = int64_t(it - off);
    if (j < n && int64_t(*it) == d && !used[size_t(j)]) {
      used[size_t(j)] = 1;
      on_diag(j, k);
    } else {
      on_rem(k);
      ++rem;
    }
  }
  return rem;
}

// A slice whose rows all hold the first row's offsets (a stencil's or band's interior: every row
// the same length, each column shifted by the row): those offsets are its diagonals, as the
// general rule finds (each is in all r1 - r0 >= min_count rows), and nothing remains. Checked
// with a compare per entry; false (nothing chosen) at the first row that differs.
template <class I>
bool choose_uniform_slice(const I* rp, const I* ci, int64_t r0, int64_t r1, int64_t min_count,
                          SliceLayout& lay) {
  const int64_t b0 = rp[r0], len = int64_t(rp[r0 + 1]) - b0;
  if (r1 - r0 < min_count || len == 0) return false;
  for (int64_t j = 1; j < len; ++j)
    if (ci[b0 + j] <= ci[b0 + j - 1]) return false;  // strictly ascending: each offset once
  for (int64_t r = r0 + 1; r < r1; ++r) {
    const int64_t b = rp[r];
    if (int64_t(rp[r + 1]) - b != len) return false;
    const int64_t shift = r - r0;
    for (int64_t j = 0; j < len; ++j)
      if (int64_t(ci[b + j]) - int64_t(ci[b0 + j]) != shift) return false;
  }
  lay.offsets.resize(size_t(len));
  for (int64_t j = 0; j < len; ++j) lay.offsets[size_t(j)] = int64_t(ci[b0 + j]) - r0;
  lay.rem_width = lay.rem_entries = 0;
  return true;
}

// Whether rows [r0, r1) each hold exactly n entries in strictly ascending column order: with no
// remainder in their slice, entry j of each is then on the slice's diagonal j.
template <class I>
bool full_rows(const I* rp, const I* ci, int64_t r0, int64_t r1, int64_t n) {
  for (int64_t r = r0; r < r1; ++r) {
    if (int64_t(rp[r + 1]) - int64_t(rp[r]) != n) return false;
    for (int64_t k = int64_t(rp[r]) + 1; k < int64_t(rp[r + 1]); ++k)
      if (ci[k] <= ci[k - 1]) return false;
  }
  return true;
}

// Chooses the diagonals of slice s (into lay.offsets) and counts its remainder (width, entries):
// no entry is placed.
template <class I>
void choose_slice(const CsrRef& a, int64_t s, int64_t c, int64_t min_count, SliceLayout& lay,
                  std::vector<int64_t>& scratch, std::vector<char>& used) {
  const I* rp = a.rp<I>();
  const I* ci = a.ci<I>();
  const int64_t r0 = s * c, r1 = std::min(a.rows, r0 + c);
  if (choose_uniform_slice(rp, ci, r0, r1, min_count, lay)) return;
  choose_diagonals<I>(a, r0, r1, min_count, lay, scratch);
  lay.rem_width = lay.rem_entries = 0;
  const int64_t n = int64_t(lay.offsets.size());
  for (int64_t r = r0; r < r1; ++r) {
    const int64_t rem = place_row(
        ci, int64_t(rp[r]), int64_t(rp[r + 1]), r, lay.offsets.data(), n, used, [](int64_t, int64_t) {},
        [](int64_t) {});
    lay.rem_width = std::max(lay.rem_width, rem);
    lay.rem_entries += rem;
  }
}

// Fewest entries for which a whole diagonal (C values + 1 offset) beats explicit indices.
int64_t min_diag_count(int64_t c, int64_t is, int64_t vs) {
  return std::max<int64_t>(1, ceil_div(c * vs + is, is + vs));
}

class SellDiagFormat final : public Format {
 public:
  std::string name() const override { return "sell_diag"; }
  bool supports_value(ValueType) const override { return true; }  // real and complex
  std::span<const ArraySlot> contract_arrays() const override { return kSellDiagArrays; }
  // CPU: diagonal storage pays only when the diagonals it stores are well filled (stencils, dense
  // blocks); with scattered columns it degenerates into padded ELL (measured 1.7x csr's time).
  double efficiency(const MatrixStats& s, const TargetInfo& t) const override {
    if (t.gpu() || !s.sample) return 1.0;
    // The fill of the sampled rows' diagonals (the rows the statistics counted them on).
    const int64_t rows = s.sample->prefix_rows(MatrixStats::kFactEntries);
    const double span = double(std::max<int64_t>(1, std::min(rows, s.cols)));
    const double entries = double(s.sample->row_ptr[size_t(rows)]);
    const double occupancy = s.distinct_diagonals() ? entries / (double(s.distinct_diagonals()) * span) : 0.0;
    return occupancy >= 0.25 ? 1.0 : 1.8;
  }
  bool supports(BackendKind) const override { return true; }

  std::vector<FormatParams> candidates(const CsrRef& a, const MatrixStats&,
                                       const TargetInfo& t) const override {
    return {{{"C", lanes(t, size_of(a.value))}}};  // SIMD lanes on the CPU, one warp of rows on a GPU
  }

  Estimate estimate(const CsrRef& a, const MatrixStats& s, const FormatParams& p,
                    const TargetInfo& t) const override {
    const int64_t c = p.at("C"), is = int64_t(size_of(a.index)), vs = int64_t(size_of(a.value));
    const int64_t slices = ceil_div(a.rows, c);
    // GPU: its conversion is slow and it wins only on banded matrices with enough rows (measured on
    // an H100: 2.0x cuSPARSE on a 5-point and 1.7x on a 27-point stencil, 0.07-0.8x elsewhere), so
    // elsewhere it is ranked as 8x its bytes. That is decided on the row sample first (host and
    // device-resident input alike): laying out the sample's slices costs far more than the rest of
    // the planner on dense rows (22 ms for dense:2000), and a non-banded matrix's layout is almost
    // all remainder: SELL-C's slots (slice widths from the statistics).
    if (t.gpu() && s.sample->distinct_offsets(4 * t.warp_size) > 4 * t.warp_size) {
      Estimate e;
      e.stored_entries = sliced_entries(s, c, 1, 1);
      e.matrix_bytes = e.stored_entries * (is + vs) + 16 * (slices + 1);
      e.cost_bytes = double(e.matrix_bytes) + 8.0 * double(slices);
      e.imbalance = std::max(gpu_row_starvation(a.rows, t), 8.0);
      e.reason = "not banded: more than " + std::to_string(4 * t.warp_size) +
                 " distinct offsets col - row in the row sample";
      return e;
    }
    double diags = 0, rem = 0, on_diag = 0;
    SliceLayout lay;
    std::vector<int64_t> scratch;
    std::vector<char> used;
    // The statistics' row sample holds whole slices (their offsets col - row are the matrix's):
    // O(sampled nonzeros), and the same for a matrix in device memory. Long rows fill the sample
    // with more entries than an estimate needs (192K of dense:1000's, 0.87 ms of a 5 ms plan on
    // the 2-vCPU VM): then slices of over twice the mean entries are all laid out (a huge row's
    // padding must be seen), the others every step-th, about kEstimateEntries entries in all.
    const CsrRef smp = s.sample->ref();
    const int64_t* srp = smp.rp<int64_t>();
    const int64_t sample_slices = ceil_div(smp.rows, c), entries = srp[smp.rows];
    const int64_t step = std::max<int64_t>(1, ceil_div(entries, kEstimateEntries));
    const double heavy = 2.0 * double(entries) / double(std::max<int64_t>(sample_slices, 1));
    double part[2][3] = {};  // [heavy][diagonals, remainder slots, entries on diagonals]
    int64_t light = 0, light_taken = 0;
    for (int64_t sl = 0; sl < sample_slices; ++sl) {
      const int64_t n = srp[std::min(smp.rows, (sl + 1) * c)] - srp[sl * c];
      const bool is_heavy = step > 1 && double(n) > heavy;
      if (!is_heavy && light++ % step != 0) continue;
      light_taken += !is_heavy;
      choose_slice<int64_t>(smp, sl, c, min_diag_count(c, is, vs), lay, scratch, used);
      double* x = part[is_heavy];
      x[0] += double(lay.offsets.size());
      x[1] += double(lay.rem_width * c);
      x[2] += double(n - lay.rem_entries);
    }
    const double light_scale = light_taken ? double(light) / double(light_taken) : 1.0;
    diags = part[1][0] + part[0][0] * light_scale;
    rem = part[1][1] + part[0][1] * light_scale;
    on_diag = part[1][2] + part[0][2] * light_scale;
    const double scale = s.sample->scale(a.rows);
    diags *= scale, rem *= scale, on_diag *= scale;
    Estimate e;
    e.stored_entries = int64_t(diags * double(c) + rem);
    e.matrix_bytes = int64_t(diags * double(c * vs + is) + rem * double(is + vs)) + 16 * (slices + 1);
    // Per slice loop setup, per diagonal an offset load and a range check.
    e.cost_bytes = double(e.matrix_bytes) + 8.0 * double(slices) + 4.0 * diags;
    e.imbalance = gpu_row_starvation(a.rows, t);
    if (e.stored_entries > kMaxPaddingFactor * s.nnz + 2 * c * slices) {
      e.applicable = false;
      e.reason = "padding to about " + std::to_string(e.stored_entries) + " values for " +
                 std::to_string(s.nnz) + " nonzeros";
    } else {
      e.reason = "about " + std::to_string(s.nnz ? int64_t(100 * on_diag / double(s.nnz)) : 0) +
                 "% of nonzeros on " + std::to_string(slices ? diags / double(slices) : 0.0) +
                 " diagonals per slice";
    }
    return e;
  }

  std::vector<FormatParams> kernel_variants(const TargetInfo& t, ValueType v) const override {
    return {{{"C", lanes(t, size_of(v))}}};  // as candidates choose it
  }

  void to_triplets(const FormatData& d, const CsrRef& shape, std::vector<Triplet>& out) const override {
    const int64_t c = d.params.at("C"), slices = d.ints[SELL_DIAG_N_SLICES];
    const int64_t* dp = d.arrays[SELL_DIAG_DIAG_PTR].buf.as<int64_t>();
    const int64_t* rp = d.arrays[SELL_DIAG_REM_PTR].buf.as<int64_t>();
    dispatch_types_complex(shape.index, shape.value, [&]<class I, class V>() {
      const I* off = d.arrays[SELL_DIAG_DIAG_OFFSET].buf.template as<I>();
      const V* dv = d.arrays[SELL_DIAG_DIAG_VALUES].buf.template as<V>();
      const I* rc = d.arrays[SELL_DIAG_REM_COL].buf.template as<I>();
      const V* rv = d.arrays[SELL_DIAG_REM_VALUES].buf.template as<V>();
      for (int64_t s = 0; s < slices; ++s) {
        for (int64_t j = dp[s]; j < dp[s + 1]; ++j)
          for (int64_t i = 0; i < c; ++i)
            if (dv[j * c + i] != V(0))
              out.push_back(make_triplet(s * c + i, s * c + i + int64_t(off[j]), dv[j * c + i]));
        for (int64_t k = rp[s]; k < rp[s + 1]; ++k)
          if (rv[k] != V(0)) out.push_back(make_triplet(s * c + (k - rp[s]) % c, int64_t(rc[k]), rv[k]));
      }
    });
  }

  // Each slot's entry from the marks of the held slots (engine/formats/sell_diag_slots.cpp).
  bool numbers_slots() const override { return true; }
  bool number_slots(const FormatData& d, const CsrRef& shape, const HeldSlots& held, void* const* positions,
                    size_t pos_bytes) const override {
    return sell_diag_number_slots(d, shape, held, positions, pos_bytes);
  }

  FormatData convert(const CsrRef& a, const FormatParams& p, const TargetInfo& t) const override {
    return dispatch_types_complex(a.index, a.value, [&]<class I, class V>() { return build<I, V>(a, p, t); });
  }
  bool converts_codes() const override { return true; }
  FormatData convert_codes(const CsrRef& a, const FormatParams& p, const TargetInfo& t) const override {
    return dispatch_index(a.index, [&]<class I>() { return build<I, uint8_t>(a, p, t); });
  }

  bool converts_on_device() const override { return true; }
  bool device_convertible(const FormatParams& p) const override { return p.count("C") && p.at("C") >= 1; }
  std::vector<std::string> device_build_modules() const override { return {"sell_diag_build"}; }
  // Choosing a slice's diagonals needs the whole slice: a warp per slice (one thread where the
  // device's lanes do not cooperate, or the slice's rows differ) chooses them once (as the host
  // does) into scratch, one entry per nonzero (a slice's kept offsets fit in its own entries),
  // marks the slice full when all its rows hold those diagonals in order, and then, a lane per
  // row, finds the slice's remainder width (without the warp: a pass of one thread per row, an
  // atomic max per slice). The rest is one thread per row of the other slices, coalesced: the
  // scans into diag_ptr and rem_ptr, then the diagonals and the remainders; a group of threads
  // per full slice places its contiguous entries slot by slot. A row holding exactly its slice's
  // diagonals is placed without a search. With a table (dc.codes()) the value arrays receive
  // CODE8 codes.
  bool builds_device_codes() const override { return true; }
  FormatData convert_device(DeviceConverter& dc, const FormatParams& p, const TargetInfo& t) const override {
    if (!device_convertible(p) || !t.gpu())
      fail(SPMV_STATUS_UNSUPPORTED, "sell_diag: no device conversion for these parameters");
    const CsrRef& a = dc.shape();
    const int64_t c = p.at("C"), slices = ceil_div(a.rows, c);
    const int64_t is = int64_t(size_of(a.index)), vs = int64_t(size_of(a.value));
    FormatData d;
    d.declare(name(), p, contract_arrays(), a.index, a.value);
    HostArray dptr = dc.alloc(slices + 1, sizeof(int64_t)), rptr = dc.alloc(slices + 1, sizeof(int64_t));
    HostArray scratch = dc.alloc(slices ? a.nnz : 0, size_t(is));
    HostArray full = dc.alloc(slices, 1);  // written by the count
    const DeviceConverter::Codes* codes = dc.codes();
    const size_t value_elem = codes ? 1 : size_t(vs);
    SpmvArgs g = dc.args();
    g.y = full.device.get();
    if (codes) {
      g.values_table = codes->table;
      g.n[SELL_DIAG_BUILD_N_TABLE] = codes->patterns;
      g.scratch = codes->errors;
    }
    g.a[SELL_DIAG_BUILD_ROW_PTR] = a.row_ptr;
    g.a[SELL_DIAG_BUILD_COL_IDX_IN] = a.col_idx;
    g.a[SELL_DIAG_BUILD_VALUES_IN] = a.val;
    g.a[SELL_DIAG_BUILD_DIAG_PTR] = dptr.device.get();
    g.a[SELL_DIAG_BUILD_REM_PTR] = rptr.device.get();
    g.a[SELL_DIAG_BUILD_SCRATCH] = scratch.device.get();
    g.n[SELL_DIAG_BUILD_N_C] = c;
    g.n[SELL_DIAG_BUILD_N_SLICES] = slices;
    g.n[SELL_DIAG_BUILD_N_MIN_COUNT] = min_diag_count(c, is, vs);
    if (slices) {
      // A thread per slice: 0.50-0.57 ms on poisson2d:2000 and stencil27:100 (H200). The warp
      // kernel computes the remainder widths too; one thread per slice leaves them to a pass of
      // its own.
      if (dc.cooperative()) {
        dc.launch("sell_diag_build", "spmvjit_build_count_warp", slices * t.warp_size, g, t.warp_size);
      } else {
        dc.launch("sell_diag_build", "spmvjit_build_count", slices, g, 64);
        dc.launch("sell_diag_build", "spmvjit_build_width", a.rows, g);
      }
    }
    dc.exclusive_scan(dptr.device.get(), slices);
    dc.exclusive_scan(rptr.device.get(), slices);
    const int64_t ndiag = dc.read_i64(static_cast<const int64_t*>(dptr.device.get()) + slices);
    const int64_t nrem = dc.read_i64(static_cast<const int64_t*>(rptr.device.get()) + slices);
    check_padding("sell_diag", ndiag * c + nrem, a.nnz, 2 * c * slices, double(vs), is == 4);
    d.put(SELL_DIAG_DIAG_OFFSET, dc.alloc(ndiag, size_t(is)));
    d.put(SELL_DIAG_DIAG_VALUES, dc.alloc(ndiag * c, value_elem));
    d.put(SELL_DIAG_REM_COL, dc.alloc(nrem, size_t(is)));
    d.put(SELL_DIAG_REM_VALUES, dc.alloc(nrem, value_elem));
    g.a[SELL_DIAG_BUILD_DIAG_OFFSET] = d.arrays[SELL_DIAG_DIAG_OFFSET].device.get();
    g.a[SELL_DIAG_BUILD_DIAG_VALUES] = d.arrays[SELL_DIAG_DIAG_VALUES].device.get();
    // Passes with nothing to place are left out (no diagonals, or no remainder: a stencil's).
    if (ndiag) {
      dc.launch("sell_diag_build", "spmvjit_build_diagonals_full", slices * SELL_DIAG_FULL_GROUP, g,
                SELL_DIAG_SLICE_BLOCK);
      dc.launch("sell_diag_build", "spmvjit_build_diagonals", slices * c, g);
    }
    g.a[SELL_DIAG_BUILD_REM_COL] = d.arrays[SELL_DIAG_REM_COL].device.get();
    g.a[SELL_DIAG_BUILD_REM_VALUES] = d.arrays[SELL_DIAG_REM_VALUES].device.get();
    if (nrem) dc.launch("sell_diag_build", "spmvjit_build_remainder", slices * c, g);
    d.put(SELL_DIAG_DIAG_PTR, std::move(dptr));
    d.put(SELL_DIAG_REM_PTR, std::move(rptr));
    finish(d, a, c, slices, ndiag, nrem, t);
    return d;
  }

 private:
  template <class I, class V>
  FormatData build(const CsrRef& a, const FormatParams& p, const TargetInfo& tg) const {
    const int64_t c = p.at("C");
    if (c < 1) fail(SPMV_STATUS_INVALID_VALUE, "sell_diag: C must be >= 1");
    const int64_t slices = ceil_div(a.rows, c), min_count = min_diag_count(c, sizeof(I), size_of(a.value));
    FormatData d;
    d.declare(name(), p, contract_arrays(), a.index, a.value);
    int64_t* diag_ptr = d.make<int64_t>(SELL_DIAG_DIAG_PTR, slices + 1);
    int64_t* rem_ptr = d.make<int64_t>(SELL_DIAG_REM_PTR, slices + 1);
    diag_ptr[0] = rem_ptr[0] = 0;
    // Two passes over slices, each split across plan threads: choose every slice's diagonals,
    // then (after prefix sums) place the entries. Each chunk keeps its own scratch state.
    TraceSteps trace("sell_diag build");
    const int threads = plan_threads(a.nnz + a.rows);
    std::vector<HostVector<I>> chunk_offsets(static_cast<size_t>(threads));
    parallel_for(slices, threads, [&](int64_t s0, int64_t s1, int chunk) {
      SliceLayout lay;
      std::vector<int64_t> scratch;
      std::vector<char> used;
      HostVector<I>& mine = chunk_offsets[size_t(chunk)];
      mine.reserve(size_t(ceil_div(a.nnz * (s1 - s0), std::max<int64_t>(slices, 1)) / c + 16));
      for (int64_t s = s0; s < s1; ++s) {
        choose_slice<I>(a, s, c, min_count, lay, scratch, used);
        for (int64_t o : lay.offsets) mine.push_back(I(o));
        diag_ptr[s + 1] = int64_t(lay.offsets.size());
        rem_ptr[s + 1] = lay.rem_width * c;
      }
    });
    for (int64_t s = 0; s < slices; ++s) {
      diag_ptr[s + 1] += diag_ptr[s];
      rem_ptr[s + 1] += rem_ptr[s];
    }
    trace.step("choose diagonals");
    const int64_t ndiag = diag_ptr[slices], nrem = rem_ptr[slices];
    check_padding("sell_diag", ndiag * c + nrem, a.nnz, 2 * c * slices, double(size_of(a.value)),
                  sizeof(I) == 4);
    I* offs = d.make<I>(SELL_DIAG_DIAG_OFFSET, ndiag);
    const I* offsets = offs;
    for (const auto& co : chunk_offsets) offs = std::copy(co.begin(), co.end(), offs);
    chunk_offsets.clear();
    V* dvals = d.make<V>(SELL_DIAG_DIAG_VALUES, ndiag * c);
    I* rcol = d.make<I>(SELL_DIAG_REM_COL, nrem);
    V* rvals = d.make<V>(SELL_DIAG_REM_VALUES, nrem);
    const I* rp = a.rp<I>();
    const I* ci = a.ci<I>();
    const V* av = a.vals<V>();
    trace.step("allocate");
    // Each slice's arrays are zeroed just before its entries land (one pass over the output).
    // The zero values placed are counted (d.nonzero_slots: the plan then reads no values again).
    std::atomic<int64_t> zero_values{0};
    parallel_for(slices, threads, [&](int64_t s0, int64_t s1, int) {
      std::vector<char> used;
      int64_t zeros = 0;
      for (int64_t s = s0; s < s1; ++s) {
        const int64_t n = diag_ptr[s + 1] - diag_ptr[s], width = (rem_ptr[s + 1] - rem_ptr[s]) / c;
        V* d0 = dvals + diag_ptr[s] * c;
        I* c0 = rcol + rem_ptr[s];
        V* v0 = rvals + rem_ptr[s];
        if (width == 0 && full_rows(rp, ci, s * c, std::min(a.rows, s * c + c), n)) {
          // Every row holds every diagonal, in order (a stencil's interior): entry j is on diagonal j.
          for (int64_t i = 0; i < c; ++i) {
            const int64_t r = s * c + i;
            if (r >= a.rows) {
              for (int64_t j = 0; j < n; ++j) d0[j * c + i] = V(0);
              continue;
            }
            for (int64_t j = 0; j < n; ++j) {
              const V v = av[int64_t(rp[r]) + j];
              d0[j * c + i] = v;
              zeros += v == V(0);
            }
          }
          continue;
        }
        std::fill(d0, d0 + n * c, V(0));
        for (int64_t i = 0; i < c; ++i) {
          const int64_t r = s * c + i;
          int64_t fill = 0;
          if (r < a.rows)  // rows past the matrix's end (last slice) are padding only
            place_row(
                ci, int64_t(rp[r]), int64_t(rp[r + 1]), r, offsets + diag_ptr[s], n, used,
                [&](int64_t j, int64_t k) { d0[j * c + i] = av[k], zeros += av[k] == V(0); },
                [&](int64_t k) {
                  c0[fill * c + i] = ci[k];
                  v0[fill++ * c + i] = av[k];
                  zeros += av[k] == V(0);
                });
          // Remainder padding repeats the row's last remainder column (or the diagonal's row) with 0.
          const I pad = fill ? c0[(fill - 1) * c + i] : I(std::min(r, std::max<int64_t>(a.cols - 1, 0)));
          for (int64_t q = fill; q < width; ++q) c0[q * c + i] = pad, v0[q * c + i] = V(0);
        }
      }
      zero_values += zeros;
    });
    d.nonzero_slots = a.nnz - zero_values.load();
    trace.step("place entries");
    finish(d, a, c, slices, ndiag, nrem, tg);
    if (tg.backend == BackendKind::cpu)
      set_cpu_parts(d, SELL_DIAG_PARTS, split_prefix(slices, tg.threads, [&](int64_t u) {
                      return diag_ptr[u] * c + rem_ptr[u] + u * c;
                    }));
    return d;
  }
  // Sizes, bytes and facts; the GPU launch (one thread per row).
  static void finish(FormatData& d, const CsrRef& a, int64_t c, int64_t slices, int64_t ndiag, int64_t nrem,
                     const TargetInfo& t) {
    d.stored_entries = ndiag * c + nrem;
    d.matrix_bytes = sum_matrix_bytes(d);
    d.ints[SELL_DIAG_N_SLICES] = slices;
    const int64_t is = int64_t(size_of(a.index));
    const int64_t csr_index = is * (a.rows + 1 + a.nnz), own_index = is * (ndiag + nrem) + 16 * (slices + 1);
    d.facts = Json::object({{"slices", slices},
                            {"diagonals", ndiag},
                            {"diag_slots", ndiag * c},
                            {"remainder_slots", nrem},
                            {"index_bytes_csr", csr_index},
                            {"index_bytes", own_index},
                            {"index_bytes_saved", csr_index - own_index}});
    if (t.gpu() && slices > 0)
      d.steps.push_back({"spmvjit_part", ceil_div(slices * c, SELL_DIAG_GPU_BLOCK), SELL_DIAG_GPU_BLOCK, 0});
  }
};

}  // namespace

SPMVJIT_REGISTER_FORMAT(SellDiagFormat)

}  // namespace spmvjit
