// Value compression (engine/value_codec.hpp): the sample's table, the codec per candidate, the
// host encoder, and plans that compress, fall back when the sample missed a value, and keep
// update_values exact across tables and codecs.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cstring>
#include <vector>

#include "engine/gen/generators.hpp"
#include "engine/reference.hpp"
#include "engine/sample.hpp"
#include "engine/value_codec.hpp"
#include "spmvjit/spmvjit.hpp"
#include "tests/test_support.hpp"

namespace {

using namespace spmvjit;
using Csr64 = HostCsr<int64_t, double>;

uint64_t bits(double v) {
  uint64_t u;
  std::memcpy(&u, &v, 8);
  return u;
}

Csr64 valued(const char* spec, std::vector<double> choices, uint64_t seed = 3) {
  Csr64 a = generate_matrix(spec, seed);
  for (size_t k = 0; k < a.val.size(); ++k) a.val[k] = choices[(k * 13 + k / 3) % choices.size()];
  return a;
}

CsrRef ref_of(const Csr64& a) {
  return CsrRef{a.rows,         a.cols,           a.nnz(),          IndexType::i64,
                ValueType::f64, a.row_ptr.data(), a.col_idx.data(), a.val.data()};
}

// A plan of `a` (int32, double) on the CPU with the planner's choice or `format`.
struct CpuPlan {
  HostCsr<int32_t, double> a;
  spmv_plan_t p = nullptr;
  explicit CpuPlan(const Csr64& m, const char* format = nullptr) : a(m.cast<int32_t, double>()) {
    spmv_options_t o;
    spmv_options_init(&o);
    o.backend = SPMV_BACKEND_CPU;
    o.format = format;
    const spmv_csr_t d = csr_view<int32_t, double>(a.rows, a.cols, a.nnz(), a.row_ptr.data(),
                                                   a.col_idx.data(), a.val.data(), 0);
    REQUIRE(spmv_plan(&p, &d, &o) == SPMV_STATUS_SUCCESS);
  }
  ~CpuPlan() { spmv_plan_destroy(p); }
  std::string describe() const {
    const char* j = nullptr;
    REQUIRE(spmv_plan_describe(p, &j) == SPMV_STATUS_SUCCESS);
    return j;
  }
  std::string codec() const { return test::json_string_field(describe(), "codec"); }
  // y = 1.5 A x - 0.5 y against the reference, for the plan's current values a.val.
  std::string check(uint64_t seed) const {
    const auto x = random_vector<double>(a.cols, seed);
    auto y = random_vector<double>(a.rows, seed + 1);
    const auto y0 = y;
    const double al = 1.5, be = -0.5;
    if (spmv_execute(p, &al, x.data(), &be, y.data(), nullptr) != SPMV_STATUS_SUCCESS)
      return spmv_last_error();
    return check_spmv(a, reference_spmv(a, al, x.data(), be, y0.data()), y.data());
  }
  void update(const std::vector<double>& v) {
    a.val = v;
    REQUIRE(spmv_plan_update_values(p, v.data(), SPMV_MEMORY_HOST) == SPMV_STATUS_SUCCESS);
  }
};

}  // namespace

TEST_CASE("the sample's distinct values decide the codec of each candidate", "[codec]") {
  const Csr64 random = generate_matrix("random:3000:1:20", 1);
  CHECK_FALSE(sample_values(*sample_rows(ref_of(random))).has_value());
  const Csr64 few = valued("random:3000:1:20", {3.0, -1.0, 0.5});
  const auto t = sample_values(*sample_rows(ref_of(few)));
  REQUIRE(t.has_value());
  CHECK(t->bits == std::vector<uint64_t>{bits(0.5), bits(3.0), bits(-1.0)});  // sorted by pattern
  ValueTable table;
  CHECK(codec_for(*t, few.nnz(), few.nnz(), &table) == ValueCodec::code8);
  CHECK(table.bits.front() == 0);  // padding's zero always has a code
  CHECK(table.bits.size() == 4);
  ValueTable one;
  one.bits = {bits(1.0)};
  CHECK(codec_for(one, 100, 100, &table) == ValueCodec::uniform);
  CHECK(codec_for(one, 120, 100, &table) == ValueCodec::code8);  // padded: {0, 1}
  CHECK(table.bits == std::vector<uint64_t>{0, bits(1.0)});
  ValueTable full;
  for (int i = 1; i <= 256; ++i) full.bits.push_back(bits(double(i)));
  CHECK(codec_for(full, 10, 10, &table) == ValueCodec::plain);  // no room left for zero
  CHECK(codec_of(with_codec({{"C", 8}}, ValueCodec::code8)) == ValueCodec::code8);
  CHECK(with_codec({{"C", 8}, {kValueCodecParam, 2}}, ValueCodec::plain) == FormatParams{{"C", 8}});
}

