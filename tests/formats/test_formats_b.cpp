// Tests of sellp, sell_block, sell_diag and csr5: exact round trips of the converters (CPU and
// GPU layouts) and SpMV through the C API on the CPU against the long-double reference.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "core/cpu_count.hpp"
#include "engine/formats/format.hpp"
#include "engine/gen/generators.hpp"
#include "engine/reference.hpp"
#include "engine/stats.hpp"
#include "spmvjit/spmvjit.hpp"
#include "tests/test_matrices.hpp"
#include "tests/test_support.hpp"

using namespace spmvjit;
using test::from_rows;
using test::triplets_of;

namespace {

const char* const kFormats[] = {"sellp", "sell_block", "sell_diag", "csr5"};
using Csr64 = HostCsr<int64_t, double>;

// Rows with huge length, empty runs, unsorted columns and a duplicate: the API allows all.
Csr64 awkward_matrix(int64_t huge) {
  Csr64 a;
  a.rows = 40;
  a.cols = huge + 10;
  for (int64_t r = 0; r < a.rows; ++r) {
    if (r == 17) {
      for (int64_t c = 0; c < huge; ++c) a.col_idx.push_back(c), a.val.push_back(double((c % 13) - 6) / 7);
    } else if (r % 5 != 0 && r > 2 && r < 37) {  // empty rows at both ends and every 5th row
      for (int64_t c : {r + 3, r, r + 1, r})     // unsorted, and column r twice
        a.col_idx.push_back(c), a.val.push_back(0.5 + double(r) / 64);
    }
    a.row_ptr.push_back(int64_t(a.col_idx.size()));
  }
  return a;
}

Csr64 shaped(int64_t rows, int64_t cols) {
  Csr64 a;
  a.rows = rows, a.cols = cols;
  a.row_ptr.assign(size_t(rows) + 1, 0);
  return a;
}

struct Case {
  std::string name;
  Csr64 m;
};

std::vector<Case> cases() {
  std::vector<Case> out;
  for (const char* spec :
       {"poisson2d:30", "diag:500:7", "blocks:300:4:4", "random:400:1:40", "powerlaw:3000",
        "denserows:500:3:8", "short:500:2", "dense:40:50", "random:37:1:40:1000", "stencil27:8"})
    out.push_back({spec, generate_matrix(spec, 7)});
  out.push_back({"0x0", shaped(0, 0)});
  out.push_back({"9x4 no nonzeros", shaped(9, 4)});
  Csr64 one = shaped(1, 1);
  one.row_ptr = {0, 1}, one.col_idx = {0}, one.val = {3.0};
  out.push_back({"1x1", one});
  out.push_back({"huge row", awkward_matrix(300000)});
  // Explicit zeros must survive conversion (and not show in the round trip).
  Csr64 z = generate_matrix("poisson2d:20", 1);
  for (size_t k = 0; k < z.val.size(); k += 7) z.val[k] = 0;
  out.push_back({"explicit zeros", z});
  return out;
}

// Converts with every candidate (CPU layout with 3 parts, GPU layout) and compares triplets.
// Returns false when the format refuses the matrix (padding), which only sliced formats may.
template <class I, class V>
void check_round_trip(const Format& f, const HostCsr<I, V>& a, const std::string& what) {
  const auto expect = triplets_of(a);
  const MatrixStats s = compute_stats(a.ref());
  for (BackendKind b : {BackendKind::cpu, BackendKind::cuda}) {
    TargetInfo t;
    t.backend = b;
    t.simd_bytes = 64;
    t.threads = 3;
    for (const FormatParams& p : f.candidates(a.ref(), s, t)) {
      INFO(f.name() << " " << what << " " << to_string(b) << " " << params_json(p).dump());
      FormatData d;
      try {
        d = f.convert(a.ref(), p, t);
      } catch (const Error& e) {
        INFO(e.what());
        CHECK(e.status() == SPMV_STATUS_UNSUPPORTED);
        CHECK(f.name() != "csr5");
        CHECK(std::string(e.what()).find("padding") != std::string::npos);
        continue;
      }
      std::vector<Triplet> got;
      f.to_triplets(d, a.ref(), got);
      test::sort_triplets(got);
      REQUIRE(got.size() == expect.size());
      CHECK(got == expect);
      if (b == BackendKind::cpu) CHECK(!d.steps.empty());
    }
  }
}

// y = alpha*A*x + beta*y through the C API with the format forced; every epilogue.
template <class I, class V>
void check_spmv(const char* format, const HostCsr<I, V>& a, const std::string& what, uint64_t seed) {
  if (!test::require_cpu_backend()) return;
  const spmv_csr_t c =
      csr_view<I, V>(a.rows, a.cols, a.nnz(), a.row_ptr.data(), a.col_idx.data(), a.val.data());
  spmv_options_t o;
  spmv_options_init(&o);
  o.backend = SPMV_BACKEND_CPU;
  o.format = format;
  o.threads = 3;
  o.log_level = SPMV_LOG_OFF;
  INFO(format << " on " << what << " (" << sizeof(I) * 8 << "-bit index, " << sizeof(V) * 8 << "-bit value)");
  spmv_plan_t plan = nullptr;
  const spmv_status_t st = spmv_plan(&plan, &c, &o);
  if (st == SPMV_STATUS_UNSUPPORTED && std::string(format) != "csr5") {
    // Allowed only where the format's own estimate says it does not apply.
    INFO(spmv_last_error());
    const Format* f = find_format(format);
    const MatrixStats s = compute_stats(a.ref());
    TargetInfo t;
    t.simd_bytes = 64;
    bool any = false;
    for (const auto& p : f->candidates(a.ref(), s, t)) any |= f->estimate(a.ref(), s, p, t).applicable;
    CHECK_FALSE(any);
    return;
  }
  INFO(spmv_last_error());
  REQUIRE(st == SPMV_STATUS_SUCCESS);
  const struct { double alpha, beta; } runs[] = {{1, 0}, {-1.5, 0}, {1, 0.5}, {2.5, -0.75}};
  for (const auto& run : runs) {
    INFO("alpha " << run.alpha << " beta " << run.beta);
    const auto x = random_vector<V>(a.cols, seed++);
    std::vector<V> y = random_vector<V>(a.rows, seed++);
    const auto ref = reference_spmv(a, run.alpha, x.data(), run.beta, y.data());
    if (run.beta == 0) std::fill(y.begin(), y.end(), std::numeric_limits<V>::quiet_NaN());
    const V al = V(run.alpha), be = V(run.beta);
    REQUIRE(spmv_execute(plan, &al, x.data(), &be, y.data(), nullptr) == SPMV_STATUS_SUCCESS);
    CHECK(check_spmv(a, ref, y.data()) == "");
  }
  spmv_plan_destroy(plan);
}

template <class I, class V>
void run_types() {
  uint64_t seed = 11;
  for (const Case& c : cases()) {
    const HostCsr<I, V> a = c.m.template cast<I, V>();
    for (const char* f : kFormats) {
      check_round_trip(*find_format(f), a, c.name);
      check_spmv(f, a, c.name, seed);
      seed += 8;
    }
  }
}

}  // namespace

