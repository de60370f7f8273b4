// Tests of bsr: exact round trips (CPU and GPU layouts) and the CPU kernel of every block shape
// on edge-case matrices, with the device build of the GPU layout; SpMV through the C API on
// blocked matrices against the long-double reference; the sampled shape choice and estimates,
// from the statistics alone; refusal of blown-up fill.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "codegen/kernel_spec.hpp"
#include "engine/formats/bsr_blocks.hpp"
#include "engine/formats/format.hpp"
#include "engine/gen/generators.hpp"
#include "engine/planner.hpp"
#include "engine/reference.hpp"
#include "engine/stats.hpp"
#include "runtime/backend.hpp"
#include "runtime/cache/kernel_cache.hpp"
#include "spmvjit/spmvjit.hpp"
#include "tests/formats/emulated_device.hpp"
#include "tests/test_matrices.hpp"
#include "tests/test_support.hpp"

using namespace spmvjit;
using test::from_rows;
using test::triplets_of;

namespace {

using Csr64 = HostCsr<int64_t, double>;
constexpr int64_t kSides[] = {1, 2, 3, 4, 6, 8};

const Format& bsr() { return *find_format("bsr"); }

// Keeps the first `rows` rows and the columns below `cols`: a blocked matrix whose last block
// row and column are partial.
Csr64 truncated(const Csr64& a, int64_t rows, int64_t cols) {
  test::RowLists r(static_cast<size_t>(rows));
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t k = a.row_ptr[size_t(i)]; k < a.row_ptr[size_t(i) + 1]; ++k)
      if (a.col_idx[size_t(k)] < cols) r[size_t(i)].push_back({a.col_idx[size_t(k)], a.val[size_t(k)]});
  return from_rows(rows, cols, r);
}

// Rows whose index is in [lo, hi) or a multiple of `every` lose their entries.
Csr64 emptied(const Csr64& a, int64_t lo, int64_t hi, int64_t every) {
  test::RowLists r(static_cast<size_t>(a.rows));
  for (int64_t i = 0; i < a.rows; ++i) {
    if ((i >= lo && i < hi) || i % every == 0) continue;
    for (int64_t k = a.row_ptr[size_t(i)]; k < a.row_ptr[size_t(i) + 1]; ++k)
      r[size_t(i)].push_back({a.col_idx[size_t(k)], a.val[size_t(k)]});
  }
  return from_rows(a.rows, a.cols, r);
}

// Row `at` becomes fully dense.
Csr64 with_dense_row(const Csr64& a, int64_t at) {
  test::RowLists r(static_cast<size_t>(a.rows));
  for (int64_t i = 0; i < a.rows; ++i) {
    if (i == at) {
      for (int64_t c = 0; c < a.cols; ++c) r[size_t(i)].push_back({c, 0.25 + double(c % 7) / 8});
      continue;
    }
    for (int64_t k = a.row_ptr[size_t(i)]; k < a.row_ptr[size_t(i) + 1]; ++k)
      r[size_t(i)].push_back({a.col_idx[size_t(k)], a.val[size_t(k)]});
  }
  return from_rows(a.rows, a.cols, r);
}

// Every row reversed (unsorted), with its first column repeated (a duplicate the API allows).
Csr64 unsorted_with_duplicates(const Csr64& a) {
  test::RowLists r(static_cast<size_t>(a.rows));
  for (int64_t i = 0; i < a.rows; ++i) {
    const int64_t b = a.row_ptr[size_t(i)], e = a.row_ptr[size_t(i) + 1];
    for (int64_t k = e - 1; k >= b; --k) r[size_t(i)].push_back({a.col_idx[size_t(k)], a.val[size_t(k)]});
    if (e > b) r[size_t(i)].push_back({a.col_idx[size_t(b)], -0.5});
  }
  return from_rows(a.rows, a.cols, r);
}

struct Case {
  std::string name;
  Csr64 m;
};

