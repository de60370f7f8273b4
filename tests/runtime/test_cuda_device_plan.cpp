// Planning on the device for CSR arrays already in device memory: the device validates, computes
// the statistics and builds the arrays exactly as the host does (byte for byte), reports a bad
// matrix with the host's message, and its plans compute the reference SpMV.
#ifdef SPMVJIT_WITH_CUDA
#include <algorithm>
#include <catch2/catch.hpp>
#include <cstring>

#include "engine/device_plan.hpp"
#include "engine/formats/sliced_device.hpp"
#include "engine/gen/generators.hpp"
#include "engine/plan.hpp"
#include "engine/validate.hpp"
#include "engine/value_codec.hpp"
#include "runtime/device_buffer.hpp"
#include "tests/runtime/cuda_device_csr.hpp"
#include "tests/runtime/cuda_test_support.hpp"
#include "tests/test_matrices.hpp"

namespace spmvjit {
#include "templates/contract/csr_adaptive.h"
}

using namespace spmvjit;
using namespace spmvjit::cuda_test;

namespace {

void check_same_stats(const MatrixStats& dev, const MatrixStats& host) {
  // The same row sample on both sides (a sample of long rows cut short alike): the same entry facts.
  REQUIRE((dev.sample != nullptr) == (host.sample != nullptr));
  if (dev.sample) {
    CHECK(dev.sample->rows == host.sample->rows);
    CHECK(dev.sample->row_ptr == host.sample->row_ptr);
    CHECK(dev.sample->col_idx == host.sample->col_idx);
    CHECK(dev.sample->rows_ascending == host.sample->rows_ascending);
  }
  CHECK(dev.facts_sampled == host.facts_sampled);
  CHECK(dev.distinct_diagonals() == host.distinct_diagonals());
  CHECK(dev.dense_run_fraction == host.dense_run_fraction);
  CHECK(dev.avg_col_span == host.avg_col_span);
  CHECK(dev.rows == host.rows);
  CHECK(dev.cols == host.cols);
  CHECK(dev.nnz == host.nnz);
  CHECK(dev.row_min == host.row_min);
  CHECK(dev.row_max == host.row_max);
  CHECK(dev.row_mean == host.row_mean);
  CHECK(dev.row_std == Approx(host.row_std).epsilon(1e-9).margin(1e-12));
  CHECK(dev.empty_rows == host.empty_rows);
  CHECK(dev.row_hist == host.row_hist);
  CHECK(dev.len_count == host.len_count);
  // The row sample gathered on the device is the host's, entry for entry.
  REQUIRE(dev.sample);
  REQUIRE(host.sample);
  CHECK(dev.sample->groups == host.sample->groups);
  CHECK(dev.sample->rows == host.sample->rows);
  CHECK(dev.sample->row_ptr == host.sample->row_ptr);
  CHECK(dev.sample->col_idx == host.sample->col_idx);
  CHECK(dev.sample->rows_ascending == host.sample->rows_ascending);
  REQUIRE(dev.sample->values.bytes() == host.sample->values.bytes());
  if (host.sample->values.bytes())
    CHECK(std::memcmp(dev.sample->values.data(), host.sample->values.data(), host.sample->values.bytes()) ==
          0);
  CHECK(dev.slice_width_sum == host.slice_width_sum);
  CHECK(dev.lane_idle == host.lane_idle);
  CHECK(dev.lane_rem == host.lane_rem);
}

void check_same_data(const FormatData& dev, const FormatData& host) {
  CHECK(dev.format == host.format);
  CHECK(dev.params == host.params);
  REQUIRE(dev.arrays.size() == host.arrays.size());
  for (size_t i = 0; i < dev.arrays.size(); ++i) {
    const HostArray &d = dev.arrays[i], &h = host.arrays[i];
    INFO("array " << i << " " << h.name);
    CHECK(d.name == h.name);
    CHECK(d.kind == h.kind);
    REQUIRE(d.count == h.count);
    REQUIRE(d.elem == h.elem);
    CHECK(std::memcmp(d.buf.data(), h.buf.data(), size_t(h.count) * h.elem) == 0);
  }
  for (int i = 0; i < kMaxArrays; ++i) CHECK(dev.ints[i] == host.ints[i]);
  CHECK(dev.stored_entries == host.stored_entries);
  CHECK(dev.matrix_bytes == host.matrix_bytes);
  CHECK(dev.facts == host.facts);
  REQUIRE(dev.steps.size() == host.steps.size());
  for (size_t i = 0; i < dev.steps.size(); ++i) {
    CHECK(dev.steps[i].entry == host.steps[i].entry);
    CHECK(dev.steps[i].grid == host.steps[i].grid);
    CHECK(dev.steps[i].block == host.steps[i].block);
  }
}

// Plans `a` (in device memory as `d`) with format `name` on the device and checks the statistics,
// the arrays (against the host converter with the device's parameters) and the SpMVs. False when
// the format refused the matrix.
template <class I, class V>
bool device_plan_matches_host(Backend& b, const HostCsr<I, V>& a, const DeviceCsr<I, V>& d, const char* name,
                              uint64_t seed) {
  const spmv_options_t o = cuda_options(name);
  spmv_plan_t p = nullptr;
  const spmv_status_t st = spmv_plan(&p, &d.desc, &o);
  if (st == SPMV_STATUS_UNSUPPORTED && std::string(name) != "auto") return false;
  INFO(spmv_last_error());
  REQUIRE(st == SPMV_STATUS_SUCCESS);
  Plan& plan = plan_impl(p);
  CHECK(plan.converted_on_device());
  check_same_stats(plan.stats(), compute_stats(a.ref()));
  // The host converter, given the parameters the device used, builds the same bytes.
  const Format* f = find_format(plan.data().format);
  REQUIRE(f != nullptr);
  const FormatParams plain = with_codec(plan.data().params, ValueCodec::plain);
  CHECK(f->device_convertible(plain));
  // Compressed values: the host's arrays encoded with the table the device's sample gave.
  FormatData host = f->convert(a.ref(), plain, b.target());
  if (plan.value_codec() != ValueCodec::plain) {
    REQUIRE(encode_values_host(host, plan.value_codec(), plan.value_table()));
    host.params = plan.data().params;
  }
  check_same_data(plan.host_data(), host);
  CHECK(check_plan(p, a, seed) == "");
  spmv_plan_destroy(p);
  return true;
}

template <class I, class V>
void device_plans_match_host() {
  if (!test::gpu_available()) {
    SPMVJIT_SKIP("no GPU of the backend under test");
  }
  Backend& b = test::gpu_backend();
  uint64_t seed = 900;
  int planned = 0, refused = 0;
  for (const TestMatrix& m : test_matrices()) {
    const HostCsr<I, V> a = m.a.template cast<I, V>();
    for (int base : {0, 1}) {
      const DeviceCsr<I, V> d(b, a, base);
      for (const char* name : {"auto", "csr", "csr_vector", "csr_adaptive", "sell", "coo", "ell", "hyb",
                               "jds", "merge", "csr5", "sellp", "sell_block"}) {
        INFO("format " << name << ", base " << base << ", matrix " << m.name << " (" << a.rows << " x "
                       << a.cols << ", nnz " << a.nnz() << ")");
        if (device_plan_matches_host(b, a, d, name, ++seed))
          ++planned;
        else
          ++refused;
      }
    }
  }
  std::printf("cuda device planning: %d device-built plans matched the host, %d refused\n", planned, refused);
}

}  // namespace

