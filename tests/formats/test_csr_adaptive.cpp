// csr_adaptive: converter round trips and layout invariants (CPU and CUDA layouts), a host replay
// of the GPU kernels' index arithmetic, and CPU SpMV through the C API against the reference.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "engine/formats/format.hpp"
#include "engine/gen/generators.hpp"
#include "engine/reference.hpp"
#include "engine/sample.hpp"
#include "engine/stats.hpp"
#include "spmvjit/spmvjit.h"
#include "tests/formats/emulated_device.hpp"
#include "tests/test_matrices.hpp"
#include "tests/test_support.hpp"

namespace {

using namespace spmvjit;
using test::from_rows;
using test::triplets_of;
using Csr64 = HostCsr<int64_t, double>;

constexpr int64_t kBlock = 256, kRows = 1024, kS = 2048;  // templates/gpu/csr_adaptive.cu
constexpr int64_t kCpuRows = 256;                              // engine/formats/csr_adaptive.cpp

struct Named {
  std::string name;
  Csr64 a;
};

// `rows` rows of 0..5 entries, with row `at` holding `len` entries (columns 0..len-1).
Csr64 huge_row_matrix(int64_t rows, int64_t at, int64_t len) {
  std::vector<std::vector<std::pair<int64_t, double>>> r(static_cast<size_t>(rows));
  const auto v = random_vector<double>(len + 6 * rows, 7);
  size_t vi = 0;
  for (int64_t i = 0; i < rows; ++i) {
    const int64_t n = i == at ? len : i % 6;
    for (int64_t c = 0; c < n; ++c) r[size_t(i)].push_back({i == at ? c : c * (len / 8), v[vi++]});
  }
  return from_rows(rows, len, r);
}

const std::vector<Named>& matrices() {
  static const std::vector<Named> m = [] {
    std::vector<Named> out;
    for (const char* spec : {"poisson2d:40", "random:700:1:40", "powerlaw:4000", "powerlaw:60000:1.8",
                             "denserows:5000:3:12", "short:3000:2", "dense:70", "random:37:5:60:1000",
                             "random:900:2000:2100:5000"})
      out.push_back({spec, generate_matrix(spec, 5)});
    out.push_back({"0x0", Csr64{}});
    Csr64 z;
    z.rows = 5, z.cols = 3, z.row_ptr.assign(6, 0);
    out.push_back({"5x3 no nonzeros", z});
    out.push_back({"1x1", from_rows(1, 1, {{{0, 2.5}}})});
    out.push_back({"empty rows", from_rows(9, 6, {{}, {{1, 1.0}, {4, -2.0}}, {}, {}, {{0, 3.0}}, {}, {{5, 0.5}}, {}, {}})});
    out.push_back({"one huge row", huge_row_matrix(3000, 1717, 100003)});
    out.push_back({"huge first and last rows", [] {
                     Csr64 a = huge_row_matrix(2, 0, 5000);
                     Csr64 b = huge_row_matrix(2, 1, 4097);
                     // rows: 5000 entries, 1 entry, 0 entries, 4097 entries
                     Csr64 c;
                     c.rows = 4, c.cols = 5000;
                     auto add = [&](const Csr64& m, int64_t r) {
                       for (int64_t k = m.row_ptr[size_t(r)]; k < m.row_ptr[size_t(r) + 1]; ++k)
                         c.col_idx.push_back(m.col_idx[size_t(k)]), c.val.push_back(m.val[size_t(k)]);
                       c.row_ptr.push_back(int64_t(c.col_idx.size()));
                     };
                     add(a, 0), add(a, 1), add(b, 0), add(b, 1);
                     return c;
                   }()});
    return out;
  }();
  return m;
}

// Replays templates/gpu/csr_adaptive.cu on the host: the 16-byte load units of every block
// (each nonzero counted exactly once), the lane groups of the reduction, the long-row chunks
// added after the stream step applied beta. Catches layout/index errors without a GPU.
template <class I, class V>
void replay_gpu(const FormatData& d, int64_t rows, double alpha, double beta, const std::vector<V>& x,
                std::vector<long double>& y) {
  const I* rp = d.arrays[0].buf.as<I>();
  const I* ci = d.arrays[1].buf.as<I>();
  const V* va = d.arrays[2].buf.as<V>();
  const I* blk = d.arrays[3].buf.as<I>();
  const I* crow = d.arrays[4].buf.as<I>();
  const I* cstart = d.arrays[5].buf.as<I>();
  const int64_t vec = 16 / int64_t(sizeof(V)), units = (kS / vec + 1 + kBlock - 1) / kBlock;
  const int64_t padded = d.arrays[1].count;
  auto products = [&](int64_t k0, int64_t k1, auto&& f) {
    std::vector<int> seen(size_t(k1 - k0), 0);
    const int64_t base = k0 & ~(vec - 1);
    for (int64_t t = 0; t < kBlock; ++t)
      for (int64_t j = 0; j < units; ++j) {
        const int64_t u = base + (t + j * kBlock) * vec;
        if (u >= k1) continue;
        REQUIRE(u + vec <= padded);  // the 16-byte load stays inside the padded array
        for (int64_t i = 0; i < vec; ++i)
          if (u + i >= k0 && u + i < k1) ++seen[size_t(u + i - k0)], f(u + i, (long double)va[u + i] * x[size_t(ci[u + i])]);
      }
    CHECK(std::all_of(seen.begin(), seen.end(), [](int s) { return s == 1; }));
  };
  const int64_t nb = d.ints[0], nc = d.ints[2];
  REQUIRE((nb > 0) == (rows > 0));
  for (int64_t b = 0; b < nb; ++b) {
    const int64_t r0 = blk[b], r1 = blk[b + 1], n = r1 - r0, k0 = rp[r0], k1 = rp[r1];
    REQUIRE(n >= 1);
    REQUIRE(n <= kRows);
    if (k1 - k0 > kS) {
      REQUIRE(n == 1);
      y[size_t(r0)] = beta == 0 ? 0 : beta * y[size_t(r0)];
      continue;
    }
    if (k1 - k0 < 2 * n) {  // thin row block: thread-per-row straight from global memory
      for (int64_t r = r0; r < r1; ++r) {
        long double s = 0;
        for (int64_t k = rp[r]; k < rp[r + 1]; ++k) s += (long double)va[k] * x[size_t(ci[k])];
        y[size_t(r)] = alpha * s + (beta == 0 ? 0 : beta * y[size_t(r)]);
      }
      continue;
    }
    std::vector<long double> prod(size_t(k1 - k0));
    products(k0, k1, [&](int64_t k, long double p) { prod[size_t(k - k0)] = p; });
    int64_t tpr = n == 1 ? kBlock : 32;
    while (tpr > 1 && tpr * n > kBlock) tpr >>= 1;  // past kBlock rows: one thread per row
    REQUIRE(tpr >= 1);
    for (int64_t r = r0; r < r1; ++r) {
      long double s = 0;
      for (int64_t g = 0; g < tpr; ++g)
        for (int64_t k = rp[r] - k0 + g; k < rp[r + 1] - k0; k += tpr) s += prod[size_t(k)];
      y[size_t(r)] = alpha * s + (beta == 0 ? 0 : beta * y[size_t(r)]);
    }
  }
  REQUIRE(blk[nb] == rows);
  for (int64_t c = 0; c < nc; ++c) {
    const int64_t r = crow[c], ks = cstart[c], ke = std::min<int64_t>(ks + kS, rp[r + 1]);
    REQUIRE(ks < ke);
    long double s = 0;
    products(ks, ke, [&](int64_t, long double p) { s += p; });
    y[size_t(r)] += alpha * s;
  }
}

template <class I, class V>
void check_layouts(const Named& m) {
  const HostCsr<I, V> a = m.a.cast<I, V>();
  const CsrRef ref = a.ref();
  const MatrixStats s = compute_stats(ref);
  const Format& f = *find_format("csr_adaptive");
  for (BackendKind backend : {BackendKind::cpu, BackendKind::cuda}) {
    INFO("csr_adaptive on " << m.name << " (" << to_string(backend) << ")");
    TargetInfo t;
    t.backend = backend;
    t.threads = 3;
    t.sm_count = backend == BackendKind::cpu ? 0 : 4;
    const FormatParams p = f.candidates(ref, s, t).at(0);
    const Estimate e = f.estimate(ref, s, p, t);
    REQUIRE(e.applicable);
    const FormatData d = f.convert(ref, p, t);
    CHECK(d.stored_entries == a.nnz());
    // The estimate counts the layout in closed form from the histogram: its bytes land within a
    // few percent of the layout's (the padding past nnz aside).
    const int64_t exact = d.matrix_bytes - int64_t(sizeof(I) + sizeof(V)) * (d.arrays[1].count - a.nnz());
    CHECK(std::abs(double(e.matrix_bytes - exact)) <= 0.03 * double(exact) + 64.0 * sizeof(I));
    CHECK(d.steps.size() == size_t((d.ints[0] > 0) + (d.ints[2] > 0)));
    std::vector<Triplet> got;
    f.to_triplets(d, ref, got);
    test::sort_triplets(got);
    std::vector<Triplet> want;
    for (int64_t r = 0; r < a.rows; ++r)
      for (int64_t k = a.row_ptr[size_t(r)]; k < a.row_ptr[size_t(r) + 1]; ++k)
        if (a.val[size_t(k)] != V(0)) want.push_back({r, int64_t(a.col_idx[size_t(k)]), double(a.val[size_t(k)])});
    CHECK(got == want);
    if (backend == BackendKind::cuda) {
      for (const double beta : {0.0, -0.5}) {
        const auto x = random_vector<V>(a.cols, 31);
        const auto y0 = random_vector<V>(a.rows, 32);
        std::vector<long double> y(y0.begin(), y0.end());
        if (beta == 0) std::fill(y.begin(), y.end(), std::numeric_limits<long double>::quiet_NaN());
        replay_gpu<I, V>(d, a.rows, 1.25, beta, x, y);
        std::vector<V> out(y.begin(), y.end());
        const ReferenceResult r = reference_spmv(a, 1.25, x.data(), beta, y0.data());
        CHECK(spmvjit::check_spmv(a, r, out.data()) == "");
      }
    }
  }
}

template <class I, class V>
void check_cpu_spmv(const Named& m, uint64_t seed) {
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
  o.format = "csr_adaptive";
  o.threads = 3;
  o.cache_dir = "";
  INFO("csr_adaptive on " << m.name << " index " << sizeof(I) * 8 << " value " << sizeof(V) * 8);
  spmv_plan_t plan = nullptr;
  REQUIRE(spmv_plan(&plan, &c, &o) == SPMV_STATUS_SUCCESS);
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
  }
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
void run_case() {
  uint64_t seed = 500;
  for (const Named& m : matrices()) {
    check_layouts<I, V>(m);
    check_cpu_spmv<I, V>(m, seed++);
  }
}

}  // namespace

