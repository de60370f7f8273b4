// op(A) = A^T (spmv_options_t::operation): the host transpose against the reference's own, the
// plan's contract (sizes, info, describe, refusals), measure mode, and GPU plans of A^T from host
// and device memory, with update_values. Every format's A^T kernels: test_kernels_all.cpp; k
// vectors: test_spmm.cpp.
#include <catch2/catch.hpp>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "engine/formats/format.hpp"
#include "engine/gen/generators.hpp"
#include "engine/plan.hpp"
#include "engine/reference.hpp"
#include "engine/transpose.hpp"
#include "runtime/device_buffer.hpp"
#include "spmvjit/spmvjit.hpp"
#include "tests/test_matrices.hpp"
#include "tests/test_support.hpp"

namespace {

using namespace spmvjit;
using Csr64 = HostCsr<int64_t, double>;

// Unsorted columns: each row reversed.
Csr64 reversed_rows(Csr64 a) {
  for (int64_t i = 0; i < a.rows; ++i) {
    const auto b = a.row_ptr[size_t(i)], e = a.row_ptr[size_t(i) + 1];
    std::reverse(a.col_idx.begin() + b, a.col_idx.begin() + e);
    std::reverse(a.val.begin() + b, a.val.begin() + e);
  }
  return a;
}

std::vector<std::pair<std::string, Csr64>> shapes() {
  std::vector<std::pair<std::string, Csr64>> m;
  m.push_back({"0x0", test::from_rows(0, 0, {})});
  m.push_back({"0x5", test::from_rows(0, 5, {})});
  m.push_back({"5x0", test::from_rows(5, 0, {})});
  m.push_back({"1x1", test::from_rows(1, 1, {{{0, 2.5}}})});
  m.push_back({"empty rows 5x9", test::from_rows(5, 9, {{}, {{0, 1.0}, {8, -2.0}}, {}, {{3, 0.5}}, {}})});
  // Dense columns of 6,000 and 10,000 entries: the device sorts them in tiles, then two and three
  // merge passes (the result lands in place, then in the scratch and is copied back).
  m.push_back({"dense column", generate_matrix("circuit:6000:2:500", 3)});
  m.push_back({"denser column", generate_matrix("circuit:10000:1:100", 2)});
  m.push_back({"wide", generate_matrix("lpwide:300:20", 4)});
  m.push_back({"unsorted", reversed_rows(generate_matrix("random:400:0:30:90", 5))});
  // Over 2^18 nonzeros on few columns: several parts, each with its own column counts.
  m.push_back({"parts", generate_matrix("random:20000:10:40:3000", 6)});
  return m;
}

template <class I, class V>
void check_host_transpose(const Csr64& m, int base) {
  HostCsr<I, V> a = m.template cast<I, V>();
  const HostCsr<I, V> want = reference_transpose(a);
  std::vector<I> rp = a.row_ptr, ci = a.col_idx;
  for (auto& v : rp) v = I(v + base);
  for (auto& v : ci) v = I(v + base);
  CsrRef in = a.ref();
  in.row_ptr = rp.data();
  in.col_idx = ci.data();
  const HostTranspose t = transpose_on_host(in, base);
  REQUIRE(t.ref.rows == a.cols);
  REQUIRE(t.ref.cols == a.rows);
  REQUIRE(t.ref.nnz == a.nnz());
  const I* tp = t.ref.rp<I>();
  const I* tc = t.ref.ci<I>();
  const V* tv = t.ref.vals<V>();
  const I* pos = static_cast<const I*>(t.position.data());
  CHECK(std::vector<I>(tp, tp + a.cols + 1) == want.row_ptr);
  CHECK(std::vector<I>(tc, tc + a.nnz()) == want.col_idx);
  CHECK(std::vector<V>(tv, tv + a.nnz()) == want.val);
  // Each of A's entries at its position: row and value, and no position twice.
  std::vector<char> seen(size_t(a.nnz()), 0);
  int64_t wrong = 0;
  for (int64_t r = 0; r < a.rows; ++r)
    for (I k = a.row_ptr[size_t(r)]; k < a.row_ptr[size_t(r) + 1]; ++k) {
      const I p = pos[k];
      REQUIRE((p >= 0 && p < a.nnz()));
      wrong += seen[size_t(p)] || tc[p] != I(r) || tv[p] != a.val[size_t(k)];
      seen[size_t(p)] = 1;
    }
  CHECK(wrong == 0);
  // scatter_values puts A's values where the transpose keeps them.
  std::vector<V> back(size_t(a.nnz()), V(-1));
  scatter_values(a.val.data(), back.data(), pos, a.nnz(), index_type_of<I>(), value_type_of<V>());
  CHECK(back == want.val);
}

spmv_csr_t view(const Csr64& a) {
  return csr_view<int64_t, double>(a.rows, a.cols, a.nnz(), a.row_ptr.data(),
                                   a.col_idx.empty() ? nullptr : a.col_idx.data(),
                                   a.val.empty() ? nullptr : a.val.data());
}

// y = alpha * A^T x + beta * y through `plan` (x, y on `device` when given): "" or what is wrong.
std::string check_transposed_spmv(spmv_plan_t plan, const Csr64& a, Backend* device, uint64_t seed) {
  const Csr64 at = reference_transpose(a);
  for (double beta : {0.0, -0.5}) {
    const auto x = random_vector<double>(a.rows, seed);
    std::vector<double> y = random_vector<double>(a.cols, seed + 1);
    if (beta == 0) std::fill(y.begin(), y.end(), std::numeric_limits<double>::quiet_NaN());
    const auto y0 = y;
    const double alpha = 1.5;
    spmv_status_t st;
    if (device) {
      DeviceBuffer dx(*device, x.size() * 8), dy(*device, y.size() * 8);
      if (!x.empty()) device->upload(dx.get(), x.data(), x.size() * 8);
      if (!y.empty()) device->upload(dy.get(), y.data(), y.size() * 8);
      st = spmv_execute(plan, &alpha, dx.get(), &beta, dy.get(), nullptr);
      device->synchronize(nullptr);
      if (!y.empty()) device->download(y.data(), dy.get(), y.size() * 8);
    } else {
      st = spmv_execute(plan, &alpha, x.data(), &beta, y.data(), nullptr);
    }
    if (st != SPMV_STATUS_SUCCESS) return spmv_last_error();
    const std::string bad = check_spmv(at, reference_spmv(at, alpha, x.data(), beta, y0.data()), y.data());
    if (!bad.empty()) return "beta " + std::to_string(beta) + ": " + bad;
  }
  return "";
}

}  // namespace