TEST_CASE("host encoding gives codes that decode to every stored value, or changes nothing", "[codec]") {
  FormatData d;
  d.value = ValueType::f64;
  d.arrays.resize(2);
  d.arrays[1].kind = ArrayKind::value;
  d.arrays[1].elem = 8;
  d.arrays[1].count = 5000;
  d.arrays[1].buf = AlignedBuffer(8 * 5000);
  const double vals[] = {0.0, 2.5, -7.0, 1e-310, -0.0};
  for (int k = 0; k < 5000; ++k) d.arrays[1].buf.as<double>()[k] = vals[(k * 7) % 5];
  const auto t = table_of_values(d.arrays[1].buf.data(), 5000, ValueType::f64, ValueCodec::code8);
  REQUIRE(t.has_value());
  CHECK(t->bits.size() == 5);  // -0.0 and +0.0 are distinct patterns
  CHECK_FALSE(table_of_values(d.arrays[1].buf.data(), 5000, ValueType::f64, ValueCodec::uniform));
  ValueTable missing = *t;
  missing.bits.pop_back();
  CHECK_FALSE(encode_values_host(d, ValueCodec::code8, missing));
  CHECK(d.arrays[1].elem == 8);  // unchanged
  REQUIRE(encode_values_host(d, ValueCodec::code8, *t));
  REQUIRE(d.arrays[1].elem == 1);
  const AlignedBuffer table = t->table_values();
  for (int k = 0; k < 5000; ++k) {
    const double got = table.as<double>()[d.arrays[1].buf.as<uint8_t>()[k]];
    REQUIRE(bits(got) == bits(vals[(k * 7) % 5]));
  }
  CHECK(d.matrix_bytes == 5000);
}

TEST_CASE("a table of many values: runs, values split across plan threads, the 256 limit", "[codec]") {
  // 3M values: the table is counted in chunks on plan threads (split at 1/2 on two threads,
  // at thirds and quarters on more), in runs of one value and values seen once.
  const int64_t n = 3000000;
  std::vector<double> v(static_cast<size_t>(n));
  auto fill = [&](int distinct) {
    // Distinct values 1..distinct spread over the whole array (each in its own region), runs of
    // 7 repeats elsewhere, and +0.0 nowhere.
    for (int64_t k = 0; k < n; ++k) v[size_t(k)] = double(1 + (k / 7) % 3);
    for (int d = 0; d < distinct; ++d) v[size_t(int64_t(d) * (n / distinct))] = double(1 + d);
    return table_of_values(v.data(), n, ValueType::f64, ValueCodec::code8);
  };
  auto t = fill(255);  // 255 values and the zero for padding: a full table
  REQUIRE(t.has_value());
  CHECK(t->bits.size() == 256);
  CHECK(t->bits[0] == 0);
  CHECK(std::is_sorted(t->bits.begin(), t->bits.end()));
  CHECK(std::adjacent_find(t->bits.begin(), t->bits.end()) == t->bits.end());
  CHECK_FALSE(fill(256).has_value());  // one more value than a table holds
  v.back() = 0.0;                      // 256 distinct with +0.0 among them: fits exactly
  for (int64_t k = 0; k + 1 < n; ++k) v[size_t(k)] = double(1 + (k * 255) / n);
  t = table_of_values(v.data(), n, ValueType::f64, ValueCodec::code8);
  REQUIRE(t.has_value());
  CHECK(t->bits.size() == 256);
  // One value everywhere but the last: uniform refuses, code8 takes two and the zero.
  std::fill(v.begin(), v.end(), 2.0);
  v.back() = 3.0;
  CHECK_FALSE(table_of_values(v.data(), n, ValueType::f64, ValueCodec::uniform).has_value());
  t = table_of_values(v.data(), n, ValueType::f64, ValueCodec::code8);
  REQUIRE(t.has_value());
  CHECK(t->bits.size() == 3);
}

TEST_CASE("plans compress few-valued matrices and compute the same product", "[codec]") {
  if (!test::require_cpu_backend()) return;
  const CpuPlan ones(valued("powerlaw:4000:2:300", {1.0}), "csr");
  CHECK(ones.codec() == "uniform");
  CHECK(ones.check(1) == "");
  const CpuPlan few(valued("poisson2d:60", {4.0, -1.0, -1.0, 0.25}));
  CHECK(few.codec() == "code8");
  CHECK(few.check(2) == "");
  const CpuPlan random(generate_matrix("random:2000:1:10", 5));
  CHECK(random.codec() == "plain");
}