// Small matrices with every edge the layout has; all kernels run on them.
std::vector<Case> edge_cases() {
  std::vector<Case> out;
  const Csr64 fem = generate_matrix("blockfem:3:2", 3);  // 54 x 54, 2x2 blocks exactly
  out.push_back({"blockfem:3:2", fem});
  out.push_back({"blockfem:2:3", generate_matrix("blockfem:2:3", 4)});
  out.push_back({"24x48 dense (m != n)", generate_matrix("dense:24:48", 5)});
  out.push_back({"53 x 49 cut from blockfem", truncated(fem, 53, 49)});
  out.push_back({"29 x 37 random", generate_matrix("random:29:0:9:37", 6)});
  out.push_back({"empty rows and block rows", emptied(fem, 8, 24, 5)});
  out.push_back({"one dense row", with_dense_row(fem, 29)});
  out.push_back({"unsorted with duplicates", unsorted_with_duplicates(truncated(fem, 31, 54))});
  Csr64 z = fem;
  for (size_t k = 0; k < z.val.size(); k += 5) z.val[k] = 0;
  out.push_back({"explicit zeros", z});
  out.push_back({"1x1", from_rows(1, 1, {{{0, 2.5}}})});
  out.push_back({"0x0", from_rows(0, 0, {})});
  out.push_back({"0x5", from_rows(0, 5, {})});
  out.push_back({"5x0", from_rows(5, 0, {})});
  out.push_back({"7x7 no nonzeros", from_rows(7, 7, {})});
  return out;
}

TargetInfo cpu_target(int threads) {
  TargetInfo t;
  t.simd_bytes = 64;
  t.threads = threads;
  return t;
}

TargetInfo gpu_target() {
  TargetInfo t;
  t.backend = BackendKind::cuda;
  t.target = "sm_90";
  t.sm_count = 132;
  return t;
}

FormatParams shape(int64_t r, int64_t c, int64_t cols) {
  return {{"R", r}, {"C", c}, {"COL_EDGE", cols % c != 0}};
}

// Converts; false when the format refuses for padding (the only refusal allowed).
bool convert(const CsrRef& a, const FormatParams& p, const TargetInfo& t, FormatData* d) {
  try {
    *d = bsr().convert(a, p, t);
    return true;
  } catch (const Error& e) {
    INFO(e.what());
    CHECK(e.status() == SPMV_STATUS_UNSUPPORTED);
    CHECK(std::string(e.what()).find("padding") != std::string::npos);
    return false;
  }
}

template <class I, class V>
void check_round_trip(const FormatData& d, const HostCsr<I, V>& a) {
  std::vector<Triplet> got;
  bsr().to_triplets(d, a.ref(), got);
  test::sort_triplets(got);
  CHECK(got == triplets_of(a));
  CHECK(d.stored_entries == d.arrays[2].count);
  CHECK(d.matrix_bytes == sum_matrix_bytes(d));
}

// Runs a converted CPU layout's kernel directly (any shape, not only the planner's candidates)
// with four epilogues: beta == 0 on NaN-poisoned y, beta != 0, alpha == 1 and not. Returns "" or
// what went wrong; canaries past y's end must survive.
template <class I, class V>
std::string run_cpu_kernel(const FormatData& d, const HostCsr<I, V>& a, uint64_t seed) {
  Backend& b = get_backend(BackendKind::cpu, 0);
  const KernelSpec spec = spec_for(b.target(), "bsr", bsr().template_name(), index_type_of<I>(),
                                   value_type_of<V>(), bsr().kernel_constants(d.params));
  CacheOutcome o;
  const auto module = get_kernel(b, spec, resolve_cache_dir(nullptr), &o);
  SpmvArgs args{};
  for (size_t i = 0; i < d.arrays.size(); ++i) args.a[i] = d.arrays[i].buf.data();
  for (int i = 0; i < kMaxArrays; ++i) args.n[i] = d.ints[i];
  args.rows = a.rows;
  args.cols = a.cols;
  const auto exec = b.make_executor(2);
  const double alphas[] = {1.0, -1.75, 1.0, 0.3}, betas[] = {0.0, 0.0, 0.5, -1.25};
  for (int c = 0; c < 4; ++c) {
    const auto x = random_vector<V>(a.cols, seed * 8 + 2 * c);
    std::vector<V> y = random_vector<V>(a.rows + 4, seed * 8 + 2 * c + 1);
    const auto ref = reference_spmv(a, alphas[c], x.data(), betas[c], y.data());
    if (betas[c] == 0) std::fill(y.begin(), y.begin() + a.rows, std::numeric_limits<V>::quiet_NaN());
    std::fill(y.begin() + a.rows, y.end(), V(12345));
    args.x = x.data();
    args.y = y.data();
    args.alpha = double(V(alphas[c]));
    args.beta = double(V(betas[c]));
    const int e = (betas[c] == 0 ? kEpilogueBetaZero : 0) | (alphas[c] == 1 ? kEpilogueAlphaOne : 0);
    for (const LaunchStep& s : d.steps)
      exec->run(module->entry(s.entry + "_" + std::to_string(e)), s, args, nullptr);
    const std::string what =
        "alpha " + std::to_string(alphas[c]) + ", beta " + std::to_string(betas[c]) + ": ";
    const std::string bad = check_spmv(a, ref, y.data());
    if (!bad.empty()) return what + bad;
    for (int64_t k = a.rows; k < a.rows + 4; ++k)
      if (y[size_t(k)] != V(12345)) return what + "wrote past the end of y";
  }
  return "";
}

