// csr5's device build (templates/gpu/csr5_build.cu, emulated on the CPU) against its host converter
// for every sigma, not only the one the candidates pick, on shapes that reach each part of aux:
// empty rows inside tiles and across tile borders, before the first entry and in the tail, and a
// nonzero count that is an exact multiple of the tile. And its planning of device input (no
// arrays, only the statistics) against that of the same matrix in host memory.
#include <catch2/catch.hpp>
#include <cstring>
#include <random>

#include "engine/gen/generators.hpp"
#include "engine/planner.hpp"
#include "engine/stats.hpp"
#include "tests/formats/emulated_device.hpp"
#include "tests/test_support.hpp"

namespace {

using namespace spmvjit;

// A matrix with the given row lengths, random columns and nonzero values.
HostCsr<int64_t, double> with_lengths(const std::vector<int64_t>& lens, int64_t cols) {
  std::mt19937_64 g(7);
  HostCsr<int64_t, double> m;
  m.rows = int64_t(lens.size());
  m.cols = cols;
  for (int64_t len : lens) {
    for (int64_t k = 0; k < len; ++k) {
      m.col_idx.push_back(int64_t(g() % uint64_t(cols)));
      m.val.push_back(1.0 + double(g() % 1000));
    }
    m.row_ptr.push_back(int64_t(m.col_idx.size()));
  }
  return m;
}

std::vector<std::pair<std::string, HostCsr<int64_t, double>>> shapes() {
  std::vector<std::pair<std::string, HostCsr<int64_t, double>>> out;
  std::mt19937_64 g(3);
  std::vector<int64_t> lens;
  // Rows of 0-3 nonzeros, starting and ending with runs of empty rows.
  lens.assign(40, 0);
  for (int i = 0; i < 3000; ++i) lens.push_back(int64_t(g() % 4));
  lens.insert(lens.end(), 70, 0);
  out.push_back({"short rows, empty rows at both ends", with_lengths(lens, 500)});
  // Single entries between runs of thousands of empty rows: tiles spanning windows of empty rows.
  lens.clear();
  for (int i = 0; i < 700; ++i) {
    lens.push_back(1 + int64_t(g() % 3));
    lens.insert(lens.end(), int64_t(g() % 3000), 0);
  }
  out.push_back({"long runs of empty rows", with_lengths(lens, 300)});
  // 2048 nonzeros (a multiple of every power-of-two tile): no CSR tail, empty rows at the end.
  lens.clear();
  for (int i = 0; i < 64; ++i) lens.push_back(32), lens.push_back(0);
  out.push_back({"no tail", with_lengths(lens, 100)});
  out.push_back({"no nonzeros", with_lengths(std::vector<int64_t>(100, 0), 10)});
  out.push_back({"powerlaw", generate_matrix("powerlaw:3000:1.6:2000", 5)});
  out.push_back({"random", generate_matrix("random:2000:0:12", 5)});
  return out;
}

TargetInfo gpu_target() {
  TargetInfo t;
  t.backend = BackendKind::cuda;
  t.target = "sm_90";
  t.warp_size = 32;
  t.sm_count = 132;
  return t;
}

template <class I, class V>
void csr5_device_matches_host() {
  if (!test::require_cpu_backend()) return;
  const TargetInfo t = gpu_target();
  const Format& f = *find_format("csr5");
  for (const auto& [name, m] : shapes()) {
    const HostCsr<I, V> a = m.template cast<I, V>();
    for (int base : {0, 1}) {
      HostCsr<I, V> based = a;
      for (I& r : based.row_ptr) r += I(base);
      for (I& c : based.col_idx) c += I(base);
      for (int64_t sigma : {1, 3, 4, 8, 13, 16, 28, 32}) {
        const FormatParams p{{"omega", 32}, {"sigma", sigma}};
        INFO(name << ", sigma " << sigma << ", base " << base);
        REQUIRE(f.device_convertible(p));
        const FormatData host = f.convert(a.ref(), p, t);
        test::EmulatedDevice dev(based.ref(), base);
        const FormatData d = f.convert_device(dev, p, t);
        REQUIRE(d.arrays.size() == host.arrays.size());
        for (size_t i = 0; i < d.arrays.size(); ++i) {
          INFO("array " << host.arrays[i].name);
          REQUIRE(d.arrays[i].count == host.arrays[i].count);
          REQUIRE(d.arrays[i].elem == host.arrays[i].elem);
          if (host.arrays[i].count)
            CHECK(std::memcmp(d.arrays[i].device.get(), host.arrays[i].buf.data(),
                              size_t(host.arrays[i].count) * host.arrays[i].elem) == 0);
        }
        for (int i = 0; i < kMaxArrays; ++i) CHECK(d.ints[i] == host.ints[i]);
        CHECK(d.facts.dump() == host.facts.dump());
        CHECK(d.matrix_bytes == host.matrix_bytes);
        CHECK(d.scratch_bytes == host.scratch_bytes);
        REQUIRE(d.steps.size() == host.steps.size());
        for (size_t i = 0; i < d.steps.size(); ++i) CHECK(d.steps[i].grid == host.steps[i].grid);
      }
    }
  }
  // The GPU kernel needs omega = warp size: both converters refuse another.
  test::EmulatedDevice dev(shapes()[2].second.template cast<I, V>().ref(), 0);
  CHECK_THROWS(f.convert_device(dev, FormatParams{{"omega", 16}, {"sigma", 4}}, t));
}

}  // namespace