TEST_CASE("a value the sample missed keeps the values plain and the product exact", "[codec]") {
  if (!test::require_cpu_backend()) return;
  Csr64 a = valued("random:200000:1:4", {1.0});
  // A row outside every sampled group gets a value the sample cannot have seen.
  const auto s = sample_rows(ref_of(a));
  std::vector<bool> sampled(size_t(s->matrix_groups), false);
  for (int64_t g = 0; g < s->groups; ++g)
    sampled[size_t(sample_group_start(g, s->groups, s->matrix_groups) / RowSample::kGroupRows)] = true;
  int64_t row = -1;
  for (size_t g = 0; g < sampled.size() && row < 0; ++g)
    if (!sampled[g] && a.row_ptr[g * RowSample::kGroupRows + 1] > a.row_ptr[g * RowSample::kGroupRows])
      row = int64_t(g) * RowSample::kGroupRows;
  REQUIRE(row >= 0);
  a.val[size_t(a.row_ptr[size_t(row)])] = 7.0;
  const CpuPlan p(a, "csr");
  CHECK(p.codec() == "plain");
  CHECK(test::json_string_field(p.describe(), "why").find("did not") != std::string::npos);
  CHECK(p.check(3) == "");
}

TEST_CASE("update_values re-encodes, takes a new table, or goes plain, never stale", "[codec]") {
  if (!test::require_cpu_backend()) return;
  for (const char* format : {"csr", "sell", "merge"}) {
    INFO("format " << format);
    CpuPlan p(valued("random:3000:1:30", {1.0}), format);
    const std::string first = p.codec();
    CHECK((first == "uniform" || first == "code8"));
    const std::string spec = test::json_string_field(p.describe(), "spec");
    // Another single value: a new table, the same kernel.
    p.update(std::vector<double>(p.a.val.size(), -2.0));
    CHECK(p.codec() == first);
    CHECK(test::json_string_field(p.describe(), "spec") == spec);
    CHECK(p.check(4) == "");
    // Two values: still code8 where it was, plain where the kernel was uniform.
    std::vector<double> two(p.a.val.size(), 3.0);
    for (size_t k = 0; k < two.size(); k += 3) two[k] = -0.5;
    p.update(two);
    CHECK(p.codec() == (first == "code8" ? "code8" : "plain"));
    CHECK(p.check(5) == "");
    // Random values: plain, the plain kernel, exact.
    p.update(random_vector<double>(int64_t(p.a.val.size()), 6));
    CHECK(p.codec() == "plain");
    CHECK(test::json_string_field(p.describe(), "spec") != spec);
    CHECK(p.check(7) == "");
    // And back to few values: plain stays (the kernel is chosen once), still exact.
    p.update(two);
    CHECK(p.check(8) == "");
  }
}

TEST_CASE("later updates whose values the table holds go straight to codes, exact", "[codec]") {
  if (!test::require_cpu_backend()) return;
  // A five-point stencil with values {4, -1} (code8 with +0.0 for padding), planned in formats
  // with padding (sell, sell_diag, ell) and without (csr). The first update finds the value map;
  // later ones whose values are all in the table are gathered as codes in one pass, one with a
  // value outside it takes a new table, and the next gathers codes with that one.
  for (const char* format : {"sell_diag", "sell", "csr", "ell"}) {
    INFO("format " << format);
    CpuPlan p(valued("poisson2d:60", {4.0, -1.0}), format);
    if (p.codec() != "code8") {
      WARN(format << " keeps " << p.codec() << " values here: not this test's path");
      continue;
    }
    const size_t n = p.a.val.size();
    auto arrange = [&](std::vector<double> choices, size_t shift) {
      std::vector<double> v(n);
      for (size_t k = 0; k < n; ++k) v[k] = choices[(k * 7 + shift) % choices.size()];
      return v;
    };
    p.update(arrange({-1.0, 4.0}, 1));  // finds the map
    CHECK(p.check(11) == "");
    p.update(arrange({4.0, -1.0, 0.0}, 2));  // codes (explicit zeros included)
    CHECK(p.codec() == "code8");
    CHECK(p.check(12) == "");
    p.update(arrange({-1.0, 4.0}, 5));
    CHECK(p.check(13) == "");
    p.update(arrange({2.5, -1.0, 4.0}, 3));  // 2.5: a new table
    CHECK(p.codec() == "code8");
    CHECK(p.check(14) == "");
    p.update(arrange({2.5, 4.0}, 4));  // codes with the new table
    CHECK(p.codec() == "code8");
    CHECK(p.check(15) == "");
  }
}