// The device build (run on the CPU, tests/formats/emulated_device.hpp) of `a` with index base
// `base` against the host's GPU layout: the same bytes, sizes, facts and launch.
template <class I, class V>
void check_device_build(const HostCsr<I, V>& a, int base, const FormatParams& p, const FormatData& host) {
  HostCsr<I, V> based = a;
  for (I& r : based.row_ptr) r += I(base);
  for (I& c : based.col_idx) c += I(base);
  test::EmulatedDevice dev(based.ref(), base);
  const FormatData d = bsr().convert_device(dev, p, gpu_target());
  INFO("device build, base " << base);
  REQUIRE(d.arrays.size() == host.arrays.size());
  for (size_t i = 0; i < d.arrays.size(); ++i) {
    INFO("slot " << i);
    REQUIRE(d.arrays[i].count == host.arrays[i].count);
    if (host.arrays[i].count)
      CHECK(std::memcmp(d.arrays[i].device.get(), host.arrays[i].buf.data(),
                        size_t(host.arrays[i].count) * host.arrays[i].elem) == 0);
  }
  for (int i = 0; i < kMaxArrays; ++i) CHECK(d.ints[i] == host.ints[i]);
  CHECK(d.stored_entries == host.stored_entries);
  CHECK(d.matrix_bytes == host.matrix_bytes);
  CHECK(d.facts.dump() == host.facts.dump());
  REQUIRE(d.steps.size() == 1);
  CHECK(d.steps[0].grid == host.steps[0].grid);
}

// Every shape on every edge case: CPU layout round trip and kernel, GPU layout round trip, and
// the device build of the GPU layout (int32/float and int64/double; test_device_build.cpp runs
// every type pair on the planner's candidates).
template <class I, class V>
void every_shape_on_edge_cases() {
  uint64_t seed = 1;
  for (const Case& c : edge_cases()) {
    const HostCsr<I, V> a = c.m.template cast<I, V>();
    for (int64_t r : kSides)
      for (int64_t w : kSides) {
        if (r * w == 1) continue;
        INFO(c.name << " (" << a.rows << " x " << a.cols << "), " << r << "x" << w);
        FormatParams p = shape(r, w, a.cols);
        FormatData d;
        if (!convert(a.ref(), p, cpu_target(3), &d)) continue;
        check_round_trip(d, a);
        CHECK(d.steps.size() == 1);
        if (test::require_cpu_backend()) CHECK(run_cpu_kernel(d, a, ++seed) == "");
        p["G"] = 8;
        FormatData g;
        REQUIRE(convert(a.ref(), p, gpu_target(), &g));
        check_round_trip(g, a);
        CHECK(g.arrays[3].count == 0);  // no parts on a GPU
        CHECK(g.ints[1] == 3);          // log2(G)
        if (test::require_cpu_backend() && sizeof(I) == sizeof(V))
          for (int base : {0, 1}) check_device_build(a, base, p, g);
      }
  }
}

