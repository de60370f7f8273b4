// Symmetric diagonal storage (templates/contract/sym_diag.h): for a matrix declared symmetric,
// the upper diagonals shared by all rows (offsets d >= 0, the main one always), each a column of
// values read twice per SpMV, for row i and, mirrored, for row i + d: the diagonals' values stream
// from memory once, so a banded or stencil matrix moves about half the bytes of any full-storage
// format. Entries on no kept diagonal, of both triangles, are a CSR remainder, so the layout is
// exact for any symmetric matrix. The plan builds the matrix whole from the triangle the user
// gave, so its values are symmetric by construction; the converter checks the pattern (a kept
// diagonal's lower entries as many as its upper ones) and refuses one without that symmetry.
#include <algorithm>
#include <atomic>
#include <map>

#include "core/parallel.hpp"
#include "engine/formats/format.hpp"
#include "engine/formats/gpu_cost.hpp"
#include "engine/formats/partition.hpp"
#include "engine/formats/slice_util.hpp"

namespace spmvjit {
#include "templates/contract/sell_diag.h"
#include "templates/contract/sym_diag.h"

namespace {

using slice_util::ceil_div;

constexpr int64_t kBlockRows = 4096;  // rows whose offsets one table counts (sell_diag_table)
constexpr const char* kSymmetricParam = "SYMMETRIC";
// A kernel constant: the mirrored entry A(i, i - d) is the conjugate of the stored A(i - d, i)
// (complex values declared Hermitian); 0 (absent) for symmetric ones, A(i, i - d) = A(i - d, i).
constexpr const char* kHermitianParam = "HERMITIAN";
bool hermitian(const FormatParams& p) { return p.count(kHermitianParam) && p.at(kHermitianParam) != 0; }
// A kernel constant on GPUs for real values: the number of kept diagonals, so the interior loop
// unrolls fully and issues all its loads at once (2-5% off the stencils on an H100,
// docs/PERFORMANCE.md). The converter sets it from the whole matrix, overriding whatever it was
// given (the planner's guess from the row sample, which lets the kernel compile beside the
// conversion); absent, the kernel reads the count at run time (CPUs, complex values, more than
// kMaxBakedDiags diagonals).
constexpr const char* kDiagsParam = "DIAGS";
constexpr int64_t kMaxBakedDiags = 16;  // a 27-point stencil keeps 14
bool bakes_diags(const TargetInfo& t, ValueType v) { return t.gpu() && !is_complex(v); }

// A diagonal is kept when storing it whole (its values once, mirrored reads free) costs fewer
// bytes than its entries of both triangles in the remainder: count * 2 (is + vs) >= span * vs.
bool worth_keeping(int64_t count, int64_t span, int64_t is, int64_t vs) {
  return count * 2 * (is + vs) >= span * vs;
}

// Keeps offset 0 and the worthwhile others (at most SYM_DIAG_MAX, the fullest), ascending, from
// entry counts per upper offset over `span_rows` rows (0: the whole matrix of `rows` rows, where
// diagonal d spans rows - d of them).
std::vector<int64_t> keep_offsets(const std::map<int64_t, int64_t>& count, int64_t rows, int64_t span_rows,
                                  int64_t is, int64_t vs) {
  std::vector<std::pair<int64_t, int64_t>> good;  // (count, offset)
  for (const auto& [d, c] : count)
    if (d > 0 && d < rows && worth_keeping(c, span_rows ? span_rows : rows - d, is, vs))
      good.push_back({c, d});
  std::stable_sort(good.begin(), good.end(), [](const auto& x, const auto& y) { return x.first > y.first; });
  if (good.size() > SYM_DIAG_MAX - 1) good.resize(SYM_DIAG_MAX - 1);
  std::vector<int64_t> off{0};
  for (const auto& g : good) off.push_back(g.second);
  std::sort(off.begin(), off.end());
  return off;
}

// Where a cache keeps a band of `bytes` (values of rows i - d .. i of every diagonal) for the
// mirrored reads: a GPU's L2 share, a CPU core's L2. Past it, the mirrored reads come from memory.
double band_budget(const TargetInfo& t) { return t.gpu() ? 16e6 : 1e6; }

class SymDiagFormat final : public Format {
 public:
  std::string name() const override { return "sym_diag"; }
  bool supports_value(ValueType) const override { return true; }  // real, complex symmetric, Hermitian
  std::span<const ArraySlot> contract_arrays() const override { return kSymDiagArrays; }
  bool supports(BackendKind) const override { return true; }
  bool stores_one_triangle() const override { return true; }