TEST_CASE("cuda device planning: int32 double matches the host", "[cuda]") {
  device_plans_match_host<int32_t, double>();
}
TEST_CASE("cuda device planning: int32 float matches the host", "[cuda]") {
  device_plans_match_host<int32_t, float>();
}
TEST_CASE("cuda device planning: int64 double matches the host", "[cuda]") {
  device_plans_match_host<int64_t, double>();
}
TEST_CASE("cuda device planning: int64 float matches the host", "[cuda]") {
  device_plans_match_host<int64_t, float>();
}

namespace {

// The device's row order for SELL-C-sigma (tiles sorted in shared memory, then merge passes)
// against the host's, for one index type: windows that divide the tile, that the tile divides,
// and neither (merge passes only), on row counts around the tile size, with many equal lengths
// (ties keep the row order) and with spread ones.
template <class I>
void window_order_matches_host() {
  Backend& b = test::gpu_backend();
  uint64_t z = 0x2545F4914F6CDD1DULL;
  for (int64_t rows :
       {int64_t(1), int64_t(5), int64_t(2047), int64_t(2048), int64_t(2049), int64_t(10000), int64_t(70001)})
    for (int64_t spread : {int64_t(3), int64_t(20000)}) {  // nnz stays below 2^31 (int32 row_ptr)
      std::vector<I> rp(static_cast<size_t>(rows) + 1, 0);
      for (int64_t r = 0; r < rows; ++r)
        rp[size_t(r + 1)] =
            rp[size_t(r)] + I((z = z * 6364136223846793005ULL + 1442695040888963407ULL) >> 33) % I(spread);
      CsrRef host{};
      host.rows = rows;
      host.cols = 1;
      host.nnz = int64_t(rp.back());
      host.index = sizeof(I) == 4 ? IndexType::i32 : IndexType::i64;
      host.row_ptr = rp.data();
      DeviceBuffer d(b, rp.size() * sizeof(I));
      b.upload(d.get(), rp.data(), rp.size() * sizeof(I));
      CsrRef dev = host;
      dev.row_ptr = d.get();
      DevicePlanner dp(b, dev, 0, "");
      for (int64_t sigma : {int64_t(2), int64_t(64), int64_t(1024), int64_t(2048), int64_t(4096),
                            int64_t(16384), int64_t(1000), int64_t(3000)}) {
        INFO("rows " << rows << ", lengths below " << spread << ", sigma " << sigma);
        const HostArray order = device_window_order(dp, sigma);
        std::vector<I> got(static_cast<size_t>(rows));
        b.download(got.data(), order.device.get(), got.size() * sizeof(I));
        const HostVector<int64_t> want = slice_util::window_order(host, sigma);
        int64_t bad = -1;
        for (int64_t i = 0; i < rows && bad < 0; ++i)
          if (int64_t(got[size_t(i)]) != want[size_t(i)]) bad = i;
        CHECK(bad == -1);
      }
    }
}

}  // namespace