// y = alpha*A*x + beta*y through the C API with bsr forced (the planner picks its shape).
template <class I, class V>
void check_api(const HostCsr<I, V>& a, const std::string& what, uint64_t seed, const char* format = "bsr") {
  if (!test::require_cpu_backend()) return;
  const spmv_csr_t c =
      csr_view<I, V>(a.rows, a.cols, a.nnz(), a.row_ptr.data(), a.col_idx.data(), a.val.data());
  spmv_options_t o;
  spmv_options_init(&o);
  o.backend = SPMV_BACKEND_CPU;
  o.format = format;
  o.threads = 3;
  o.log_level = SPMV_LOG_OFF;
  INFO(what << " (" << sizeof(I) * 8 << "-bit index, " << sizeof(V) * 8 << "-bit value)");
  spmv_plan_t plan = nullptr;
  REQUIRE(spmv_plan(&plan, &c, &o) == SPMV_STATUS_SUCCESS);
  const char* json = nullptr;
  REQUIRE(spmv_plan_describe(plan, &json) == SPMV_STATUS_SUCCESS);
  CHECK(test::json_string_field(json, "format") == "bsr");
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

// Blocked matrices on which bsr is a candidate, with the edges the kernels must handle.
std::vector<Case> api_cases() {
  std::vector<Case> out;
  for (const char* spec : {"blockfem:6:2", "blockfem:5:3", "blockfem:4:4", "blockfem:3:6", "blocks:300:4:4"})
    out.push_back({spec, generate_matrix(spec, 8)});
  const Csr64 fem = generate_matrix("blockfem:6:3", 9);  // 648 x 648
  out.push_back({"647 x 646 cut from blockfem:6:3", truncated(fem, 647, 646)});
  out.push_back({"640 x 648 (m != n)", truncated(fem, 640, 648)});
  out.push_back({"empty rows", emptied(fem, 100, 160, 97)});
  out.push_back({"one dense row", with_dense_row(fem, 301)});
  out.push_back({"unsorted with duplicates", unsorted_with_duplicates(fem)});
  return out;
}

template <class I, class V>
void api_types() {
  uint64_t seed = 100;
  for (const Case& c : api_cases()) {
    check_api(c.m.template cast<I, V>(), c.name, seed);
    seed += 8;
  }
  // Where no shape stores fewer bytes than CSR the forced format does not apply, cleanly.
  if (!test::require_cpu_backend()) return;
  for (const Csr64& m :
       {from_rows(1, 1, {{{0, 2.5}}}), from_rows(0, 4, {}), generate_matrix("random:300", 2)}) {
    const HostCsr<I, V> a = m.template cast<I, V>();
    const spmv_csr_t c =
        csr_view<I, V>(a.rows, a.cols, a.nnz(), a.row_ptr.data(), a.col_idx.data(), a.val.data());
    spmv_options_t o;
    spmv_options_init(&o);
    o.backend = SPMV_BACKEND_CPU;
    o.format = "bsr";
    o.log_level = SPMV_LOG_OFF;
    spmv_plan_t plan = nullptr;
    CHECK(spmv_plan(&plan, &c, &o) == SPMV_STATUS_UNSUPPORTED);
    CHECK(plan == nullptr);
  }
}

}  // namespace

TEST_CASE("bsr: every shape on edge cases, int32 float", "[formats][bsr]") {
  every_shape_on_edge_cases<int32_t, float>();
}
TEST_CASE("bsr: every shape on edge cases, int32 double", "[formats][bsr]") {
  every_shape_on_edge_cases<int32_t, double>();
}
TEST_CASE("bsr: every shape on edge cases, int64 float", "[formats][bsr]") {
  every_shape_on_edge_cases<int64_t, float>();
}
TEST_CASE("bsr: every shape on edge cases, int64 double", "[formats][bsr]") {
  every_shape_on_edge_cases<int64_t, double>();
}

TEST_CASE("bsr: C API on blocked matrices, int32 float", "[formats][bsr]") { api_types<int32_t, float>(); }
TEST_CASE("bsr: C API on blocked matrices, int32 double", "[formats][bsr]") { api_types<int32_t, double>(); }
TEST_CASE("bsr: C API on blocked matrices, int64 float", "[formats][bsr]") { api_types<int64_t, float>(); }
TEST_CASE("bsr: C API on blocked matrices, int64 double", "[formats][bsr]") { api_types<int64_t, double>(); }