TEST_CASE("csr_adaptive: int32 float", "[formats]") { run_case<int32_t, float>(); }
TEST_CASE("csr_adaptive: int32 double", "[formats]") { run_case<int32_t, double>(); }
TEST_CASE("csr_adaptive: int64 float", "[formats]") { run_case<int64_t, float>(); }
TEST_CASE("csr_adaptive: int64 double", "[formats]") { run_case<int64_t, double>(); }

TEST_CASE("csr_adaptive: row blocks and long-row chunks", "[formats]") {
  const Csr64 a = huge_row_matrix(3000, 1717, 100003);
  const CsrRef ref = a.ref();
  TargetInfo gpu;
  gpu.backend = BackendKind::cuda;
  const FormatData d = find_format("csr_adaptive")->convert(ref, {}, gpu);
  CHECK(d.ints[1] == 1);                            // one long row
  CHECK(d.ints[2] == (100003 + kS - 1) / kS);       // its chunks
  REQUIRE(d.steps.size() == 2);
  CHECK(d.steps[0].entry == "spmvjit_part");      // beta first, then the chunk atomics
  CHECK(d.steps[0].grid == d.ints[0]);
  CHECK(d.steps[1].entry == "spmvjit_long");
  CHECK(d.steps[1].grid == d.ints[2]);
  // 2999 rows of 0..5 entries (2.5 on average): blocks of at most 1024 rows and 2048 nonzeros
  // around the long row's own block.
  CHECK(d.ints[0] >= 2999 / kRows + 2);
  CHECK(d.ints[0] <= 2999 / kRows + 5);
  // The CPU layout keeps 256-row blocks (its cost is tuned on them).
  TargetInfo cpu;
  cpu.backend = BackendKind::cpu;
  cpu.threads = 2;
  const FormatData c = find_format("csr_adaptive")->convert(ref, {}, cpu);
  CHECK(c.ints[0] >= 2999 / kCpuRows + 2);
  CHECK(c.ints[0] <= 2999 / kCpuRows + 4);
}