TEST_CASE("cuda device planning: the window sort gives the host's row order for every sigma", "[cuda]") {
  if (!test::gpu_available()) {
    SPMVJIT_SKIP("no GPU of the backend under test");
  }
  window_order_matches_host<int32_t>();
  window_order_matches_host<int64_t>();
}

namespace {

// A matrix with the given row lengths (columns spread over `cols`, ascending in each row).
HostCsr<int64_t, double> rows_of_lengths(const std::vector<int64_t>& lengths, int64_t cols) {
  HostCsr<int64_t, double> a;
  a.rows = int64_t(lengths.size());
  a.cols = cols;
  for (size_t r = 0; r < lengths.size(); ++r) {
    const int64_t n = std::min(lengths[r], cols);
    for (int64_t k = 0; k < n; ++k) {
      a.col_idx.push_back((int64_t(r) * 7 + k * cols / n) % cols);
      a.val.push_back(0.25 + double((r * 13 + size_t(k)) % 17));
    }
    std::sort(a.col_idx.end() - n, a.col_idx.end());
    a.row_ptr.push_back(int64_t(a.col_idx.size()));
  }
  return a;
}

}  // namespace

namespace {

using MatrixList = std::vector<std::pair<std::string, HostCsr<int64_t, double>>>;

// Format `name`'s device build against its host converter, byte for byte, for each matrix, both
// index bases and each parameter set. A parameter set the host refuses (too much fill) the device
// refuses alike, with the same message. Returns the builds compared.
template <class I, class V>
int device_builds_match_host(const char* name, const MatrixList& matrices,
                             const std::vector<FormatParams>& params) {
  Backend& b = test::gpu_backend();
  const Format* f = find_format(name);
  REQUIRE(f != nullptr);
  int built = 0;
  for (const auto& [matrix, m] : matrices) {
    const HostCsr<I, V> a = m.template cast<I, V>();
    for (int base : {0, 1}) {
      const DeviceCsr<I, V> d(b, a, base);
      CsrRef dev = a.ref();
      dev.row_ptr = d.rp.get(), dev.col_idx = d.ci.get(), dev.val = d.va.get();
      DevicePlanner dp(b, dev, base, "");
      for (FormatParams p : params) {
        if (p.count("COL_EDGE")) p["COL_EDGE"] = a.cols % p.at("C") != 0;
        INFO(name << " " << params_json(p).dump() << ", matrix " << matrix << ", base " << base);
        FormatData host;
        try {
          host = f->convert(a.ref(), p, b.target());
        } catch (const Error& e) {
          CHECK_THROWS_WITH(f->convert_device(dp, p, b.target()), e.what());
          continue;
        }
        const FormatData got = f->convert_device(dp, p, b.target());
        REQUIRE(got.arrays.size() == host.arrays.size());
        for (size_t i = 0; i < host.arrays.size(); ++i) {
          const HostArray &g = got.arrays[i], &h = host.arrays[i];
          INFO("array " << h.name);
          REQUIRE(g.count == h.count);
          if (!h.count || !g.device) continue;  // host-only arrays (the CPU's parts)
          std::vector<char> bytes(size_t(h.count) * h.elem);
          b.download(bytes.data(), g.device.get(), bytes.size());
          CHECK(std::memcmp(bytes.data(), h.buf.data(), bytes.size()) == 0);
        }
        for (int i = 0; i < kMaxArrays; ++i) CHECK(got.ints[i] == host.ints[i]);
        ++built;
      }
    }
  }
  return built;
}

MatrixList generated(std::initializer_list<const char*> specs,
                     std::initializer_list<const char*> scrambled_specs) {
  MatrixList out;
  for (const char* spec : specs) out.push_back({spec, generate_matrix(spec, 5)});
  for (const char* spec : scrambled_specs)
    out.push_back({std::string(spec) + " scrambled", test::scrambled(generate_matrix(spec, 6))});
  return out;
}

}  // namespace

