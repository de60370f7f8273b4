// MatrixStats: the row-length distribution and structure facts the planner decides from.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "core/json.hpp"
#include "engine/csr.hpp"
#include "engine/sample.hpp"

namespace spmvjit {

struct MatrixStats {
  int64_t rows = 0;
  int64_t cols = 0;
  int64_t nnz = 0;
  int64_t row_min = 0;
  int64_t row_max = 0;
  double row_mean = 0;
  double row_std = 0;
  double row_cv = 0;  // std / mean; 0 for a perfectly regular matrix
  // hist[0] = empty rows, hist[k] = rows with length in [2^(k-1), 2^k).
  std::array<int64_t, 48> row_hist{};
  // len_count[l] = rows of exactly l nonzeros, for l < kShortLengths: exact widths and tails for
  // the padded formats (ell, hyb) without reading row_ptr again.
  static constexpr int kShortLengths = 64;
  std::array<int64_t, kShortLengths> len_count{};
  int64_t empty_rows = 0;
  // Facts about entries, read from the sampled rows that hold the sample's first kFactEntries
  // entries (sample below, RowSample::prefix_rows; every row when those are all of them), so that
  // statistics never read col_idx, on the host or on a device.
  static constexpr int64_t kDiagonalCap = 4096, kFactEntries = 16384;
  // Distinct values of (col - row) in those rows, counted up to kDiagonalCap + 1 when first asked,
  // then kept (thread-safe: estimates run on several threads). Only the CPU's sell_diag and plans
  // of several vectors ask: the count took 0.37-0.53 ms on scattered matrices (circuit, rmat,
  // denserows, dense:2000; 2-vCPU VM), more than the rest of a GPU plan's statistics.
  int64_t distinct_diagonals() const;
  void set_distinct_diagonals(int64_t n) { diagonals_.n = n; }  // tests' reference statistics
  double dense_run_fraction = 0;  // nonzeros stored next to an adjacent column (c-1 or c+1)
  double avg_col_span = 0;        // mean over non-empty rows of (max col - min col + 1)
  bool facts_sampled = false;     // the rows read were not all of the matrix's
  // Declared symmetric (spmv_options_t::matrix_type): the CSR is the full A = A^T, built from the
  // triangle given, and formats that store one triangle (sym_diag) apply.
  bool symmetric = false;
  // Declared Hermitian with complex values: the full A = A^H (sym_diag conjugates the mirrors).
  bool hermitian = false;
  // A sample of whole row groups for the estimates that look at structure (diagonals, blocks):
  // from the host CSR, or gathered on the device for device-resident input.
  std::shared_ptr<const RowSample> sample;

  // Row-length facts the estimates read instead of rescanning row_ptr; a device computes the
  // same ones (engine/device_plan.cpp). Index k stands for 2^k rows or lanes, k = 0 .. 6. Facts
  // only one format needs are that format's to estimate (closed forms on these).
  static constexpr int kWidths = 7;
  std::array<int64_t, kWidths> slice_width_sum{};  // over slices of 2^k rows: the longest row
  std::array<int64_t, kWidths> lane_idle{};        // over rows: (-len) mod 2^k
  std::array<int64_t, kWidths> lane_rem{};         // over rows: len mod 2^k
  double seconds = 0;                              // time it took to compute these

  Json to_json() const;
  std::string to_text() const;  // human-readable block for `spmvjit inspect`

 private:
  struct Count {  // -1: not counted yet; copies take the count as it stands
    mutable std::atomic<int64_t> n{-1};
    Count() = default;
    Count(const Count& o) : n(o.n.load()) {}
    Count& operator=(const Count& o) {
      n = o.n.load();
      return *this;
    }
  };
  Count diagonals_;
};

// One O(rows) pass over row_ptr, then the row sample (O(sampled entries)).
MatrixStats compute_stats(const CsrRef& a);
// dense_run_fraction, avg_col_span and facts_sampled from s.sample (distinct_diagonals() counts
// on it when asked).
void sample_entry_facts(MatrixStats& s);
// Fills the derived fields (mean, std, cv) from rows, nnz and the sum of squared row lengths.
void finish_row_moments(MatrixStats& s, double sum_sq);

// Smallest k with 2^k >= n (n >= 1); used by histograms and power-of-two parameters.
int ceil_log2(int64_t n);

}  // namespace spmvjit
