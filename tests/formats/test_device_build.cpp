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

namespace spmvjit {
#include "templates/contract/value_gather.h"
}  // namespace spmvjit

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

// The value maps' gathers (templates/gpu/value_map.cu, several slots a thread per step) on maps
// of every length up to a few steps past the emulated grid: padding slots (-1) give 0, the check
// mode counts each differing slot, the CODE8 gather writes each value's place in the table and
// counts the values the table lacks, and nothing past the map's end is written.
template <class I, class V>
void value_map_gathers() {
  if (!test::require_cpu_backend()) return;
  using Bits = std::conditional_t<sizeof(V) == 8, uint64_t, uint32_t>;
  const HostCsr<I, V> shape = generate_matrix("poisson2d:3", 1).template cast<I, V>();
  test::EmulatedDevice dev(shape.ref(), 0);
  const int64_t nnz = 29;
  std::vector<Bits> values(static_cast<size_t>(nnz));
  for (int64_t k = 0; k < nnz; ++k) {
    const V v = V(int(k % 7) - 3) * V(0.5);  // 0 among them
    std::memcpy(&values[size_t(k)], &v, sizeof v);
  }
  std::vector<Bits> table(values);
  std::sort(table.begin(), table.end());
  table.erase(std::unique(table.begin(), table.end()), table.end());
  const Bits stranger = values[1];  // -1.0: absent from the shorter table
  std::vector<Bits> fewer(table);
  fewer.erase(std::find(fewer.begin(), fewer.end(), stranger));
  const int64_t tail = 8;  // slots past the map's end that must keep their poison
  for (int64_t count : {1, 3, 4, 5, 11, 16, 47, 50, 53, 130}) {
    INFO("map of " << count << " slots");
    std::vector<I> map(static_cast<size_t>(count));
    for (int64_t j = 0; j < count; ++j) map[size_t(j)] = j % 5 == 2 ? I(-1) : I((j * 11 + 3) % nnz);
    auto want = [&](int64_t j) { return map[size_t(j)] < 0 ? Bits(0) : values[size_t(map[size_t(j)])]; };
    uint64_t errors = 0;
    SpmvArgs a{};
    a.a[DP_VM_VALUES] = values.data();
    a.a[DP_VM_MAP] = map.data();
    a.a[DP_VM_ERRORS] = &errors;
    a.n[DP_VM_N_COUNT] = count;
    a.n[DP_VM_N_NNZ] = nnz;
    const int64_t items = (count + DP_VM_SLOTS - 1) / DP_VM_SLOTS;
    HostArray out = dev.alloc(count + tail, sizeof(Bits));
    a.a[DP_VM_OUT] = out.device.get();
    dev.launch("value_map", "spmvjit_vm_gather", items, a, DP_BLOCK);
    const Bits* got = static_cast<const Bits*>(out.device.get());
    for (int64_t j = 0; j < count; ++j) REQUIRE(got[j] == want(j));
    Bits poison;
    std::memset(&poison, 0xa5, sizeof poison);  // what EmulatedDevice::alloc fills memory with
    for (int64_t j = count; j < count + tail; ++j) CHECK(got[j] == poison);
    CHECK(errors == 0);
    static_cast<Bits*>(out.device.get())[count / 2] ^= 1;
    static_cast<Bits*>(out.device.get())[count - 1] ^= 2;
    a.n[DP_VM_N_CHECK] = 1;
    dev.launch("value_map", "spmvjit_vm_gather", items, a, DP_BLOCK);
    CHECK(errors == (count / 2 == count - 1 ? 1 : 2));
    a.n[DP_VM_N_CHECK] = 0;
    for (const std::vector<Bits>* t : {&table, &fewer}) {
      errors = 0;
      HostArray codes = dev.alloc(count + tail, 1);
      a.a[DP_VM_OUT] = codes.device.get();
      a.a[DP_VM_TABLE] = const_cast<Bits*>(t->data());
      a.n[DP_VM_N_TABLE] = int64_t(t->size());
      dev.launch("value_map", "spmvjit_vm_gather_codes", items, a, DP_BLOCK);
      const uint8_t* c = static_cast<const uint8_t*>(codes.device.get());
      int64_t lacking = 0;
      for (int64_t j = 0; j < count; ++j) {
        const auto at = std::lower_bound(t->begin(), t->end(), want(j));
        lacking += at == t->end() || *at != want(j);
        if (at != t->end() && *at == want(j)) REQUIRE(c[j] == uint8_t(at - t->begin()));
      }
      for (int64_t j = count; j < count + tail; ++j) CHECK(c[j] == 0xa5);
      CHECK(int64_t(errors) == lacking);
      if (t == &fewer && count >= 47) CHECK(lacking > 0);
    }
  }
}

