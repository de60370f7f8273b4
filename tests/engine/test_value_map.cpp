// Layouts and their values against the conversion, for every format with the path and every CPU
// candidate: value maps read off a layout (ValueMap::from_layout, the first update_values of a
// plan that kept no pattern copy) must gather exactly what converting new values gives, and
// conversions of coded values (Format::convert_codes) must give convert's layout encoded.
#include <catch2/catch.hpp>
#include <cstring>
#include <string>
#include <vector>

#include "engine/formats/format.hpp"
#include "engine/gen/generators.hpp"
#include "engine/stats.hpp"
#include "engine/value_codec.hpp"
#include "engine/value_map.hpp"
#include "tests/test_support.hpp"

using namespace spmvjit;

namespace {

using Csr64 = HostCsr<int64_t, double>;

// Nonzero values only: the layout's nonzero slots are then exactly the entries.
Csr64 nonzero(Csr64 a) {
  for (double& v : a.val)
    if (v == 0) v = 1;
  return a;
}

std::vector<std::pair<std::string, Csr64>> matrices() {
  std::vector<std::pair<std::string, Csr64>> out;
  // Stencils (diagonals with remainders), bands, blocks with edge blocks, power-law rows (sorted
  // windows), dense rows, a shape of no multiple of any slice or block side.
  for (const char* spec :
       {"poisson2d:31", "stencil27:7", "varband:900", "blockfem:5:3", "blocks:301:4:4", "powerlaw:3000",
        "random:400:1:40", "denserows:500:3:8", "dense:37:53", "circuit:2000"})
    out.emplace_back(spec, nonzero(generate_matrix(spec, 5)));
  Csr64 one;
  one.rows = one.cols = 1, one.row_ptr = {0, 1}, one.col_idx = {0}, one.val = {2.5};
  out.emplace_back("1x1", one);
  Csr64 holes;  // empty rows at both ends and between, one long row
  holes.rows = 50, holes.cols = 3000;
  holes.row_ptr = {0};
  for (int64_t r = 0; r < holes.rows; ++r) {
    if (r == 20)
      for (int64_t c = 0; c < 2500; ++c) holes.col_idx.push_back(c), holes.val.push_back(double(c % 7 + 1));
    else if (r % 4 == 1 && r < 45)
      for (int64_t c : {r, r + 2, r + 9}) holes.col_idx.push_back(c), holes.val.push_back(0.5 + double(r));
    holes.row_ptr.push_back(int64_t(holes.col_idx.size()));
  }
  out.emplace_back("empty rows and a long one", holes);
  Csr64 late;  // whole slices, blocks and parts of empty rows before the first entry
  late.rows = 700, late.cols = 90;
  late.row_ptr = {0};
  for (int64_t r = 0; r < late.rows; ++r) {
    if (r >= 600)
      for (int64_t c : {r % 83, r % 83 + 7}) late.col_idx.push_back(c), late.val.push_back(1.5);
    late.row_ptr.push_back(int64_t(late.col_idx.size()));
  }
  out.emplace_back("600 empty rows, then entries", late);
  Csr64 none;  // rows and columns, no entry (fuzz_plan's crash: a walk over empty rows only)
  none.rows = none.cols = 960;
  none.row_ptr.assign(961, 0);
  out.emplace_back("960x960, no entry", none);
  return out;
}

// Marks of the slots holding a nonzero value, numbered as value_slot_bases numbers them.
template <class V>
std::vector<uint8_t> held_slots(const FormatData& d) {
  const std::vector<int64_t> base = value_slot_bases(d);
  std::vector<uint8_t> held(size_t(base.back()) + 1, 0);
  for (size_t i = 0; i < d.arrays.size(); ++i)
    if (d.arrays[i].is_values())
      for (int64_t k = 0; k < d.arrays[i].count; ++k)
        held[size_t(base[i] + k)] = d.arrays[i].buf.template as<V>()[k] != V(0);
  return held;
}

template <class I, class V>
void check_maps(int* walked, int* asked_count, int* blocked_count) {
  for (const auto& [name, m64] : matrices()) {
    HostCsr<I, V> a = m64.template cast<I, V>();
    const MatrixStats s = compute_stats(a.ref());
    TargetInfo t;
    t.backend = BackendKind::cpu;
    t.simd_bytes = 64;
    t.threads = 3;
    HostCsr<I, V> fresh = a;
    for (size_t k = 0; k < fresh.val.size(); ++k) fresh.val[k] = V(double(k % 97) + 0.25);
    for (const Format* f : all_formats()) {
      if (!f->supports(BackendKind::cpu)) continue;
      for (const FormatParams& p : f->candidates(a.ref(), s, t)) {
        INFO(f->name() << " " << params_json(p).dump() << " on " << name);
        FormatData d;
        try {
          d = f->convert(a.ref(), p, t);
        } catch (const Error&) {
          continue;  // refused (padding): nothing to map
        }
        SlicedValues sliced;
        const bool by_rows = f->sliced_values(d, sliced);
        if (!by_rows && !f->numbers_slots()) continue;
        ++*walked;
        std::vector<uint8_t> held = held_slots<V>(d);
        const std::unique_ptr<ValueMap> map = ValueMap::from_layout(*f, d, a.ref(), HeldSlots(held.data()));
        REQUIRE(map);
        CHECK(map->reproduces(fresh.val.data(), f->convert(fresh.ref(), p, t)));
        CHECK(map->reproduces(a.val.data(), d));
        BlockedValues blocked;
        if (f->blocked_values(d, blocked)) {  // bsr: a mask a block, no positions
          CHECK(std::string(map->kind()) == "blocked");
          ++*blocked_count;
        }
        if (by_rows) {  // the same asked slot by slot (a binary search for each row's count)
          auto test = [](const void* marks, int64_t slot) {
            return static_cast<const uint8_t*>(marks)[slot] != 0;
          };
          const std::unique_ptr<ValueMap> asked =
              ValueMap::from_layout(*f, d, a.ref(), HeldSlots(test, held.data()));
          REQUIRE(asked);
          CHECK(asked->reproduces(fresh.val.data(), f->convert(fresh.ref(), p, t)));
          ++*asked_count;
        }
        // One slot fewer marked: not the pattern, no map (a check that can fail).
        if (a.nnz() > 0) {
          for (uint8_t& h : held)
            if (h) {
              h = 0;
              break;
            }
          CHECK(ValueMap::from_layout(*f, d, a.ref(), HeldSlots(held.data())) == nullptr);
        }
      }
    }
  }
}

}  // namespace