// bsr's device build (a warp per block row, the walk of one thread where the warp cannot): block
// rows whose rows ascend, rows out of order or with a repeated column, block rows of more blocks
// than the warp's lists hold (dense rows), rows longer than a warp, fill, a partial last block
// row, empty rows.
TEST_CASE("cuda device planning: bsr's warp and thread builds give the host's blocks", "[cuda]") {
  if (!test::gpu_available()) {
    SPMVJIT_SKIP("no GPU of the backend under test");
  }
  const MatrixList m = generated({"blockfem:5:3", "blockfem:4:2", "poisson2d:37", "dense:600",
                                  "random:1001:0:40", "denserows:3001:2:5", "random:7:0:3000"},
                                 {"blockfem:4:3", "random:999:0:60"});
  std::vector<FormatParams> shapes;
  for (const auto& [r, c] : {std::pair{1, 2}, {2, 2}, {3, 3}, {4, 1}, {2, 6}, {8, 8}})
    shapes.push_back({{"R", r}, {"C", c}, {"COL_EDGE", 0}, {"G", 4}});
  // 34 of the 54 shapes per base: fill past 3x refuses the rest (random rows in blocks).
  CHECK(device_builds_match_host<int32_t, double>("bsr", m, shapes) == 2 * 34);
  CHECK(device_builds_match_host<int64_t, float>("bsr", m, shapes) == 2 * 34);
}

// sell_diag's device build (a warp per slice choosing its diagonals, one thread where the slice's
// rows differ): stencils and bands whose interior slices share their offsets, their boundary
// slices, bands wider than the table, rows out of order and with repeated columns, irregular rows,
// a partial last slice, slices of fewer rows than a diagonal needs.
TEST_CASE("cuda device planning: sell_diag's warp and thread choices give the host's diagonals", "[cuda]") {
  if (!test::gpu_available()) {
    SPMVJIT_SKIP("no GPU of the backend under test");
  }
  const MatrixList m = generated({"poisson2d:41", "stencil27:9", "diag:700:9", "diag:2000:101",
                                  "random:997:0:30", "blockfem:4:3", "dense:70", "diag:33:3", "random:1:1:1"},
                                 {"diag:700:9", "poisson2d:30"});
  const std::vector<FormatParams> slices = {{{"C", 32}}, {{"C", 8}}, {{"C", 64}}};
  CHECK(device_builds_match_host<int32_t, double>("sell_diag", m, slices) == 2 * 33);
  CHECK(device_builds_match_host<int64_t, float>("sell_diag", m, slices) == 2 * 33);
}