TEST_CASE("bsr: the sampled shape is the matrix's block size, and irregular matrices get none",
          "[formats][bsr]") {
  const TargetInfo t = cpu_target(2);
  for (int64_t b : {2, 3, 4, 6}) {
    const Csr64 a = generate_matrix("blockfem:12:" + std::to_string(b), 1);
    const MatrixStats s = compute_stats(a.ref());
    const auto cands = bsr().candidates(a.ref(), s, t);
    INFO("blockfem:12:" << b);
    REQUIRE(!cands.empty());
    CHECK(cands.size() <= 3);
    CHECK(cands.front().at("R") == b);
    CHECK(cands.front().at("C") == b);
    CHECK(cands.front().at("COL_EDGE") == 0);
    // The sampled estimate is close to the exact count: (3N-2)^3 node couplings, one block each.
    const Estimate e = bsr().estimate(a.ref(), s, cands.front(), t);
    const double exact = 34.0 * 34 * 34 * double(b * b);
    CHECK(e.applicable);
    CHECK(std::abs(double(e.stored_entries) - exact) < 0.05 * exact);
    const FormatData d = bsr().convert(a.ref(), cands.front(), t);
    CHECK(d.stored_entries == int64_t(exact));
    CHECK(e.cost_bytes < find_format("csr")->estimate(a.ref(), s, {}, t).cost_bytes);
    // The GPU's lanes per block row: the mean blocks per block row (34^3 / 12^3 = 22.7) rounded up
    // to a power of two.
    int found = 0;
    for (const FormatParams& g : bsr().candidates(a.ref(), s, gpu_target())) {
      if (g.at("R") != b || g.at("C") != b) continue;
      CHECK(g.at("G") == 32);
      ++found;
    }
    CHECK(found == 1);
  }
  for (const char* spec : {"random:20000:1:40", "powerlaw:20000", "poisson2d:100", "stencil27:20",
                           "short:5000", "denserows:5000:5:8"}) {
    INFO(spec);
    const Csr64 a = generate_matrix(spec, 1);
    CHECK(bsr().candidates(a.ref(), compute_stats(a.ref()), t).empty());
  }
  // Dense: every shape stores no zeros; 8x8 (fewest index bytes) ranks first.
  const Csr64 dense = generate_matrix("dense:64:64", 1);
  const auto dc = bsr().candidates(dense.ref(), compute_stats(dense.ref()), t);
  REQUIRE(dc.size() == 3);
  CHECK(dc.front().at("R") * dc.front().at("C") == 64);
}

TEST_CASE("bsr: sampled fill is close to the converted one, also where the grid's period could alias",
          "[formats][bsr]") {
  // blockfem:30:3 once drew all 36 samples of 3x6 at x = 0 (evenly spaced 750 = 25 * 30 block rows
  // apart), where 3x6 blocks have no fill: estimated 1.00 for a true 1.32.
  const TargetInfo t = cpu_target(2);
  for (const char* spec : {"blockfem:30:3", "blockfem:17:2", "blocks:20000:4:4"}) {
    const auto a = generate_matrix(spec, 1).cast<int32_t, float>();
    const MatrixStats s = compute_stats(a.ref());
    for (const auto& [r, c] : {std::pair<int64_t, int64_t>{3, 6}, {2, 4}, {4, 4}, {3, 2}}) {
      INFO(spec << " " << r << "x" << c);
      const FormatParams p = shape(r, c, a.cols);
      FormatData d;
      if (!convert(a.ref(), p, t, &d)) continue;
      const double est = double(bsr().estimate(a.ref(), s, p, t).stored_entries);
      CHECK(std::abs(est - double(d.stored_entries)) < 0.05 * double(d.stored_entries));
    }
  }
}