TEST_CASE("csr_adaptive: GPU row blocks for short rows", "[formats]") {
  // 5000 rows of 0..2 entries: 1024-row blocks (thin, thread-per-row); 3000 rows of 8: blocks
  // bounded by 2048 nonzeros (256 rows).
  std::vector<std::vector<std::pair<int64_t, double>>> r(8000);
  for (int64_t i = 0; i < 8000; ++i)
    for (int64_t c = 0; c < (i < 5000 ? i % 3 : 8); ++c) r[size_t(i)].push_back({(i * 7 + c * 13) % 900, 1.0 + double(c)});
  const Csr64 a = from_rows(8000, 900, r);
  TargetInfo gpu;
  gpu.backend = BackendKind::cuda;
  const FormatData d = find_format("csr_adaptive")->convert(a.ref(), {}, gpu);
  const int64_t* blk = d.arrays[3].buf.as<int64_t>();
  REQUIRE(d.ints[0] >= 5000 / kRows + 3000 / 256);
  CHECK(blk[1] == kRows);
  CHECK(d.ints[0] <= 5000 / kRows + 1 + 3000 / 256 + 2);
}

TEST_CASE("csr_adaptive: 16-bit column offsets where the spans allow, refused where they do not",
          "[formats]") {
  const Format& f = *find_format("csr_adaptive");
  TargetInfo gpu;
  gpu.backend = BackendKind::cuda;
  gpu.sm_count = 4;
  const FormatParams c16{{kColBitsParam, 16}};
  auto offers = [&](const Csr64& a) {
    const auto c = f.candidates(a.ref(), compute_stats(a.ref()), gpu);
    return std::find(c.begin(), c.end(), c16) != c.end();
  };
  // A 5-point stencil over 250,000 columns: each row block spans about a thousand of them.
  const Csr64 band = generate_matrix("poisson2d:500", 3);
  REQUIRE(offers(band));
  const FormatData plain = f.convert(band.ref(), {}, gpu), packed = f.convert(band.ref(), c16, gpu);
  CHECK(packed.arrays[1].elem == 2);
  CHECK(packed.facts["col_bits"].as_int() == 16);
  // 8-byte columns become 2-byte offsets; one base column per row block costs 8 bytes.
  CHECK(plain.matrix_bytes - packed.matrix_bytes > 5.9 * double(band.nnz()));
  const Estimate e = f.estimate(band.ref(), compute_stats(band.ref()), c16, gpu);
  CHECK(std::abs(double(e.matrix_bytes - packed.matrix_bytes)) <= 0.03 * double(packed.matrix_bytes));

  // Columns drawn from 200,000: the sample says no, and a conversion asked anyway refuses, on the
  // host and on an (emulated) device alike.
  const Csr64 wide = generate_matrix("random:20000:1:20:200000", 4);
  CHECK_FALSE(offers(wide));
  auto refuses = [&](auto&& convert) {
    try {
      convert();
    } catch (const Error& e) {
      CHECK(e.status() == SPMV_STATUS_UNSUPPORTED);
      CHECK(std::string(e.what()).find("span more than 16 bits") != std::string::npos);
      return true;
    }
    return false;
  };
  CHECK(refuses([&] { f.convert(wide.ref(), c16, gpu); }));
  test::EmulatedDevice dev(wide.ref(), 0);
  CHECK(refuses([&] { f.convert_device(dev, c16, gpu); }));

  // The band plus one far entry in a row the sample does not read: offered, refused at conversion,
  // and a plan of csr_adaptive falls back to plain columns with the right product.
  Csr64 far = band;
  const MatrixStats s = compute_stats(band.ref());
  std::vector<bool> sampled(size_t(s.sample->matrix_groups), false);
  for (int64_t g = 0; g < s.sample->groups; ++g)
    sampled[size_t(sample_group_start(g, s.sample->groups, s.sample->matrix_groups) /
                   RowSample::kGroupRows)] = true;
  const auto unsampled = std::find(sampled.begin(), sampled.end(), false);
  REQUIRE(unsampled != sampled.end());
  const int64_t row = (unsampled - sampled.begin()) * RowSample::kGroupRows + 5;
  {  // append column cols-1 to `row` (its columns stay ascending)
    const int64_t at = far.row_ptr[size_t(row) + 1];
    far.col_idx.insert(far.col_idx.begin() + at, far.cols - 1);
    far.val.insert(far.val.begin() + at, 0.5);
    for (size_t r = size_t(row) + 1; r < far.row_ptr.size(); ++r) ++far.row_ptr[r];
  }
  CHECK(offers(far));
  CHECK(refuses([&] { f.convert(far.ref(), c16, gpu); }));
  test::EmulatedDevice far_dev(far.ref(), 0);
  CHECK(refuses([&] { f.convert_device(far_dev, c16, gpu); }));
  if (!test::require_cpu_backend()) return;
  spmv_csr_t c{};
  c.rows = far.rows, c.cols = far.cols, c.nnz = far.nnz();
  c.row_ptr = far.row_ptr.data(), c.col_idx = far.col_idx.data(), c.values = far.val.data();
  c.index_type = SPMV_INDEX_INT64, c.value_type = SPMV_VALUE_DOUBLE;
  spmv_options_t o;
  spmv_options_init(&o);
  o.backend = SPMV_BACKEND_CPU;
  o.format = "csr_adaptive";
  o.cache_dir = "";
  spmv_plan_t plan = nullptr;
  REQUIRE(spmv_plan(&plan, &c, &o) == SPMV_STATUS_SUCCESS);
  const char* desc = nullptr;
  REQUIRE(spmv_plan_describe(plan, &desc) == SPMV_STATUS_SUCCESS);
  const Json d = Json::parse(desc);
  CHECK(d["format"] == Json("csr_adaptive"));
  CHECK(d["params"].dump().find("COL_BITS") == std::string::npos);
  CHECK(d["planner"]["why"].as_string().find("fell back") != std::string::npos);
  const auto x = random_vector<double>(far.cols, 5);
  std::vector<double> y(size_t(far.rows), std::numeric_limits<double>::quiet_NaN());
  const double alpha = 1, beta = 0;
  REQUIRE(spmv_execute(plan, &alpha, x.data(), &beta, y.data(), nullptr) == SPMV_STATUS_SUCCESS);
  CHECK(spmvjit::check_spmv(far, reference_spmv(far, 1.0, x.data(), 0.0, y.data()), y.data()) == "");
  spmv_plan_destroy(plan);
}