TEST_CASE("transpose: the host's parallel sort matches the reference's, positions included", "[transpose]") {
  for (const auto& [name, m] : shapes())
    for (int base : {0, 1}) {
      INFO(name << ", base " << base);
      check_host_transpose<int32_t, float>(m, base);
      check_host_transpose<int64_t, double>(m, base);
    }
}

TEST_CASE("transpose: a plan of A^T reports A's sizes and how A^T was built", "[transpose]") {
  if (!test::require_cpu_backend()) return;
  const Csr64 a = generate_matrix("lpwide:200:10", 7);
  const spmv_csr_t desc = view(a);
  spmvjit::Options o;
  o.backend = SPMV_BACKEND_CPU;
  o.operation = SPMV_OPERATION_TRANSPOSE;
  spmvjit::SpmvPlan plan(desc, o);
  spmv_plan_info_t info = SPMV_PLAN_INFO_INIT;
  REQUIRE(spmv_plan_info(plan.get(), &info) == SPMV_STATUS_SUCCESS);
  CHECK(info.rows == a.rows);
  CHECK(info.cols == a.cols);
  CHECK(info.operation == SPMV_OPERATION_TRANSPOSE);
  const Plan& p = plan_impl(plan.get());
  CHECK(p.rows() == a.cols);  // y of op(A)
  CHECK(p.cols() == a.rows);
  const Json d = p.describe_json();
  CHECK(d["operation"] == Json("A^T"));
  CHECK(d["transpose"]["built"] == Json("host"));
  CHECK(d["transpose"]["position_bytes"].as_int() == a.nnz() * 8);
  CHECK(d["timings"]["transpose"].as_double() > 0);
  CHECK(check_transposed_spmv(plan.get(), a, nullptr, 3) == "");
  // A plan of A says so too.
  spmvjit::Options n;
  n.backend = SPMV_BACKEND_CPU;
  spmvjit::SpmvPlan plain(desc, n);
  CHECK(plan_impl(plain.get()).describe_json()["operation"] == Json("A"));
  CHECK(plan_impl(plain.get()).describe_json()["transpose"].is_null());
}