// The census (one merge per block height) counts what walking each shape counts, also where rows
// repeat a column (copies open repeated blocks, so those block rows walk every width).
TEST_CASE("bsr: the census counts every width as the walk of that shape does", "[formats][bsr]") {
  std::vector<Case> cases;
  for (const char* spec : {"blockfem:12:3", "varband:3000", "dense:120", "random:3000:0:30", "poisson2d:40",
                           "powerlaw:4000", "lpwide:3000"})
    cases.push_back({spec, generate_matrix(spec, 11)});
  cases.push_back(
      {"unsorted with duplicates", unsorted_with_duplicates(generate_matrix("blockfem:6:2", 12))});
  int compared = 0;
  for (const Case& m : cases) {
    const MatrixStats s = compute_stats(m.m.ref());
    REQUIRE(s.sample);
    for (int64_t r : bsr_blocks::kSides) {
      const auto all = bsr_blocks::sample_widths(*s.sample, r);
      for (size_t j = 0; j < std::size(bsr_blocks::kSides); ++j) {
        INFO(m.name << ", " << r << " x " << bsr_blocks::kSides[j]);
        const bsr_blocks::Sample one = bsr_blocks::sample_shape(*s.sample, r, bsr_blocks::kSides[j]);
        CHECK(all[j].blocks == one.blocks);
        CHECK(all[j].entries == one.entries);
        compared += one.blocks > 0;
      }
    }
  }
  CHECK(compared == int(cases.size() * 36));
}

TEST_CASE("bsr: candidates and estimates read only the statistics, and estimate the conversion",
          "[formats][bsr]") {
  // A CSR in device memory has no host arrays: the row sample stands in for them, and host and
  // device input get the same plan. Stored values within 5% of the conversion's on every
  // candidate (measured: at most 1.3%).
  double worst = 0;
  for (const char* spec : {"blockfem:12:2", "blockfem:20:3", "blockfem:12:4", "blockfem:8:6", "dense:300",
                           "diag:20000:9", "blocks:20000:4:4", "poisson2d:100", "random:20000:1:40"}) {
    const auto a = generate_matrix(spec, 1).cast<int32_t, double>();
    const MatrixStats s = compute_stats(a.ref());
    CsrRef none = a.ref();
    none.row_ptr = none.col_idx = none.val = nullptr;
    for (const TargetInfo& t : {cpu_target(2), gpu_target()}) {
      const auto cands = bsr().candidates(a.ref(), s, t);
      CHECK(bsr().candidates(none, s, t) == cands);
      for (const FormatParams& p : cands) {
        INFO(spec << " " << params_json(p).dump());
        const Estimate e = bsr().estimate(a.ref(), s, p, t), n = bsr().estimate(none, s, p, t);
        CHECK(n.stored_entries == e.stored_entries);
        CHECK(n.cost_bytes == e.cost_bytes);
        CHECK(n.imbalance == e.imbalance);
        FormatData d;
        REQUIRE(convert(a.ref(), p, t, &d));
        const double rel = std::abs(double(e.stored_entries - d.stored_entries)) / double(d.stored_entries);
        const double rel_bytes = std::abs(double(e.matrix_bytes - d.matrix_bytes)) / double(d.matrix_bytes);
        worst = std::max({worst, rel, rel_bytes});
        CHECK(rel < 0.05);
        CHECK(rel_bytes < 0.05);
      }
    }
  }
  WARN("worst relative error of bsr's stored-value and byte estimates: " << worst);
}

TEST_CASE("bsr: the CPU planner picks it on block FEM and dense matrices, and not on the others",
          "[formats][bsr]") {
  const TargetInfo t = cpu_target(2);
  for (const char* spec : {"blockfem:12:2", "blockfem:10:3", "blockfem:8:4", "dense:200"}) {
    INFO(spec);
    const Csr64 a = generate_matrix(spec, 1);
    CHECK(choose_format(a.ref(), compute_stats(a.ref()), t, nullptr).format->name() == "bsr");
  }
  for (const char* spec : {"poisson2d:200", "stencil27:20", "random:20000:1:40", "powerlaw:20000",
                           "denserows:20000:10:16", "short:50000:2", "diag:20000:9"}) {
    INFO(spec);
    const Csr64 a = generate_matrix(spec, 1);
    CHECK(choose_format(a.ref(), compute_stats(a.ref()), t, nullptr).format->name() != "bsr");
  }
}

