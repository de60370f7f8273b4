// Device conversions run on the CPU (tests/formats/emulated_device.hpp): for every format a device
// can build, the build kernels produce the host converter's arrays byte for byte, for both index
// bases and every type pair, on matrices with empty rows, long rows, blocks, unsorted and repeated
// columns, one row and none.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cstring>

#include "engine/gen/generators.hpp"
#include "engine/stats.hpp"
#include "tests/formats/emulated_device.hpp"
#include "tests/test_matrices.hpp"
#include "tests/test_support.hpp"

namespace {

using namespace spmvjit;

// An NVIDIA GPU (warps of 32), or an AMD CDNA one (wavefronts of 64: wider slices and groups).
TargetInfo gpu_target(int warp) {
  TargetInfo t;
  t.backend = warp == 64 ? BackendKind::hip : BackendKind::cuda;
  t.target = warp == 64 ? "gfx90a" : "sm_90";
  t.warp_size = warp;
  t.sm_count = 132;
  t.simd_bytes = 0;
  return t;
}

void check_same(const FormatData& dev, const FormatData& host) {
  CHECK(dev.format == host.format);
  CHECK(dev.params == host.params);
  REQUIRE(dev.arrays.size() == host.arrays.size());
  for (size_t i = 0; i < dev.arrays.size(); ++i) {
    const HostArray &d = dev.arrays[i], &h = host.arrays[i];
    INFO("slot " << i << " (" << h.name << ")");
    CHECK(d.name == h.name);
    CHECK(d.kind == h.kind);
    REQUIRE(d.count == h.count);
    if (!h.count) continue;
    REQUIRE(d.elem == h.elem);
    REQUIRE(d.device);
    CHECK(std::memcmp(d.device.get(), h.buf.data(), size_t(h.count) * h.elem) == 0);
  }
  for (int i = 0; i < kMaxArrays; ++i) CHECK(dev.ints[i] == host.ints[i]);
  CHECK(dev.stored_entries == host.stored_entries);
  CHECK(dev.matrix_bytes == host.matrix_bytes);
  CHECK(dev.scratch_bytes == host.scratch_bytes);
  CHECK(dev.facts.dump() == host.facts.dump());
  REQUIRE(dev.steps.size() == host.steps.size());
  for (size_t i = 0; i < dev.steps.size(); ++i) {
    CHECK(dev.steps[i].entry == host.steps[i].entry);
    CHECK(dev.steps[i].grid == host.steps[i].grid);
    CHECK(dev.steps[i].block == host.steps[i].block);
    CHECK(dev.steps[i].early == host.steps[i].early);
  }
}

// Rows the API allows but generators never make: every third row reversed (unsorted columns),
// and every seventh row's last column repeating its first (a duplicate).
HostCsr<int64_t, double> unsorted_with_duplicates(HostCsr<int64_t, double> m) {
  for (int64_t r = 0; r < m.rows; ++r) {
    const auto b = m.row_ptr[size_t(r)], e = m.row_ptr[size_t(r) + 1];
    if (r % 3 == 0) {
      std::reverse(m.col_idx.begin() + b, m.col_idx.begin() + e);
      std::reverse(m.val.begin() + b, m.val.begin() + e);
    }
    if (r % 7 == 0 && e - b >= 2) m.col_idx[size_t(e - 1)] = m.col_idx[size_t(b)];
  }
  return m;
}

// A format that builds CODE8 codes on a device (Format::builds_device_codes), on `a` (and `based`,
// the same with index base `base`) with its values replaced by a dozen distinct ones (zeros among
// them): with their whole table it writes the host's convert_codes arrays byte for byte and counts
// no error; with a table lacking one value the matrix holds, it counts that value's entries.
template <class I, class V>
void check_device_codes(const Format& f, HostCsr<I, V> a, HostCsr<I, V> based, int base,
                        const FormatParams& p, const TargetInfo& t) {
  using Bits = std::conditional_t<sizeof(V) == 8, uint64_t, uint32_t>;
  auto bits = [](V v) {
    Bits b;
    std::memcpy(&b, &v, sizeof b);
    return b;
  };
  for (size_t k = 0; k < a.val.size(); ++k) a.val[k] = V(int(k % 13) - 6) * V(0.25);
  std::vector<Bits> table{0};
  for (V v : a.val) table.push_back(bits(v));
  std::sort(table.begin(), table.end());
  table.erase(std::unique(table.begin(), table.end()), table.end());
  std::vector<uint8_t> codes(a.val.size());
  for (size_t k = 0; k < a.val.size(); ++k)
    codes[k] = uint8_t(std::lower_bound(table.begin(), table.end(), bits(a.val[k])) - table.begin());
  CsrRef coded = a.ref();
  coded.val = codes.data();
  const FormatData host = f.convert_codes(coded, p, t);
  based.val = a.val;
  uint64_t errors = 0;
  test::EmulatedDevice dev(based.ref(), base);
  dev.set_codes(DeviceConverter::Codes{table.data(), int64_t(table.size()), &errors});
  {
    INFO("codes with the whole table");
    check_same(f.convert_device(dev, p, t), host);
    CHECK(errors == 0);
  }
  // Without 0.25 (the entries k % 13 == 7).
  const int64_t lacking = int64_t(a.val.size() / 13) + (a.val.size() % 13 > 7);
  std::vector<Bits> fewer = table;
  fewer.erase(std::remove(fewer.begin(), fewer.end(), bits(V(0.25))), fewer.end());
  dev.set_codes(DeviceConverter::Codes{fewer.data(), int64_t(fewer.size()), &errors});
  f.convert_device(dev, p, t);
  INFO("codes with a table that lacks 0.25");
  CHECK(int64_t(errors) == lacking);
}

template <class I, class V>
void device_builds_match_host(int warp = 32) {
  if (!test::require_cpu_backend()) return;
  const TargetInfo t = gpu_target(warp);
  int built = 0;
  std::vector<std::pair<std::string, HostCsr<int64_t, double>>> matrices;
  for (const char* spec :
       {"poisson2d:23", "random:3001:0:40", "powerlaw:5000:1.6:3000", "denserows:2000:2:5", "short:4097:2",
        "dense:33", "random:37:1:40:1000", "random:1:1:1", "diag:500:7", "blocks:3000:4:3", "blockfem:4:3"})
    matrices.push_back({spec, generate_matrix(spec, 11)});
  // hyb: an ELL part (K = 16) and a tail, over several windows of rows; a width past the exact
  // short lengths (K >= 64). jds: more distinct lengths (keys) than rows per rank window.
  for (const char* spec : {"random:9000:0:30", "random:6000:64:100", "random:700:0:700"})
    matrices.push_back({spec, generate_matrix(spec, 11)});
  // sell_block: rows with unsorted and repeated columns, which the API allows.
  matrices.push_back(
      {"unsorted blockfem:4:2", unsorted_with_duplicates(generate_matrix("blockfem:4:2", 11))});
  matrices.push_back(
      {"unsorted blocks:9000:2:3", unsorted_with_duplicates(generate_matrix("blocks:9000:2:3", 11))});
  // Wide bands (sell_diag slices with more offsets than its table), blocks (bsr's candidates), and
  // rows out of order with repeated columns.
  for (const char* spec : {"diag:2000:101", "blockfem:4:3"})
    matrices.push_back({spec, generate_matrix(spec, 11)});
  for (const char* spec : {"diag:700:9", "blockfem:3:2", "random:500:0:70"})
    matrices.push_back({std::string(spec) + " scrambled", test::scrambled(generate_matrix(spec, 12))});
  matrices.push_back({"0x0", HostCsr<int64_t, double>{}});
  for (const auto& [name, m] : matrices) {
    const HostCsr<I, V> a = m.template cast<I, V>();
    const MatrixStats s = compute_stats(a.ref());
    for (int base : {0, 1}) {
      HostCsr<I, V> based = a;
      for (I& r : based.row_ptr) r += I(base);
      for (I& c : based.col_idx) c += I(base);
      for (const Format* f : all_formats()) {
        if (!f->supports(t.backend) || !f->converts_on_device()) continue;
        std::vector<FormatParams> params = f->candidates(a.ref(), s, t);
        if (f->multi_vector()) {  // k as the planner gives it: 32 vectors cut rows past 256 nonzeros
          const std::vector<FormatParams> one = params;
          params.clear();
          for (FormatParams p : one)
            for (int k : {1, 32}) {
              p[kVectorsParam] = k, p[kLayoutParam] = k == 32;
              params.push_back(p);
            }
        }
        for (const FormatParams& p : params) {
          if (!f->device_convertible(p)) continue;
          INFO(f->name() << " " << params_json(p).dump() << " on " << name << ", base " << base);
          FormatData host;
          try {
            host = f->convert(a.ref(), p, t);
          } catch (const Error& e) {
            CHECK(e.status() == SPMV_STATUS_UNSUPPORTED);
            continue;
          }
          test::EmulatedDevice dev(based.ref(), base);
          check_same(f->convert_device(dev, p, t), host);
          if (f->builds_device_codes()) check_device_codes(*f, a, based, base, p, t);
          ++built;
        }
      }
    }
  }
  CHECK(built > 0);
}

}  // namespace

TEST_CASE("device builds (emulated on the CPU) match the host: int32 double", "[formats][device]") {
  device_builds_match_host<int32_t, double>();
}
TEST_CASE("device builds (emulated on the CPU) match the host: int32 float", "[formats][device]") {
  device_builds_match_host<int32_t, float>();
}
TEST_CASE("device builds (emulated on the CPU) match the host: int64 double", "[formats][device]") {
  device_builds_match_host<int64_t, double>();
}
TEST_CASE("device builds (emulated on the CPU) match the host: int64 float", "[formats][device]") {
  device_builds_match_host<int64_t, float>();
}
TEST_CASE("device builds (emulated on the CPU) match the host on wavefronts of 64: int32 double",
          "[formats][device]") {
  device_builds_match_host<int32_t, double>(64);
}
TEST_CASE("device builds (emulated on the CPU) match the host on wavefronts of 64: int64 float",
          "[formats][device]") {
  device_builds_match_host<int64_t, float>(64);
}