  // SYMMETRIC = 1 (not a kernel constant): the planner's word that the matrix is declared
  // symmetric and built whole from one triangle (the converter keeps only the upper entries of the
  // kept diagonals); without it the estimate says why not and the converter refuses.
  std::vector<FormatParams> candidates(const CsrRef& a, const MatrixStats& s,
                                       const TargetInfo& t) const override {
    if (!s.symmetric) return {FormatParams{}};
    if (s.hermitian) return {FormatParams{{kSymmetricParam, 1}, {kHermitianParam, 1}}};
    FormatParams p{{kSymmetricParam, 1}};
    if (bakes_diags(t, a.value) && s.sample) {
      const SampleOffsets so = sample_offsets(a, s);
      set_diags(p, so.ok ? int64_t(so.offsets.size()) : 0);
    }
    return {p};
  }
  std::vector<FormatParams> kernel_variants(const TargetInfo& t, ValueType v) const override {
    if (is_complex(v)) return {FormatParams{}, FormatParams{{kHermitianParam, 1}}};
    std::vector<FormatParams> out{FormatParams{}};
    if (bakes_diags(t, v))
      for (int64_t k = 2; k <= kMaxBakedDiags; ++k) out.push_back(FormatParams{{kDiagsParam, k}});
    return out;
  }
  FormatParams kernel_constants(const FormatParams& p) const override {
    FormatParams k = p;
    k.erase(kSymmetricParam);
    return k;
  }

  Estimate estimate(const CsrRef& a, const MatrixStats& s, const FormatParams& p,
                    const TargetInfo& t) const override {
    Estimate e;
    if (!s.symmetric || !p.count(kSymmetricParam)) {
      e.applicable = false;
      e.reason = "the matrix is not declared symmetric (spmv_options_t::matrix_type)";
      return e;
    }
    if (hermitian(p) != s.hermitian) {
      e.applicable = false;
      e.reason = s.hermitian
                     ? "the matrix is declared Hermitian: HERMITIAN = 1 conjugates its mirrored entries"
                     : "HERMITIAN = 1 is for complex matrices declared Hermitian";
      return e;
    }
    const int64_t is = int64_t(size_of(a.index)), vs = int64_t(size_of(a.value));
    SampleOffsets so = sample_offsets(a, s);
    if (!so.ok) {
      e.applicable = false;
      e.reason =
          "not banded: more than " + std::to_string(4 * SYM_DIAG_MAX) + " upper diagonals in the row sample";
      return e;
    }
    const double scale = s.sample->scale(a.rows);
    const std::vector<int64_t>& off = so.offsets;
    const int64_t upper = so.upper;
    double on_diag = 0, on_main = 0;
    for (int64_t d : off) (d ? on_diag : on_main) += double(so.count[d]);
    // Remainder: the upper entries off the kept diagonals, stored for both triangles.
    const double rem = std::max(0.0, 2 * (double(upper) - on_diag - on_main) * scale);
    const int64_t k = int64_t(off.size()),
                  stride = ceil_div(a.rows, SYM_DIAG_STRIDE_ALIGN) * SYM_DIAG_STRIDE_ALIGN;
    e.stored_entries = k * stride + int64_t(rem);
    e.matrix_bytes = k * stride * vs + k * is + (a.rows + 1) * is + int64_t(rem) * (is + vs);
    e.cost_bytes = double(e.matrix_bytes) + 2.0 * double(k) * double(a.rows);  // a branch per read
    if (double(off.back()) * double(k * vs) > band_budget(t)) e.cost_bytes += double(k * stride * vs);
    e.imbalance = t.gpu() ? gpu_row_starvation(a.rows, t) : 1.0;
    if (e.stored_entries > slice_util::kMaxPaddingFactor * s.nnz + stride) {
      e.applicable = false;
      e.reason = "padding to about " + std::to_string(e.stored_entries) + " values for " +
                 std::to_string(s.nnz) + " nonzeros";
      return e;
    }
    const double half = double(s.nnz + a.rows) / 2;
    e.reason = "symmetric: " + std::to_string(k) + " upper diagonals hold about " +
               std::to_string(
                   half > 0 ? std::min<int64_t>(100, int64_t(100 * (on_diag + on_main) * scale / half)) : 0) +
               "% of one triangle";
    return e;
  }