TEST_CASE("transpose: an unknown operation or an invalid A is refused before anything is built",
          "[transpose]") {
  if (!test::require_cpu_backend()) return;
  Csr64 a = generate_matrix("random:50:1:5:30", 8);
  spmv_options_t o;
  spmv_options_init(&o);
  o.backend = SPMV_BACKEND_CPU;
  const int bad_op = 3;
  std::memcpy(&o.operation, &bad_op, sizeof bad_op);
  spmv_csr_t desc = view(a);
  spmv_plan_t plan = nullptr;
  CHECK(spmv_plan(&plan, &desc, &o) == SPMV_STATUS_INVALID_VALUE);
  CHECK(plan == nullptr);
  CHECK(std::string(spmv_last_error()).find("operation") != std::string::npos);
  // A column outside the matrix must be caught before the transpose counts it.
  o.operation = SPMV_OPERATION_TRANSPOSE;
  a.col_idx[7] = a.cols + 5;
  desc = view(a);
  CHECK(spmv_plan(&plan, &desc, &o) == SPMV_STATUS_INVALID_MATRIX);
  CHECK(plan == nullptr);
  CHECK(std::string(spmv_last_error()).find("column index") != std::string::npos);
}

TEST_CASE("transpose: measure mode times A^T's candidates", "[transpose]") {
  if (!test::require_cpu_backend()) return;
  const Csr64 a = generate_matrix("powerlaw:3000:2:300", 9);
  const spmv_csr_t desc = view(a);
  spmvjit::Options o;
  o.backend = SPMV_BACKEND_CPU;
  o.cache_dir = "";  // no wisdom: measured here
  o.planning = SPMV_PLANNING_MEASURE;
  o.operation = SPMV_OPERATION_TRANSPOSE;
  spmvjit::SpmvPlan plan(desc, o);
  const Json d = plan_impl(plan.get()).describe_json();
  CHECK(d["planner"]["measured"].size() >= 1);
  CHECK(d["operation"] == Json("A^T"));
  CHECK(check_transposed_spmv(plan.get(), a, nullptr, 4) == "");
}

TEST_CASE("transpose device: plans of A^T from host and device memory, every device format",
          "[cuda][transpose]") {
  if (!test::gpu_available()) {
    SPMVJIT_SKIP("no GPU device");
  }
  Backend& b = test::gpu_backend();
  uint64_t seed = 50;
  for (const auto& [name, a] : shapes()) {
    const spmv_csr_t host = view(a);
    DeviceBuffer d[3];
    const void* src[3] = {a.row_ptr.data(), a.col_idx.data(), a.val.data()};
    const size_t bytes[3] = {a.row_ptr.size() * 8, a.col_idx.size() * 8, a.val.size() * 8};
    for (int i = 0; i < 3; ++i) {
      d[i] = DeviceBuffer(b, bytes[i]);
      if (bytes[i]) b.upload(d[i].get(), src[i], bytes[i]);
    }
    spmv_csr_t dev = host;
    dev.row_ptr = d[0].get(), dev.col_idx = d[1].get(), dev.values = d[2].get();
    dev.memory = SPMV_MEMORY_DEVICE;
    std::vector<std::string> formats = {""};
    for (const Format* f : all_formats())
      if (f->supports(b.kind()) && !f->multi_vector()) formats.push_back(f->name());
    for (const spmv_csr_t* desc : {&host, static_cast<const spmv_csr_t*>(&dev)})
      for (const std::string& f : formats) {
        INFO(name << ", format " << (f.empty() ? "auto" : f) << ", " << (desc == &dev ? "device" : "host")
                  << " memory");
        spmvjit::Options o;
        o.backend = test::gpu_api();
        o.operation = SPMV_OPERATION_TRANSPOSE;
        o.format = f.empty() ? nullptr : f.c_str();
        spmv_plan_t plan = nullptr;
        const spmv_status_t st = spmv_plan(&plan, desc, &o);
        if (st == SPMV_STATUS_UNSUPPORTED) continue;
        REQUIRE(st == SPMV_STATUS_SUCCESS);
        CHECK(check_transposed_spmv(plan, a, &b, ++seed) == "");
        // New values in A's order, from the same memory as the matrix.
        Csr64 fresh = a;
        for (double& v : fresh.val) v = v * 0.5 - 0.25;
        DeviceBuffer dv(b, fresh.val.size() * 8);
        if (!fresh.val.empty()) b.upload(dv.get(), fresh.val.data(), fresh.val.size() * 8);
        const bool on_device = desc == &dev;
        REQUIRE(spmv_plan_update_values(plan, on_device ? dv.get() : fresh.val.data(),
                                        on_device ? SPMV_MEMORY_DEVICE : SPMV_MEMORY_HOST) ==
                SPMV_STATUS_SUCCESS);
        CHECK(check_transposed_spmv(plan, fresh, &b, ++seed) == "");
        spmv_plan_destroy(plan);
      }
  }
}