TEST_CASE("value maps read off a layout reproduce the conversion, every walk and candidate", "[codec]") {
  int walked = 0, asked = 0, blocked = 0;
  check_maps<int32_t, double>(&walked, &asked, &blocked);
  check_maps<int64_t, float>(&walked, &asked, &blocked);
  CHECK(walked > 50);   // sell (both orders), ell, sell_diag and bsr, on most matrices
  CHECK(asked > 20);    // sell's and ell's counts by a binary search
  CHECK(blocked > 10);  // bsr's shapes
}

namespace {

// Byte-equal layouts: arrays (names, counts, element sizes, bytes), integers and sizes.
std::string layout_difference(const FormatData& x, const FormatData& y) {
  if (x.params != y.params) return "params";
  if (x.arrays.size() != y.arrays.size()) return "array count";
  for (size_t i = 0; i < x.arrays.size(); ++i) {
    const HostArray &a = x.arrays[i], &b = y.arrays[i];
    if (a.count != b.count || a.elem != b.elem || a.buf.bytes() != b.buf.bytes()) return a.name + ": sizes";
    if (a.buf.bytes() && std::memcmp(a.buf.data(), b.buf.data(), a.buf.bytes()) != 0)
      return a.name + ": bytes";
  }
  if (!std::equal(std::begin(x.ints), std::end(x.ints), std::begin(y.ints))) return "ints";
  if (x.stored_entries != y.stored_entries || x.matrix_bytes != y.matrix_bytes) return "sizes";
  if (x.nonzero_slots != y.nonzero_slots) return "nonzero slots";
  return "";
}

template <class I, class V>
void check_coded(int* coded) {
  for (const auto& [name, m64] : matrices()) {
    HostCsr<I, V> a = m64.template cast<I, V>();
    // Few distinct values, explicit zeros among them: what CODE8 plans hold.
    for (size_t k = 0; k < a.val.size(); ++k) a.val[k] = k % 11 == 3 ? V(0) : V(double(k % 5) - 2.5);
    const MatrixStats s = compute_stats(a.ref());
    TargetInfo t;
    t.backend = BackendKind::cpu;
    t.simd_bytes = 64;
    t.threads = 3;
    ValueTable table;
    for (double v : {0.0, -2.5, -1.5, -0.5, 0.5, 1.5}) {
      const V w = V(v);
      uint64_t b = 0;
      std::memcpy(&b, &w, sizeof(V));
      table.bits.push_back(b);
    }
    std::sort(table.bits.begin(), table.bits.end());
    REQUIRE(table.bits[0] == 0);
    std::vector<uint8_t> codes(a.val.size() + 1);
    REQUIRE(encode_codes(a.val.data(), sizeof(V), a.nnz(), ValueCodeSet(table), codes.data()));
    CsrRef c = a.ref();
    c.val = codes.data();
    for (const Format* f : all_formats()) {
      if (!f->supports(BackendKind::cpu) || !f->converts_codes()) continue;
      for (const FormatParams& p : f->candidates(a.ref(), s, t)) {
        INFO(f->name() << " " << params_json(p).dump() << " on " << name);
        FormatData want;
        try {
          want = f->convert(a.ref(), p, t);
        } catch (const Error&) {
          CHECK_THROWS(f->convert_codes(c, p, t));  // the same refusal: choices see the values' size
          continue;
        }
        REQUIRE(encode_values_host(want, ValueCodec::code8, table));
        FormatData got = f->convert_codes(c, p, t);
        for (HostArray& h : got.arrays)  // as Plan::convert_coded leaves empty value arrays
          if (h.is_values() && !h.count) h.elem = sizeof(V);
        got.matrix_bytes = sum_matrix_bytes(got);
        CHECK(layout_difference(got, want) == "");
        ++*coded;
      }
    }
  }
}

}  // namespace

TEST_CASE("conversions of coded values give the conversion's layout encoded, every candidate", "[codec]") {
  int coded = 0;
  check_coded<int32_t, double>(&coded);
  check_coded<int64_t, float>(&coded);
  CHECK(coded > 50);
}