TEST_CASE("formats b: int32 float", "[formats]") { run_types<int32_t, float>(); }
TEST_CASE("formats b: int32 double", "[formats]") { run_types<int32_t, double>(); }
TEST_CASE("formats b: int64 float", "[formats]") { run_types<int64_t, float>(); }
TEST_CASE("formats b: int64 double", "[formats]") { run_types<int64_t, double>(); }

TEST_CASE("formats b: many parts on a large matrix and rows over 2^20", "[formats]") {
  // Big enough that the plan keeps several threads (parts) for every format.
  check_spmv<int32_t, double>("sellp", generate_matrix("poisson2d:300").cast<int32_t, double>(),
                              "poisson2d:300", 1);
  check_spmv<int32_t, double>("sell_block", generate_matrix("blocks:60000:4:4").cast<int32_t, double>(),
                              "blocks", 2);
  check_spmv<int32_t, double>("sell_diag", generate_matrix("poisson2d:300").cast<int32_t, double>(),
                              "poisson2d:300", 3);
  check_spmv<int64_t, float>("csr5", generate_matrix("powerlaw:60000").cast<int64_t, float>(),
                             "powerlaw:60000", 4);
  const Csr64 big = awkward_matrix((int64_t(1) << 20) + 5);
  check_spmv<int64_t, double>("csr5", big, "row of 2^20 + 5", 5);
  check_round_trip<int64_t, double>(*find_format("csr5"), big, "row of 2^20 + 5");
}