// csr_adaptive's greedy row blocks, laid out by a block per 4096-row window (a warp walking 32
// rows a step), against the host's: rows of exactly ADAPTIVE_S and one more (a long row), long
// rows on window edges, row blocks closed by the 1024-row limit and by ADAPTIVE_S nonzeros in the
// middle of a warp's step, empty windows and a last partial window.
TEST_CASE("cuda device planning: csr_adaptive's row blocks on window and warp edges", "[cuda]") {
  if (!test::gpu_available()) {
    SPMVJIT_SKIP("no GPU of the backend under test");
  }
  Backend& b = test::gpu_backend();
  const int64_t S = ADAPTIVE_S, W = ADAPTIVE_WINDOW;
  uint64_t z = 0x9E3779B97F4A7C15ULL;
  auto rnd = [&](int64_t n) {
    return int64_t((z = z * 6364136223846793005ULL + 1442695040888963407ULL) >> 33) % n;
  };
  std::vector<std::pair<std::string, std::vector<int64_t>>> cases;
  {
    std::vector<int64_t> l(size_t(3 * W + 77), 0);
    for (int64_t r : {int64_t(0), W - 1, W, 2 * W - 1, 2 * W + 31, 2 * W + 32, int64_t(l.size()) - 1})
      l[size_t(r)] = S + 1;
    for (int64_t r : {int64_t(5), W + 33, 2 * W + 100}) l[size_t(r)] = S;
    for (int64_t r : {int64_t(6), W + 34, 2 * W + 101}) l[size_t(r)] = 3 * S + 5;
    cases.push_back({"long rows on edges, the rest empty", l});
    for (int64_t& x : l)
      if (x == 0) x = rnd(3);
    cases.push_back({"long rows on edges, the rest 0-2", l});
  }
  {
    std::vector<int64_t> l(size_t(2 * W + 1000));
    for (int64_t& x : l) x = rnd(700);
    cases.push_back({"0-699 a row", l});
    for (int64_t& x : l) x = rnd(100) == 0 ? S - rnd(3) : rnd(40);
    cases.push_back({"0-39 a row, some near ADAPTIVE_S", l});
    for (int64_t& x : l) x = 1;
    cases.push_back({"one a row", l});
    for (int64_t& x : l) x = rnd(50) == 0 ? 0 : 2;
    cases.push_back({"two a row, some empty", l});
  }
  cases.push_back({"one empty row", {0}});
  cases.push_back({"one long row", {S + 1}});
  cases.push_back({"empty windows", std::vector<int64_t>(size_t(2 * W + 3), 0)});
  uint64_t seed = 4400;
  for (const auto& [what, lengths] : cases) {
    const HostCsr<int64_t, double> m = rows_of_lengths(lengths, 4 * S);
    INFO(what << " (" << m.rows << " rows, nnz " << m.nnz() << ")");
    const HostCsr<int32_t, double> a32 = m.cast<int32_t, double>();
    CHECK(device_plan_matches_host(b, a32, DeviceCsr<int32_t, double>(b, a32, 0), "csr_adaptive", ++seed));
    const HostCsr<int64_t, float> a64 = m.cast<int64_t, float>();
    CHECK(device_plan_matches_host(b, a64, DeviceCsr<int64_t, float>(b, a64, 1), "csr_adaptive", ++seed));
  }
}