TEST_CASE("bsr: fill that would blow memory is refused before allocating", "[formats][bsr]") {
  const Csr64 a = generate_matrix("diag:5000:1", 1);  // 5000 nonzeros, 8x8 blocks store 64 per 8
  try {
    bsr().convert(a.ref(), shape(8, 8, a.cols), cpu_target(2));
    FAIL("bsr converted a matrix whose fill blows up");
  } catch (const Error& e) {
    CHECK(e.status() == SPMV_STATUS_UNSUPPORTED);
    INFO(e.what());
    CHECK(std::string(e.what()).find("padding 5000 nonzeros to 40000") != std::string::npos);
  }
  // A wrong COL_EDGE would read x out of range, a side outside the set has no kernel: refused.
  const Csr64 b = generate_matrix("random:30:1:5:31", 1);
  for (const FormatParams& p : {shape(2, 2, 32), shape(5, 2, 31), shape(2, 5, 31), shape(1, 1, 31)}) {
    INFO(params_json(p));
    try {
      bsr().convert(b.ref(), p, cpu_target(2));
      FAIL("converted with bad parameters");
    } catch (const Error& e) {
      CHECK(e.status() == SPMV_STATUS_INVALID_VALUE);
    }
  }
}

TEST_CASE("bsr: far more columns than entries converts without scratch of every column", "[formats][bsr]") {
  // 2^34 columns and 300 entries (fuzz_plan found the per-thread marks of every block column,
  // 32 GiB here): the layout must come out exact, and fast.
  const int64_t cols = int64_t(1) << 34;
  test::RowLists r(40);
  for (int64_t i = 0; i < 40; ++i)
    for (int64_t j = 0; j < 8; ++j)
      if ((i + j) % 3) r[size_t(i)].push_back({(j << 31) + i / 2 * 2 + j % 2, double(i + 1) + double(j) / 8});
  const Csr64 a = from_rows(40, cols, r);
  for (const auto& [br, bc] : {std::pair{2, 2}, std::pair{1, 2}, std::pair{2, 1}}) {
    INFO(br << " x " << bc << " blocks");
    FormatData d;
    REQUIRE(convert(a.ref(), shape(br, bc, cols), cpu_target(2), &d));
    check_round_trip(d, a);
  }
}

TEST_CASE("bsr: update_values keeps the layout of explicit zeros", "[formats][bsr]") {
  if (!test::require_cpu_backend()) return;
  Csr64 a = generate_matrix("blockfem:5:3", 2);
  for (size_t k = 0; k < a.val.size(); k += 4) a.val[k] = 0;
  spmv_csr_t c{a.rows,
               a.cols,
               a.nnz(),
               a.row_ptr.data(),
               a.col_idx.data(),
               a.val.data(),
               SPMV_INDEX_INT64,
               SPMV_VALUE_DOUBLE,
               0,
               SPMV_MEMORY_HOST};
  spmv_options_t o;
  spmv_options_init(&o);
  o.backend = SPMV_BACKEND_CPU;
  o.format = "bsr";
  o.log_level = SPMV_LOG_OFF;
  // Without the zeros the layout holds the pattern; with them the plan keeps a copy (the
  // converter counts the zero values it places: no pass over the values).
  auto pattern_of = [&](spmv_plan_t p) {
    const char* json = nullptr;
    REQUIRE(spmv_plan_describe(p, &json) == SPMV_STATUS_SUCCESS);
    return test::json_string_field(json, "pattern");
  };
  {
    const Csr64 full = generate_matrix("blockfem:5:3", 2);
    spmv_csr_t f = c;
    f.values = full.val.data();
    spmv_plan_t p = nullptr;
    REQUIRE(spmv_plan(&p, &f, &o) == SPMV_STATUS_SUCCESS);
    CHECK(pattern_of(p) == "layout");
    spmv_plan_destroy(p);
  }
  spmv_plan_t plan = nullptr;
  REQUIRE(spmv_plan(&plan, &c, &o) == SPMV_STATUS_SUCCESS);
  CHECK(pattern_of(plan) != "layout");
  Csr64 fresh = a;
  fresh.val = random_vector<double>(a.nnz(), 3);
  REQUIRE(spmv_plan_update_values(plan, fresh.val.data(), SPMV_MEMORY_HOST) == SPMV_STATUS_SUCCESS);
  const auto x = random_vector<double>(a.cols, 4);
  std::vector<double> y(size_t(a.rows));
  const auto ref = reference_spmv(fresh, 1.0, x.data(), 0.0, y.data());
  const double one = 1, zero = 0;
  REQUIRE(spmv_execute(plan, &one, x.data(), &zero, y.data(), nullptr) == SPMV_STATUS_SUCCESS);
  CHECK(check_spmv(fresh, ref, y.data()) == "");
  spmv_plan_destroy(plan);
}