TEST_CASE("sell and sellp: dense rows' slices split between plan threads", "[formats]") {
  // Large enough for two plan threads (core/parallel.hpp); sorted, the 3 dense rows share the first
  // slice, whose columns the threads split between them (sell), and rows are read out of order.
  if (process_threads() < 2) WARN("one plan thread: the split is not exercised");
  const Csr64 a = generate_matrix("denserows:60000:3:8", 5);
  for (const char* name : {"sell", "sellp"}) {
    check_round_trip<int32_t, double>(*find_format(name), a.cast<int32_t, double>(), "denserows:60000:3:8");
    check_round_trip<int64_t, float>(*find_format(name), a.cast<int64_t, float>(), "denserows:60000:3:8");
    check_spmv<int32_t, double>(name, a.cast<int32_t, double>(), "denserows:60000:3:8", 21);
  }
}

TEST_CASE("formats b: padding blow-up is refused with the padded size", "[formats]") {
  const Csr64 a = awkward_matrix(300000);
  TargetInfo t;
  t.simd_bytes = 64;
  for (const char* name : {"sellp", "sell_block", "sell_diag"}) {
    const Format& f = *find_format(name);
    const MatrixStats s = compute_stats(a.ref());
    const FormatParams p = f.candidates(a.ref(), s, t).front();
    CHECK_FALSE(f.estimate(a.ref(), s, p, t).applicable);
    try {
      f.convert(a.ref(), p, t);
      FAIL(std::string(name) + " converted a matrix whose padding blows up");
    } catch (const Error& e) {
      CHECK(e.status() == SPMV_STATUS_UNSUPPORTED);
      INFO(e.what());
      CHECK(std::string(e.what()).find("nonzeros to 2400") != std::string::npos);  // 8 rows x 300000
    }
  }
}

TEST_CASE("formats b: compressed indices pay off where they should", "[formats]") {
  TargetInfo t;
  t.simd_bytes = 64;
  auto csr_cost = [&](const Csr64& a) {
    const MatrixStats s = compute_stats(a.ref());
    return find_format("csr")->estimate(a.ref(), s, {}, t).cost_bytes;
  };
  auto best = [&](const char* name, const Csr64& a) {
    const MatrixStats s = compute_stats(a.ref());
    const Format& f = *find_format(name);
    double c = std::numeric_limits<double>::infinity();
    for (const auto& p : f.candidates(a.ref(), s, t)) {
      const Estimate e = f.estimate(a.ref(), s, p, t);
      if (e.applicable) c = std::min(c, e.cost_bytes * e.imbalance);
    }
    return c;
  };
  for (const char* spec : {"poisson2d:200", "diag:20000:9", "stencil27:20"}) {
    INFO(spec);
    const Csr64 a = generate_matrix(spec);
    CHECK(best("sell_diag", a) < 0.8 * csr_cost(a));
    const FormatData d = find_format("sell_diag")->convert(a.ref(), {{"C", 8}}, t);
    CHECK(d.facts["index_bytes_saved"].as_int() >= 0);
    CHECK(d.matrix_bytes < int64_t(a.nnz() * 10));  // about values only
  }
  const Csr64 b = generate_matrix("blocks:20000:4:4");
  CHECK(best("sell_block", b) < 0.8 * csr_cost(b));
  const Csr64 r = generate_matrix("random:20000:1:40");
  const MatrixStats s = compute_stats(r.ref());
  const Estimate e = find_format("sell_block")->estimate(r.ref(), s, {{"B", 4}, {"C", 8}}, t);
  CHECK_FALSE(e.applicable);
  CHECK(e.reason.find("more bytes than CSR") != std::string::npos);
}