  void to_triplets(const FormatData& d, const CsrRef& shape, std::vector<Triplet>& out) const override {
    const int64_t k = d.ints[SYM_DIAG_N_DIAGS], stride = d.ints[SYM_DIAG_N_STRIDE];
    const bool conj = hermitian(d.params);
    dispatch_types_complex(shape.index, shape.value, [&]<class I, class V>() {
      const I* off = d.arrays[SYM_DIAG_OFFSET].buf.template as<I>();
      const V* dv = d.arrays[SYM_DIAG_VALUES].buf.template as<V>();
      const I* rp = d.arrays[SYM_DIAG_REM_PTR].buf.template as<I>();
      const I* rc = d.arrays[SYM_DIAG_REM_COL].buf.template as<I>();
      const V* rv = d.arrays[SYM_DIAG_REM_VALUES].buf.template as<V>();
      for (int64_t j = 0; j < k; ++j)
        for (int64_t i = 0; i + int64_t(off[j]) < shape.rows; ++i) {
          const V v = dv[j * stride + i];
          if (v == V(0)) continue;
          out.push_back(make_triplet(i, i + int64_t(off[j]), v));
          if (!off[j]) continue;
          Triplet m = make_triplet(i + int64_t(off[j]), i, v);
          if (conj) m.imag = -m.imag;
          out.push_back(m);
        }
      for (int64_t r = 0; r < shape.rows; ++r)
        for (int64_t q = rp[r]; q < rp[r + 1]; ++q)
          if (rv[q] != V(0)) out.push_back(make_triplet(r, int64_t(rc[q]), rv[q]));
    });
  }

  FormatData convert(const CsrRef& a, const FormatParams& p, const TargetInfo& t) const override {
    return dispatch_types_complex(a.index, a.value, [&]<class I, class V>() { return build<I, V>(a, p, t); });
  }

 private:
  // The upper offsets in the row sample (its rows keep the matrix's offsets col - row): their
  // entry counts and the ones keep_offsets keeps; not ok when the sample has too many to be banded.
  struct SampleOffsets {
    bool ok = false;
    std::map<int64_t, int64_t> count;
    int64_t upper = 0;
    std::vector<int64_t> offsets;
  };
  static SampleOffsets sample_offsets(const CsrRef& a, const MatrixStats& s) {
    SampleOffsets so;
    const CsrRef smp = s.sample->ref();
    const int64_t* srp = smp.rp<int64_t>();
    const int64_t* sci = smp.ci<int64_t>();
    for (int64_t r = 0; r < smp.rows && so.count.size() <= 4 * SYM_DIAG_MAX; ++r)
      for (int64_t k = srp[r]; k < srp[r + 1]; ++k)
        if (sci[k] >= r) ++so.count[sci[k] - r], ++so.upper;
    if (so.count.size() > 4 * SYM_DIAG_MAX) return so;
    so.offsets =
        keep_offsets(so.count, a.rows, smp.rows, int64_t(size_of(a.index)), int64_t(size_of(a.value)));
    so.ok = true;
    return so;
  }
  // DIAGS = k when the kernel bakes that count, else absent.
  static void set_diags(FormatParams& p, int64_t k) {
    if (k >= 2 && k <= kMaxBakedDiags)
      p[kDiagsParam] = k;
    else
      p.erase(kDiagsParam);
  }

