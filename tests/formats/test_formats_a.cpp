// coo, csr_vector, ell, hyb, jds, merge: converter round trips (CPU and CUDA layouts) and CPU
// SpMV through the C API against the long-double reference, for every index/value type pair.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "engine/formats/format.hpp"
#include "engine/gen/generators.hpp"
#include "engine/reference.hpp"
#include "engine/stats.hpp"
#include "spmvjit/spmvjit.h"
#include "tests/test_support.hpp"
#include "tests/test_matrices.hpp"

namespace {

using namespace spmvjit;
using test::from_rows;
using test::triplets_of;
using Csr64 = HostCsr<int64_t, double>;

const char* const kFormats[] = {"coo", "csr_vector", "ell", "hyb", "jds", "merge"};

struct Named {
  std::string name;
  Csr64 a;
};

// Row `at` holds `len` entries (columns 0..len-1); the others 0..3 entries; `cols` >= len.
Csr64 long_row_matrix(int64_t rows, int64_t at, int64_t len) {
  std::vector<std::vector<std::pair<int64_t, double>>> r(static_cast<size_t>(rows));
  const auto v = random_vector<double>(len + 4 * rows, 5);
  size_t vi = 0;
  for (int64_t i = 0; i < rows; ++i) {
    if (i == at) {
      for (int64_t c = 0; c < len; ++c) r[size_t(i)].push_back({c, v[vi++]});
    } else {
      for (int64_t k = 0; k < i % 4; ++k)
        r[size_t(i)].push_back({(i * 7919 + k * 104729) % len, v[vi++]});
      std::sort(r[size_t(i)].begin(), r[size_t(i)].end());
      r[size_t(i)].erase(std::unique(r[size_t(i)].begin(), r[size_t(i)].end(),
                                     [](auto& x, auto& y) { return x.first == y.first; }),
                         r[size_t(i)].end());
    }
  }
  return from_rows(rows, len, r);
}

const std::vector<Named>& matrices() {
  static const std::vector<Named> m = [] {
    std::vector<Named> out;
    for (const char* spec :
         {"poisson2d:40", "random:700:1:40", "powerlaw:4000", "denserows:3000:4:6", "short:2000:3",
          "dense:48", "random:37:5:60:1000", "powerlaw:60000:1.8"})
      out.push_back({spec, generate_matrix(spec, 3)});
    out.push_back({"0x0", Csr64{}});
    Csr64 z;
    z.rows = 5, z.cols = 3, z.row_ptr.assign(6, 0);
    out.push_back({"5x3 no nonzeros", z});
    out.push_back({"1x1", from_rows(1, 1, {{{0, 2.5}}})});
    out.push_back(
        {"empty rows",
         from_rows(9, 6, {{}, {{1, 1.0}, {4, -2.0}}, {}, {}, {{0, 3.0}}, {}, {{5, 0.5}}, {}, {}})});
    // Explicit zeros stay in the layout (round trip drops them; SpMV does not care).
    Csr64 zeros = generate_matrix("random:300:1:12", 9);
    for (size_t k = 0; k < zeros.val.size(); k += 3) zeros.val[k] = 0.0;
    out.push_back({"explicit zeros", std::move(zeros)});
    out.push_back({"one 300000 row", long_row_matrix(4000, 1234, 300000)});
    out.push_back({"row longer than 2^20", long_row_matrix(6, 2, (int64_t(1) << 20) + 3)});
    return out;
  }();
  return m;
}

template <class I, class V>
void check_round_trip(const Format& f, const Named& m, BackendKind backend) {
  const HostCsr<I, V> a = m.a.cast<I, V>();
  const CsrRef ref = a.ref();
  TargetInfo t;
  t.backend = backend;
  t.threads = 3;
  t.warp_size = 32;
  t.sm_count = backend == BackendKind::cpu ? 0 : 4;  // small grid: several warps share rows
  const MatrixStats s = compute_stats(ref);
  for (const FormatParams& p : f.candidates(ref, s, t)) {
    INFO(f.name() << " " << params_json(p).dump() << " on " << m.name << " (" << to_string(backend) << ")");
    const Estimate e = f.estimate(ref, s, p, t);
    if (!e.applicable) {
      // Refused cleanly: the converter agrees, and the reason names the padded size.
      CHECK(e.reason.find("slots") != std::string::npos);
      try {
        f.convert(ref, p, t);
        FAIL("converter accepted what the estimate refused");
      } catch (const Error& err) {
        CHECK(err.status() == SPMV_STATUS_UNSUPPORTED);
      }
      continue;
    }
    const FormatData d = f.convert(ref, p, t);
    CHECK(d.stored_entries == e.stored_entries);
    CHECK(d.stored_entries >= a.nnz());
    CHECK(!d.steps.empty());
    std::vector<Triplet> got;
    f.to_triplets(d, ref, got);
    test::sort_triplets(got);
    std::vector<Triplet> want = triplets_of(a.template cast<int64_t, double>());
    for (auto& w : want) w.value = double(V(w.value));
    REQUIRE(got.size() == want.size());
    CHECK(got == want);
  }
}

template <class I, class V>
void check_spmv(const char* format, const Named& m, uint64_t seed) {
  if (!test::require_cpu_backend()) return;
  const HostCsr<I, V> a = m.a.cast<I, V>();
  spmv_csr_t c{};
  c.rows = a.rows, c.cols = a.cols, c.nnz = a.nnz();
  c.row_ptr = a.row_ptr.data(), c.col_idx = a.col_idx.data(), c.values = a.val.data();
  c.index_type = sizeof(I) == 4 ? SPMV_INDEX_INT32 : SPMV_INDEX_INT64;
  c.value_type = sizeof(V) == 4 ? SPMV_VALUE_FLOAT : SPMV_VALUE_DOUBLE;
  spmv_options_t o;
  spmv_options_init(&o);
  o.backend = SPMV_BACKEND_CPU;
  o.format = format;
  o.threads = 3;  // more parts than cores: shared rows and carries get exercised
  o.cache_dir = "";
  INFO(format << " on " << m.name << " index " << sizeof(I) * 8 << " value " << sizeof(V) * 8);
  spmv_plan_t plan = nullptr;
  const spmv_status_t st = spmv_plan(&plan, &c, &o);
  if (std::string(format) == "ell" && st == SPMV_STATUS_UNSUPPORTED) {
    // Only when the padding rule says so.
    int64_t w = 0;
    for (int64_t r = 0; r < a.rows; ++r)
      w = std::max<int64_t>(w, int64_t(a.row_ptr[size_t(r) + 1] - a.row_ptr[size_t(r)]));
    CHECK(double(a.rows) * double(w) > 3.0 * double(a.nnz()) + double(a.rows));
    CHECK(std::string(spmv_last_error()).find("slots") != std::string::npos);
    return;
  }
  REQUIRE(st == SPMV_STATUS_SUCCESS);
  for (int variant = 0; variant < 4; ++variant) {
    const V alpha = (variant & 2) ? V(1) : V(-0.75);
    const V beta = (variant & 1) ? V(0) : V(1.5);
    INFO("alpha " << double(alpha) << " beta " << double(beta));
    const auto x = random_vector<V>(a.cols, seed + 10 * uint64_t(variant) + 1);
    auto y = random_vector<V>(a.rows, seed + 10 * uint64_t(variant) + 2);
    if (beta == V(0)) std::fill(y.begin(), y.end(), std::numeric_limits<V>::quiet_NaN());
    const ReferenceResult ref = reference_spmv(a, double(alpha), x.data(), double(beta), y.data());
    REQUIRE(spmv_execute(plan, &alpha, x.data(), &beta, y.data(), nullptr) == SPMV_STATUS_SUCCESS);
    CHECK(spmvjit::check_spmv(a, ref, y.data()) == "");
    // A second execute with fresh inputs: scratch and carries must not leak between calls.
    const auto x2 = random_vector<V>(a.cols, seed + 10 * uint64_t(variant) + 3);
    if (beta == V(0)) std::fill(y.begin(), y.end(), std::numeric_limits<V>::quiet_NaN());
    const ReferenceResult ref2 =
        reference_spmv(a, double(alpha), x2.data(), double(beta), y.data());
    REQUIRE(spmv_execute(plan, &alpha, x2.data(), &beta, y.data(), nullptr) == SPMV_STATUS_SUCCESS);
    CHECK(spmvjit::check_spmv(a, ref2, y.data()) == "");
  }
  // New values for the same pattern: every values array of the layout must follow.
  HostCsr<I, V> b = a;
  for (auto& v : b.val) v = V(2) * v - V(0.25);
  REQUIRE(spmv_plan_update_values(plan, b.val.data(), SPMV_MEMORY_HOST) == SPMV_STATUS_SUCCESS);
  const V alpha = V(1.25), beta = V(-0.5);
  const auto x = random_vector<V>(a.cols, seed + 97);
  auto y = random_vector<V>(a.rows, seed + 98);
  const ReferenceResult ref = reference_spmv(b, double(alpha), x.data(), double(beta), y.data());
  REQUIRE(spmv_execute(plan, &alpha, x.data(), &beta, y.data(), nullptr) == SPMV_STATUS_SUCCESS);
  CHECK(spmvjit::check_spmv(b, ref, y.data()) == "");
  spmv_plan_destroy(plan);
}

template <class I, class V>
void run_all_types_case() {
  uint64_t seed = 100;
  for (const char* name : kFormats) {
    const Format* f = find_format(name);
    REQUIRE(f != nullptr);
    for (const Named& m : matrices()) {
      check_round_trip<I, V>(*f, m, BackendKind::cpu);
      check_round_trip<I, V>(*f, m, BackendKind::cuda);
      check_spmv<I, V>(name, m, seed++);
    }
  }
}

}  // namespace

