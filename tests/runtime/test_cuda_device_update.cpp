// Device-built plans through spmv_plan_update_values: from host and device memory, what
// `describe` says, formats the device cannot build, and compressed values (new tables, values
// the table holds placed anew, values past any table).
#ifdef SPMVJIT_WITH_CUDA
#include <catch2/catch.hpp>

#include "engine/gen/generators.hpp"
#include "engine/plan.hpp"
#include "runtime/device_buffer.hpp"
#include "tests/runtime/cuda_device_csr.hpp"
#include "tests/runtime/cuda_test_support.hpp"
#include "tests/test_matrices.hpp"

using namespace spmvjit;
using namespace spmvjit::cuda_test;

TEST_CASE("cuda device planning: update_values, describe, and formats the device cannot build", "[cuda]") {
  if (!test::gpu_available()) {
    SPMVJIT_SKIP("no GPU of the backend under test");
  }
  Backend& b = test::gpu_backend();
  // Rows of 1-40 nonzeros: every format here applies (powerlaw's long rows pad SELL too much).
  const HostCsr<int32_t, double> a = generate_matrix("random:6000:1:40", 4).cast<int32_t, double>();
  const DeviceCsr<int32_t, double> d(b, a, 1);
  for (const char* name : {"csr", "csr_adaptive", "sell", "csr5"}) {
    INFO("format " << name);
    const spmv_options_t o = cuda_options(name);
    spmv_plan_t p = nullptr;
    REQUIRE(spmv_plan(&p, &d.desc, &o) == SPMV_STATUS_SUCCESS);
    Plan& plan = plan_impl(p);
    // A format with no device converter has the arrays copied to the host and converted there.
    const Format& f = *find_format(name);
    CHECK(plan.converted_on_device() == f.converts_on_device());
    const char* json = nullptr;
    REQUIRE(spmv_plan_describe(p, &json) == SPMV_STATUS_SUCCESS);
    const std::string desc = json;
    CHECK(desc.find(plan.converted_on_device() ? "\"conversion\":\"device\"" : "\"conversion\":\"host\"") !=
          std::string::npos);
    CHECK(desc.find("\"distinct_diagonals\":null") == std::string::npos);
    // Device bytes held: the format's arrays, plus the kept pattern when they are not CSR.
    int64_t held = 0;
    for (const HostArray& h : plan.data().arrays)
      if (!h.host_only()) held += h.count * int64_t(h.elem);
    if (!f.keeps_csr_pattern(plan.data().params)) held += (a.rows + 1 + a.nnz()) * int64_t(sizeof(int32_t));
    held += plan.data().scratch_bytes;
    if (plan.converted_on_device())
      CHECK(desc.find("\"device\":" + std::to_string(held) + "}") != std::string::npos);
    CHECK(check_plan(p, a, 11) == "");
    // New values from device memory, then from host memory.
    HostCsr<int32_t, double> a2 = a;
    a2.val = random_vector<double>(a.nnz(), 12);
    {
      const DeviceBuffer nv(b, a2.val.size() * sizeof(double));
      b.upload(nv.get(), a2.val.data(), a2.val.size() * sizeof(double));
      REQUIRE(spmv_plan_update_values(p, nv.get(), SPMV_MEMORY_DEVICE) == SPMV_STATUS_SUCCESS);
    }  // the plan keeps nothing of the caller's values
    CHECK(check_plan(p, a2, 13) == "");
    a2.val = random_vector<double>(a.nnz(), 14);
    REQUIRE(spmv_plan_update_values(p, a2.val.data(), SPMV_MEMORY_HOST) == SPMV_STATUS_SUCCESS);
    CHECK(check_plan(p, a2, 15) == "");
    // The first update found the value map, the second gathered through it.
    REQUIRE(spmv_plan_describe(p, &json) == SPMV_STATUS_SUCCESS);
    CHECK(std::string(json).find("\"update_values\":\"gather through a value map\"") != std::string::npos);
    spmv_plan_destroy(p);
  }
}