// The formats' own update gathers (Format::device_gather, run here through the emulation) against
// the map they stand for: the layout converted from position codes (entry k's value the bits of
// k + 1) is the map; every mode of the gather must agree with it: VG_CHECK counts no difference
// (and one per slot of a corrupted map entry in a row it computes), VG_GATHER writes each slot's
// value, VG_CODES each slot's place in the table.
template <class I, class V>
void format_gathers_match_maps() {
  if (!test::require_cpu_backend()) return;
  using Bits = std::conditional_t<sizeof(V) == 8, uint64_t, uint32_t>;
  const TargetInfo t = gpu_target(32);
  int gathers = 0;
  for (const char* spec :
       {"blockfem:6:3", "blocks:301:4:4", "random:400:1:40", "poisson2d:19", "diag:500:9"}) {
    const HostCsr<I, V> a = generate_matrix(spec, 7).template cast<I, V>();
    const MatrixStats s = compute_stats(a.ref());
    std::vector<V> codes(a.val.size()), values(a.val.size());
    std::vector<Bits> table{0};
    for (size_t k = 0; k < codes.size(); ++k) {
      const Bits c = Bits(k + 1);
      std::memcpy(&codes[k], &c, sizeof c);
      values[k] = V(int(k % 9) - 4) * V(0.5);
      Bits b;
      std::memcpy(&b, &values[k], sizeof b);
      table.push_back(b);
    }
    std::sort(table.begin(), table.end());
    table.erase(std::unique(table.begin(), table.end()), table.end());
    CsrRef coded_in = a.ref();
    coded_in.val = codes.data();
    for (const Format* f : all_formats()) {
      if (!f->supports(t.backend)) continue;
      for (const FormatParams& p : f->candidates(a.ref(), s, t)) {
        FormatData coded;
        try {
          coded = f->convert(coded_in, p, t);
        } catch (const Error&) {
          continue;
        }
        DeviceGather g;
        if (!f->device_gather(coded, g)) continue;
        INFO(f->name() << " " << params_json(p).dump() << " on " << spec);
        // The map of each value array, from the codes the conversion placed.
        std::vector<std::vector<I>> maps;
        std::vector<size_t> arrays;
        for (size_t i = 0; i < coded.arrays.size(); ++i) {
          if (!coded.arrays[i].is_values()) continue;
          arrays.push_back(i);
          const Bits* c = coded.arrays[i].buf.template as<Bits>();
          std::vector<I> m(size_t(coded.arrays[i].count));
          for (size_t j = 0; j < m.size(); ++j) m[j] = c[j] == 0 ? I(-1) : I(c[j] - 1);
          maps.push_back(std::move(m));
        }
        REQUIRE(arrays.size() <= size_t(VG_MAX_VALUE_ARRAYS));
        test::EmulatedDevice dev(a.ref(), 0);
        uint64_t errors = 0;
        std::vector<HostArray> outs;
        auto run = [&](int mode, size_t elem) {
          errors = 0;
          SpmvArgs x{};
          x.rows = a.rows;
          x.x = values.data();
          x.values_table = table.data();
          x.scratch = &errors;
          x.a[VG_ROW_PTR] = a.row_ptr.data();
          outs.clear();
          for (size_t i = 0; i < arrays.size(); ++i) {
            outs.push_back(dev.alloc(int64_t(maps[i].size()), elem));
            x.a[VG_MAP0 + i] = maps[i].data();
            x.a[VG_OUT0 + i] = mode == VG_CHECK ? nullptr : outs.back().device.get();
          }
          for (size_t k = 0; k < g.layout.size(); ++k)
            x.a[VG_LAYOUT0 + k] = coded.arrays[g.layout[k]].buf.data();
          x.n[VG_N_MODE] = mode;
          x.n[VG_N_TABLE] = int64_t(table.size());
          for (size_t k = 0; k < g.params.size(); ++k) x.n[VG_N_PARAM0 + k] = g.params[k];
          if (g.items) dev.launch(g.module, g.entry, g.items, x, g.block);
        };
        auto want = [&](size_t i, size_t j) {
          const I m = maps[i][j];
          Bits b = 0;
          if (m >= 0) std::memcpy(&b, &values[size_t(m)], sizeof b);
          return b;
        };
        run(VG_CHECK, 1);
        CHECK(errors == 0);
        run(VG_GATHER, sizeof(V));
        for (size_t i = 0; i < arrays.size(); ++i)
          for (size_t j = 0; j < maps[i].size(); ++j)
            REQUIRE(outs[i].device.template as<Bits>()[j] == want(i, j));
        run(VG_CODES, 1);
        CHECK(errors == 0);
        for (size_t i = 0; i < arrays.size(); ++i)
          for (size_t j = 0; j < maps[i].size(); ++j) {
            const auto at = std::lower_bound(table.begin(), table.end(), want(i, j));
            REQUIRE(static_cast<const uint8_t*>(outs[i].device.get())[j] == uint8_t(at - table.begin()));
          }
        // A map entry the gather computes, moved: the check sees it (when some row is computed).
        int64_t moved = 0;
        for (size_t j = 0; j < maps[0].size() && !moved; ++j)
          if (maps[0][j] >= 0) maps[0][j] = I(maps[0][j] ^ 1), moved = 1;
        run(VG_CHECK, 1);
        CHECK(errors <= uint64_t(moved));
        gathers += errors == 1;
      }
    }
  }
  CHECK(gathers > 0);  // some gather computed positions and was checked against the map
}

}  // namespace

TEST_CASE("formats' own update gathers (emulated on the CPU) match their value maps: int32 double",
          "[formats][device]") {
  format_gathers_match_maps<int32_t, double>();
}
TEST_CASE("formats' own update gathers (emulated on the CPU) match their value maps: int64 float",
          "[formats][device]") {
  format_gathers_match_maps<int64_t, float>();
}
TEST_CASE("value map gathers (emulated on the CPU): padding, tails, checks, codes: int32 double",
          "[formats][device]") {
  value_map_gathers<int32_t, double>();
}
TEST_CASE("value map gathers (emulated on the CPU): padding, tails, checks, codes: int64 float",
          "[formats][device]") {
  value_map_gathers<int64_t, float>();
}

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