TEST_CASE("cuda device planning: the exclusive scan at tile boundaries and beyond", "[cuda]") {
  if (!test::gpu_available()) {
    SPMVJIT_SKIP("no GPU of the backend under test");
  }
  Backend& b = test::gpu_backend();
  CsrRef none{};  // the scan reads no matrix
  none.index = IndexType::i32;
  none.value = ValueType::f64;
  DevicePlanner dp(b, none, 0, "");
  // One block (up to 8192), three kernels, and the recursive case (over 8192 tiles).
  for (int64_t n : {int64_t(0), int64_t(1), int64_t(8191), int64_t(8192), int64_t(8193), int64_t(100000),
                    int64_t(8192) * 8192 + 5}) {
    INFO("n " << n);
    std::vector<int64_t> v(size_t(n) + 1);
    uint64_t z = 0x9e3779b97f4a7c15ULL ^ uint64_t(n);
    for (int64_t& x : v) x = int64_t((z = z * 6364136223846793005ULL + 1442695040888963407ULL) >> 54) - 300;
    HostArray d = dp.alloc(n + 1, sizeof(int64_t));
    b.upload(d.device.get(), v.data(), v.size() * sizeof(int64_t));
    dp.exclusive_scan(d.device.get(), n);
    std::vector<int64_t> got(v.size());
    b.download(got.data(), d.device.get(), got.size() * sizeof(int64_t));
    int64_t run = 0, bad = -1;
    for (int64_t i = 0; i <= n; ++i) {
      if (got[size_t(i)] != run && bad < 0) bad = i;
      if (i < n) run += v[size_t(i)];
    }
    CHECK(bad == -1);
  }
}

TEST_CASE("cuda device planning: a bad device CSR fails with the host's message", "[cuda]") {
  if (!test::gpu_available()) {
    SPMVJIT_SKIP("no GPU of the backend under test");
  }
  Backend& b = test::gpu_backend();
  const HostCsr<int32_t, double> good = generate_matrix("random:300:1:9", 3).cast<int32_t, double>();
  struct Case {
    const char* what;
    void (*spoil)(HostCsr<int32_t, double>&);
  };
  const Case cases[] = {
      {"row_ptr not monotone", [](HostCsr<int32_t, double>& a) { a.row_ptr[100] = a.row_ptr[101] + 1; }},
      {"row_ptr[0] not the base", [](HostCsr<int32_t, double>& a) { a.row_ptr[0] = 1; }},
      {"row_ptr[rows] not nnz", [](HostCsr<int32_t, double>& a) { a.row_ptr.back() -= 1; }},
      {"column too large", [](HostCsr<int32_t, double>& a) { a.col_idx[77] = int32_t(a.cols); }},
      {"column negative", [](HostCsr<int32_t, double>& a) { a.col_idx[5] = -2; }},
  };
  for (const Case& c : cases)
    for (int base : {0, 1}) {
      INFO(c.what << ", base " << base);
      HostCsr<int32_t, double> bad = good;
      c.spoil(bad);
      // The host validator's verdict on the same arrays (shifted to the base).
      std::vector<int32_t> rp = bad.row_ptr, ci = bad.col_idx;
      for (auto& x : rp) x += base;
      for (auto& x : ci) x += base;
      CsrRef h = bad.ref();
      h.row_ptr = rp.data(), h.col_idx = ci.data();
      std::string host_msg;
      try {
        validate_csr(h, base);
      } catch (const Error& e) {
        CHECK(e.status() == SPMV_STATUS_INVALID_MATRIX);
        host_msg = e.what();
      }
      REQUIRE_FALSE(host_msg.empty());
      const spmv_options_t o = cuda_options(nullptr);
      spmv_plan_t p = nullptr;
      // Host memory on a GPU is uploaded and validated there: the same message.
      spmv_csr_t hd = view(bad);
      hd.row_ptr = rp.data(), hd.col_idx = ci.data(), hd.index_base = base;
      CHECK(spmv_plan(&p, &hd, &o) == SPMV_STATUS_INVALID_MATRIX);
      CHECK(std::string(spmv_last_error()) == host_msg);
      const DeviceCsr<int32_t, double> d(b, bad, base);
      CHECK(spmv_plan(&p, &d.desc, &o) == SPMV_STATUS_INVALID_MATRIX);
      CHECK(p == nullptr);
      CHECK(std::string(spmv_last_error()) == host_msg);
    }
}

#endif  // SPMVJIT_WITH_CUDA