TEST_CASE("csr5 device build matches the host for every sigma: int32 double", "[formats][device]") {
  csr5_device_matches_host<int32_t, double>();
}
TEST_CASE("csr5 device build matches the host for every sigma: int64 float", "[formats][device]") {
  csr5_device_matches_host<int64_t, float>();
}

TEST_CASE("csr5 plans device input as host input: candidates and estimates read no arrays",
          "[formats][device]") {
  const Format& f = *find_format("csr5");
  const TargetInfo t = gpu_target();
  for (const auto& [name, a] : shapes()) {
    INFO(name);
    const MatrixStats s = compute_stats(a.ref());
    CsrRef shape = a.ref();  // what a plan of device input passes
    shape.row_ptr = shape.col_idx = shape.val = nullptr;
    const std::vector<FormatParams> ps = f.candidates(a.ref(), s, t);
    REQUIRE(f.candidates(shape, s, t) == ps);
    for (const FormatParams& p : ps) {
      CHECK(f.device_convertible(p));
      const Estimate host = f.estimate(a.ref(), s, p, t), dev = f.estimate(shape, s, p, t);
      CHECK(dev.matrix_bytes == host.matrix_bytes);
      CHECK(dev.cost_bytes == host.cost_bytes);
      CHECK(dev.stored_entries == host.stored_entries);
      CHECK(dev.imbalance == host.imbalance);
    }
  }
}

TEST_CASE("csr5 on wavefronts of 64: inapplicable, and the planner says why", "[formats][device]") {
  TargetInfo t;
  t.backend = BackendKind::hip;
  t.target = "gfx90a";
  t.warp_size = 64;
  t.sm_count = 104;
  t.simd_bytes = 0;
  const Format* csr5 = find_format("csr5");
  REQUIRE(csr5 != nullptr);
  const auto a = generate_matrix("powerlaw:5000", 3).cast<int32_t, double>();
  const MatrixStats s = compute_stats(a.ref());
  const auto cands = csr5->candidates(a.ref(), s, t);
  REQUIRE(cands.size() == 1);
  CHECK(cands[0].at("omega") == 64);  // a tile is one wavefront
  for (bool device_input : {false, true}) {
    INFO("device input " << device_input);
    const PlanChoice all = choose_format(a.ref(), s, t, nullptr, {device_input});
    CHECK(all.format->name() != "csr5");
    bool listed = false;
    for (const Candidate& c : all.considered)
      if (c.format == csr5) {
        listed = true;
        CHECK_FALSE(c.estimate.applicable);
        CHECK(c.estimate.reason.find("inapplicable on wavefront 64") != std::string::npos);
      }
    CHECK(listed);
    try {
      choose_format(a.ref(), s, t, csr5, {device_input});
      FAIL("csr5 forced on a wavefront of 64 was planned");
    } catch (const Error& e) {
      CHECK(e.status() == SPMV_STATUS_UNSUPPORTED);
      CHECK(std::string(e.what()).find("inapplicable on wavefront 64") != std::string::npos);
    }
  }
  try {  // the converter refuses too, with the same reason
    csr5->convert(a.ref(), cands[0], t);
    FAIL("csr5 converted for a wavefront of 64");
  } catch (const Error& e) {
    CHECK(e.status() == SPMV_STATUS_UNSUPPORTED);
  }
  CHECK(csr5->kernel_variants(t, ValueType::f64).empty());
  t.warp_size = 32;  // RDNA: a tile of 32 lanes, as on NVIDIA GPUs
  CHECK(csr5->kernel_variants(t, ValueType::f64).size() == 8);
}