TEST_CASE("formats a: int32 float", "[formats]") { run_all_types_case<int32_t, float>(); }
TEST_CASE("formats a: int32 double", "[formats]") { run_all_types_case<int32_t, double>(); }
TEST_CASE("formats a: int64 float", "[formats]") { run_all_types_case<int64_t, float>(); }
TEST_CASE("formats a: int64 double", "[formats]") { run_all_types_case<int64_t, double>(); }

TEST_CASE("ell refuses blown-up padding without allocating it", "[formats]") {
  // One dense row of 200000 among 200000 rows: ELL would need 4e10 slots.
  const Csr64 a = long_row_matrix(200000, 7, 200000);
  const CsrRef ref = a.ref();
  const MatrixStats s = compute_stats(ref);
  const Format& f = *find_format("ell");
  TargetInfo t;
  const Estimate e = f.estimate(ref, s, {}, t);
  CHECK_FALSE(e.applicable);
  CHECK(e.reason.find("200000 rows to width 200000 gives 40000000000 slots") != std::string::npos);
  try {
    f.convert(ref, {}, t);
    FAIL("ell converted a 4e10-slot layout");
  } catch (const Error& err) {
    CHECK(err.status() == SPMV_STATUS_UNSUPPORTED);
  }
}

TEST_CASE("hyb width follows the one-third rule", "[formats]") {
  // 30 rows: lengths 0..29 -> on the CPU, the 10th longest row (length 20) sets K.
  std::vector<std::vector<std::pair<int64_t, double>>> r(30);
  for (int64_t i = 0; i < 30; ++i)
    for (int64_t c = 0; c < i; ++c) r[size_t(i)].push_back({c, 1.0});
  const Csr64 a = from_rows(30, 30, r);
  const CsrRef ref = a.ref();
  const MatrixStats s = compute_stats(ref);
  TargetInfo cpu, gpu;
  gpu.backend = BackendKind::cuda;
  CHECK(find_format("hyb")->candidates(ref, s, cpu).at(0).at("K") == 20);
  CHECK(find_format("hyb")->candidates(ref, s, gpu).at(0).at("K") == 0);  // below 4096 rows
}

TEST_CASE("csr_vector picks L from the mean row length", "[formats]") {
  const Csr64 a = generate_matrix("random:500:10:12", 1);  // mean ~11 -> 16
  const CsrRef ref = a.ref();
  const MatrixStats s = compute_stats(ref);
  TargetInfo cpu, gpu;
  cpu.simd_bytes = 64;
  gpu.backend = BackendKind::cuda;
  CHECK(find_format("csr_vector")->candidates(ref, s, cpu).at(0).at("L") == 16);
  CHECK(find_format("csr_vector")->candidates(ref, s, gpu).at(0).at("L") == 16);
  const Csr64 b = generate_matrix("random:50:100:200:1000", 1);
  const MatrixStats sb = compute_stats(b.ref());
  CHECK(find_format("csr_vector")->candidates(b.ref(), sb, gpu).at(0).at("L") == 32);
  CHECK(find_format("csr_vector")->candidates(b.ref(), sb, cpu).at(0).at("L") ==
        16);  // 2 x 8 lanes
}