TEST_CASE("cuda device planning: compressed values through updates", "[cuda]") {
  if (!test::gpu_available()) {
    SPMVJIT_SKIP("no GPU of the backend under test");
  }
  Backend& b = test::gpu_backend();
  HostCsr<int32_t, double> a = generate_matrix("random:6000:1:40@ones", 4).cast<int32_t, double>();
  const DeviceCsr<int32_t, double> d(b, a, 0);
  auto codec = [](spmv_plan_t p) {
    const char* json = nullptr;
    REQUIRE(spmv_plan_describe(p, &json) == SPMV_STATUS_SUCCESS);
    return test::json_string_field(json, "codec");
  };
  // csr_adaptive: uniform (its tail padding is never read); sell: code8 (padding); jds: uniform.
  for (const char* name : {"csr_adaptive", "sell", "jds"}) {
    INFO("format " << name);
    const spmv_options_t o = cuda_options(name);
    spmv_plan_t p = nullptr;
    REQUIRE(spmv_plan(&p, &d.desc, &o) == SPMV_STATUS_SUCCESS);
    const std::string first = codec(p);
    CHECK((first == "uniform" || first == "code8"));
    CHECK(check_plan(p, a, 21) == "");
    HostCsr<int32_t, double> a2 = a;
    a2.val.assign(a.val.size(), -3.0);  // one value again: a new table
    REQUIRE(spmv_plan_update_values(p, a2.val.data(), SPMV_MEMORY_HOST) == SPMV_STATUS_SUCCESS);
    CHECK(codec(p) == first);
    CHECK(check_plan(p, a2, 22) == "");
    for (size_t k = 0; k < a2.val.size(); k += 4) a2.val[k] = 0.5;  // two values
    {
      const DeviceBuffer nv(b, a2.val.size() * sizeof(double));
      b.upload(nv.get(), a2.val.data(), a2.val.size() * sizeof(double));
      REQUIRE(spmv_plan_update_values(p, nv.get(), SPMV_MEMORY_DEVICE) == SPMV_STATUS_SUCCESS);
    }
    CHECK(codec(p) == (first == "code8" ? "code8" : "plain"));
    CHECK(check_plan(p, a2, 23) == "");
    // Values the table holds, placed anew: a CODE8 plan gathers them straight to codes.
    for (size_t k = 0; k < a2.val.size(); ++k) a2.val[k] = k % 3 == 0 ? 0.5 : -3.0;
    REQUIRE(spmv_plan_update_values(p, a2.val.data(), SPMV_MEMORY_HOST) == SPMV_STATUS_SUCCESS);
    CHECK(codec(p) == (first == "code8" ? "code8" : "plain"));
    CHECK(check_plan(p, a2, 26) == "");
    for (size_t k = 0; k < a2.val.size(); ++k) a2.val[k] = k % 5 == 1 ? -3.0 : 0.5;
    {
      const DeviceBuffer nv(b, a2.val.size() * sizeof(double));
      b.upload(nv.get(), a2.val.data(), a2.val.size() * sizeof(double));
      REQUIRE(spmv_plan_update_values(p, nv.get(), SPMV_MEMORY_DEVICE) == SPMV_STATUS_SUCCESS);
    }
    CHECK(codec(p) == (first == "code8" ? "code8" : "plain"));
    CHECK(check_plan(p, a2, 27) == "");
    a2.val = random_vector<double>(a.nnz(), 24);  // random: plain values and kernel
    REQUIRE(spmv_plan_update_values(p, a2.val.data(), SPMV_MEMORY_HOST) == SPMV_STATUS_SUCCESS);
    CHECK(codec(p) == "plain");
    CHECK(check_plan(p, a2, 25) == "");
    spmv_plan_destroy(p);
  }
}

TEST_CASE("cuda device planning: updates through device value maps and the formats' own gathers", "[cuda]") {
  if (!test::gpu_available()) {
    SPMVJIT_SKIP("no GPU of the backend under test");
  }
  Backend& b = test::gpu_backend();
  // sell_diag: stencils (a last slice past the rows), a band of 41 diagonals, a variable band
  // (remainders); bsr: full 3 x 3 blocks (its own gather computes their slots), and a band's
  // blocks with fill (the map's);
  // sell_block: a band's rows (runs of columns), and runs of 3 columns in blocks of 4 (gaps).
  const std::pair<const char*, const char*> cases[] = {
      {"sell_diag", "poisson2d:60@few"},  {"sell_diag", "stencil27:11@few"},
      {"sell_diag", "diag:3001:41@few"},  {"sell_diag", "varband:3000@few"},
      {"bsr", "blockfem:5:3@few"},        {"bsr", "diag:3001:7@few"},
      {"sell_block", "varband:3001@few"}, {"sell_block", "blocks:3001:3:4@few"}};
  for (const auto& [name, spec] : cases) {
    INFO("format " << name << ", matrix " << spec);
    HostCsr<int32_t, double> a = generate_matrix(spec, 5).cast<int32_t, double>();
    const DeviceCsr<int32_t, double> d(b, a, 0);
    const spmv_options_t o = cuda_options(name);
    spmv_plan_t p = nullptr;
    REQUIRE(spmv_plan(&p, &d.desc, &o) == SPMV_STATUS_SUCCESS);
    REQUIRE(plan_impl(p).converted_on_device());
    auto update = [&](uint64_t seed, bool few) {
      // few: the matrix's values moved around (a CODE8 plan's table holds them); else random.
      HostCsr<int32_t, double> a2 = a;
      if (few)
        for (size_t k = 0; k < a2.val.size(); ++k) a2.val[k] = a.val[(k * 7 + seed) % a.val.size()];
      else
        a2.val = random_vector<double>(a.nnz(), seed);
      const DeviceBuffer nv(b, a2.val.size() * sizeof(double));
      b.upload(nv.get(), a2.val.data(), a2.val.size() * sizeof(double));
      REQUIRE(spmv_plan_update_values(p, nv.get(), SPMV_MEMORY_DEVICE) == SPMV_STATUS_SUCCESS);
      CHECK(check_plan(p, a2, seed + 1) == "");
    };
    // bsr has a gather of its own (Format::device_gather); the others gather through the map.
    const std::string how = std::string(name) == "bsr" ? "gather through a value map and the format's kernel"
                                                       : "gather through a value map";
    update(31, true);  // reconverts and finds the map
    CHECK(plan_impl(p).values_update() == how);
    update(33, true);   // codes (or plain values) through the gather
    update(35, false);  // random: a CODE8 plan drops to plain values
    update(37, false);
    CHECK(plan_impl(p).values_update() == how);
    spmv_plan_destroy(p);
  }
}

#endif  // SPMVJIT_WITH_CUDA