  // The upper offsets of the whole matrix, counted per block of rows in the contract's small
  // table (a stencil's rows share a handful); a block with more distinct ones is not banded.
  template <class I>
  static std::vector<int64_t> choose(const CsrRef& a, int threads) {
    const I* rp = a.rp<I>();
    const I* ci = a.ci<I>();
    const int64_t blocks = ceil_div(a.rows, kBlockRows);
    std::vector<std::map<int64_t, int64_t>> counts(static_cast<size_t>(threads));
    std::atomic<bool> scattered{false};
    parallel_for(blocks, threads, [&](int64_t b0, int64_t b1, int chunk) {
      long long off[SELL_DIAG_TABLE], cnt[SELL_DIAG_TABLE];
      for (int64_t b = b0; b < b1 && !scattered.load(std::memory_order_relaxed); ++b) {
        const int64_t r0 = b * kBlockRows, r1 = std::min(a.rows, r0 + kBlockRows);
        const long long m = sell_diag_table(
            [&](auto&& f) {
              for (int64_t r = r0; r < r1; ++r)
                for (int64_t k = rp[r]; k < rp[r + 1]; ++k)
                  if (int64_t(ci[k]) >= r && !f(int64_t(ci[k]) - r)) return;
            },
            1, off, cnt);
        if (m < 0) {
          scattered = true;
          return;
        }
        for (long long j = 0; j < m; ++j) counts[size_t(chunk)][off[j]] += cnt[j];
      }
    });
    if (scattered)
      fail(SPMV_STATUS_UNSUPPORTED, "sym_diag: more than " + std::to_string(int(SELL_DIAG_TABLE)) +
                                        " distinct upper diagonals within " + std::to_string(kBlockRows) +
                                        " rows");
    std::map<int64_t, int64_t> all;
    for (const auto& c : counts)
      for (const auto& [d, n] : c) all[d] += n;
    return keep_offsets(all, a.rows, 0, int64_t(sizeof(I)), int64_t(size_of(a.value)));
  }

  template <class I, class V>
  FormatData build(const CsrRef& a, const FormatParams& p, const TargetInfo& tg) const {
    if (!p.count(kSymmetricParam))
      fail(SPMV_STATUS_UNSUPPORTED,
           "sym_diag: the matrix is not declared symmetric (spmv_options_t::matrix_type)");
    if (a.rows != a.cols) fail(SPMV_STATUS_UNSUPPORTED, "sym_diag: the matrix is not square");
    const int threads = plan_threads(a.nnz + a.rows);
    const std::vector<int64_t> offs = choose<I>(a, threads);
    const int64_t k = int64_t(offs.size());
    const int64_t stride = ceil_div(a.rows, SYM_DIAG_STRIDE_ALIGN) * SYM_DIAG_STRIDE_ALIGN;
    slice_util::check_padding("sym_diag", k * stride, a.nnz, stride, double(sizeof(V)), sizeof(I) == 4);
    FormatParams kp = p;  // the kernel's DIAGS from this matrix, whatever the caller guessed
    set_diags(kp, bakes_diags(tg, a.value) ? k : 0);
    FormatData d;
    d.declare(name(), kp, contract_arrays(), a.index, a.value);
    I* off = d.make<I>(SYM_DIAG_OFFSET, k);
    for (int64_t j = 0; j < k; ++j) off[j] = I(offs[size_t(j)]);
    V* dv = d.make<V>(SYM_DIAG_VALUES, k * stride);
    I* rem_ptr = d.make<I>(SYM_DIAG_REM_PTR, a.rows + 1);
    const I* rp = a.rp<I>();
    const I* ci = a.ci<I>();
    const V* av = a.vals<V>();
    // Row r's entry k: the kept diagonal it sits on (index into offs, upper or mirrored), or -1.
    auto diag_of = [&](int64_t r, int64_t c) -> int64_t {
      const int64_t dd = c >= r ? c - r : r - c;
      const auto it = std::lower_bound(offs.begin(), offs.end(), dd);
      return it != offs.end() && *it == dd ? int64_t(it - offs.begin()) : -1;
    };
    // Row r's entries in order: on_diag(q, j, c) for its first entry on each kept diagonal j and
    // side (upper c >= r, or lower), on_rest(q) for the others (off the kept diagonals, duplicates).
    // `seen` holds, per (diagonal, side), the row that last took it.
    auto walk_row = [&](int64_t r, std::vector<int64_t>& seen, auto&& on_diag, auto&& on_rest) {
      for (int64_t q = rp[r]; q < rp[r + 1]; ++q) {
        const int64_t c = int64_t(ci[q]), j = diag_of(r, c);
        const size_t side = j < 0 ? 0 : size_t(2 * j + (c < r));
        if (j < 0 || seen[side] == r) {
          on_rest(q);
          continue;
        }
        seen[side] = r;
        on_diag(q, j, c);
      }
    };
    // Pass 1: zero the diagonals, place the upper entries on them, count each row's remainder. A
    // row's first lower entry on a kept diagonal is its upper twin's mirror (the matrix is
    // symmetric): pass 2 counts those, as a check.
    std::atomic<int64_t> placed_upper{0};
    parallel_for(k * stride, threads,
                 [&](int64_t e0, int64_t e1, int) { std::fill(dv + e0, dv + e1, V(0)); });
    parallel_for(a.rows, threads, [&](int64_t r0, int64_t r1, int) {
      std::vector<int64_t> seen(size_t(2 * k), -1);
      int64_t placed = 0;
      for (int64_t r = r0; r < r1; ++r) {
        int64_t rem = 0;
        walk_row(
            r, seen,
            [&](int64_t q, int64_t j, int64_t c) {
              if (c >= r) dv[j * stride + r] = av[q], placed += (c > r);
            },
            [&](int64_t) { ++rem; });
        rem_ptr[r + 1] = I(rem);
      }
      placed_upper += placed;
    });
    rem_ptr[0] = 0;
    for (int64_t r = 0; r < a.rows; ++r) rem_ptr[r + 1] += rem_ptr[r];
    const int64_t nrem = int64_t(rem_ptr[a.rows]);
    I* rc = d.make<I>(SYM_DIAG_REM_COL, nrem);
    V* rv = d.make<V>(SYM_DIAG_REM_VALUES, nrem);
    // Pass 2: the remainder, and the mirrored entries counted: as many as upper ones placed off
    // the main diagonal, or the pattern is not symmetric on the kept diagonals.
    std::atomic<int64_t> mirrored{0};
    parallel_for(a.rows, threads, [&](int64_t r0, int64_t r1, int) {
      std::vector<int64_t> seen(size_t(2 * k), -1);
      int64_t mine = 0;
      for (int64_t r = r0; r < r1; ++r) {
        int64_t fill = int64_t(rem_ptr[r]);
        walk_row(
            r, seen, [&](int64_t, int64_t, int64_t c) { mine += c < r; },
            [&](int64_t q) { rc[fill] = ci[q], rv[fill++] = av[q]; });
      }
      mirrored += mine;
    });
    if (mirrored != placed_upper)
      fail(SPMV_STATUS_UNSUPPORTED, "sym_diag: the pattern is not symmetric on the kept diagonals");
    d.stored_entries = k * stride + nrem;
    d.matrix_bytes = sum_matrix_bytes(d);
    d.ints[SYM_DIAG_N_DIAGS] = k;
    d.ints[SYM_DIAG_N_STRIDE] = stride;
    d.ints[SYM_DIAG_N_REM_ENTRIES] = nrem;
    const int64_t full_bytes = int64_t(sizeof(I) + sizeof(V)) * a.nnz + int64_t(sizeof(I)) * (a.rows + 1);
    d.facts = Json::object({{"diagonals", k},
                            {"max_offset", offs.back()},
                            {"remainder_entries", nrem},
                            {"csr_bytes", full_bytes},
                            {"bytes_saved_vs_csr", full_bytes - d.matrix_bytes}});
    if (tg.gpu() && a.rows > 0)
      d.steps.push_back({"spmvjit_part", ceil_div(a.rows, SYM_DIAG_GPU_BLOCK), SYM_DIAG_GPU_BLOCK, 0});
    if (tg.backend == BackendKind::cpu)
      set_cpu_parts(d, SYM_DIAG_PARTS, split_prefix(a.rows, tg.threads, [&](int64_t u) {
                      return u * (2 * k + 2) + int64_t(rem_ptr[u]);
                    }));
    return d;
  }
};

}  // namespace

SPMVJIT_REGISTER_FORMAT(SymDiagFormat)

}  // namespace spmvjit
