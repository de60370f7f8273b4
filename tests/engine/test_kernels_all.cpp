// Every registered format x {float,double} x {int32,int64} on the CPU, through the C API,
// against the long-double reference on edge-case, generated and SuiteSparse matrices.
#include <algorithm>
#include <atomic>
#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "engine/formats/format.hpp"
#include "engine/gen/generators.hpp"
#include "engine/io/matrix_market.hpp"
#include "engine/reference.hpp"
#include "spmvjit/spmvjit.hpp"
#include "tests/test_matrices.hpp"
#include "tests/test_support.hpp"

namespace {

using namespace spmvjit;
using test::from_rows;
using test::triplets_of;
using Csr64 = HostCsr<int64_t, double>;

struct TestMatrix {
  std::string name;
  Csr64 a;
  int base = 0;  // index base handed to spmv_plan
};

// One row of `long_len` entries (row `at`) among `rows` - 1 rows of 0..3 entries.
Csr64 huge_row_matrix(int64_t rows, int64_t at, int64_t long_len) {
  std::vector<std::vector<std::pair<int64_t, double>>> r(static_cast<size_t>(rows));
  const auto vals = random_vector<double>(long_len + 4 * rows, 77);
  size_t vi = 0;
  for (int64_t i = 0; i < rows; ++i) {
    if (i == at) {
      for (int64_t c = 0; c < long_len; ++c) r[size_t(i)].push_back({c, vals[vi++]});
    } else {
      for (int64_t k = 0; k < i % 4; ++k)
        r[size_t(i)].push_back({(i * 7919 + k * 104729) % long_len, vals[vi++]});
      std::sort(r[size_t(i)].begin(), r[size_t(i)].end());
    }
  }
  return from_rows(rows, long_len, r);
}

// Reverses then rotates the columns of every row: unsorted input, same matrix.
Csr64 unsorted(Csr64 a) {
  for (int64_t i = 0; i < a.rows; ++i) {
    const auto b = a.row_ptr[size_t(i)], e = a.row_ptr[size_t(i) + 1];
    std::reverse(a.col_idx.begin() + b, a.col_idx.begin() + e);
    std::reverse(a.val.begin() + b, a.val.begin() + e);
    if (e - b > 2) {
      std::rotate(a.col_idx.begin() + b, a.col_idx.begin() + b + 1, a.col_idx.begin() + e);
      std::rotate(a.val.begin() + b, a.val.begin() + b + 1, a.val.begin() + e);
    }
  }
  return a;
}

// Every third stored value and all of row 1 become explicit zeros.
Csr64 with_explicit_zeros(Csr64 a) {
  for (size_t k = 0; k < a.val.size(); k += 3) a.val[k] = 0.0;
  if (a.rows > 1)
    for (auto k = a.row_ptr[1]; k < a.row_ptr[2]; ++k) a.val[size_t(k)] = 0.0;
  return a;
}

// The same pattern with values drawn from `choices` (compressed value arrays: all ones -> uniform,
// a few values -> 8-bit codes).
Csr64 with_values(Csr64 a, std::vector<double> choices) {
  for (size_t k = 0; k < a.val.size(); ++k) a.val[k] = choices[(k * 7 + k / 5) % choices.size()];
  return a;
}

// Matrices whose values every format stores compressed (the sample sees every row).
bool compressible(const std::string& name) {
  return name.rfind("ones_", 0) == 0 || name.rfind("few_", 0) == 0;
}

const std::vector<TestMatrix>& test_matrices() {
  static const std::vector<TestMatrix> all = [] {
    std::vector<TestMatrix> m;
    m.push_back({"empty_rows", from_rows(7, 6, {{}, {{0, 1.5}, {5, -2}}, {}, {}, {{3, 0.25}}, {}, {}})});
    m.push_back({"huge_row", huge_row_matrix(41, 17, 200000)});
    m.push_back({"1x1", from_rows(1, 1, {{{0, 2.5}}})});
    m.push_back({"0x0", from_rows(0, 0, {})});
    m.push_back({"0x5", from_rows(0, 5, {})});
    m.push_back({"5x0", from_rows(5, 0, {})});
    m.push_back({"all_empty_5x5", from_rows(5, 5, {})});
    m.push_back({"wide_7x400", generate_matrix("random:7:0:30:400", 3)});
    m.push_back({"tall_300x9", generate_matrix("random:300:0:6:9", 4)});
    m.push_back({"base1", generate_matrix("random:60:0:9:45", 5), 1});
    m.push_back({"base1_wide_huge_row", huge_row_matrix(9, 8, 5000), 1});
    m.push_back({"explicit_zeros", with_explicit_zeros(generate_matrix("random:80:1:12", 6))});
    m.push_back({"unsorted", unsorted(generate_matrix("random:90:2:20:70", 7))});
    m.push_back({"unsorted_base1", unsorted(generate_matrix("poisson2d:7")), 1});
    for (const char* spec :
         {"poisson2d:12", "random:300", "powerlaw:500", "denserows:200:3:8", "short:300", "dense:20:13",
          "diag:100", "blocks:120", "blocks:97:2:3", "poisson3d:5", "random:1000:0:3"})
      m.push_back({spec, generate_matrix(spec, 9)});
    m.push_back({"ones_powerlaw", with_values(generate_matrix("powerlaw:500", 12), {1.0})});
    m.push_back({"ones_empty_rows", with_values(generate_matrix("short:200:3", 13), {1.0})});
    m.push_back({"few_random", with_values(generate_matrix("random:300:0:20", 14), {-2.0, 0.5, 3.0, 0.0})});
    m.push_back({"few_denserows", with_values(generate_matrix("denserows:200:3:8", 15), {4.0, -1.0})});
    // Big enough for several partitions (the planner gives ~16k work units per thread).
    m.push_back({"random:20000:0:12", generate_matrix("random:20000:0:12", 10)});
    m.push_back({"powerlaw:30000", generate_matrix("powerlaw:30000:1.8:3000", 11)});
    const char* dir = std::getenv("SPMVJIT_MATRICES_DIR");
    if (dir && *dir && std::filesystem::is_directory(dir)) {
      std::vector<std::string> files;
      for (const auto& e : std::filesystem::directory_iterator(dir))
        if (e.path().extension() == ".mtx") files.push_back(e.path().string());
      std::sort(files.begin(), files.end());
      for (const auto& f : files)
        m.push_back({std::filesystem::path(f).filename().string(), read_matrix_market(f)});
    }
    return m;
  }();
  return all;
}

void warn_if_no_matrices_dir() {
  static bool warned = false;
  const char* dir = std::getenv("SPMVJIT_MATRICES_DIR");
  if (!warned && (!dir || !*dir || !std::filesystem::is_directory(dir))) {
    WARN("SPMVJIT_MATRICES_DIR unset or not a directory: SuiteSparse matrices skipped");
    warned = true;
  }
}

// The matrix in the caller's types: `a` (zero-based) for the reference, and the caller's own
// arrays in the requested base, which the test overwrites once the plan exists (the plan must
// own copies of everything it needs).
template <class I, class V>
struct Typed {
  HostCsr<I, V> a;
  std::vector<I> rp, ci;
  std::vector<V> val;
  spmv_csr_t desc{};
  int base = 0;
  Typed(const TestMatrix& m) : a(m.a.template cast<I, V>()), base(m.base) { reset(); }
  void reset() {
    rp = a.row_ptr;
    ci = a.col_idx;
    val = a.val;
    for (auto& v : rp) v = I(v + base);
    for (auto& v : ci) v = I(v + base);
    desc = csr_view<I, V>(a.rows, a.cols, a.nnz(), rp.data(), ci.empty() ? nullptr : ci.data(),
                          val.empty() ? nullptr : val.data(), base);
  }
  void scribble() {
    std::fill(rp.begin(), rp.end(), I(-7));
    std::fill(ci.begin(), ci.end(), I(-7));
    std::fill(val.begin(), val.end(), std::numeric_limits<V>::quiet_NaN());
  }
};

constexpr int kCanaries = 8;
constexpr double kCanary = 12345.0;

// Four SpMVs covering the epilogues (beta == 0 with NaN-poisoned y, beta != 0, alpha == 1 and
// not), each with fresh x and y. Returns "" or what went wrong. Thread-safe (no Catch macros).
template <class I, class V>
std::string check_plan(spmv_plan_t plan, const HostCsr<I, V>& a, uint64_t seed) {
  const double alphas[] = {1.0, -1.75, 1.0, 0.3};
  const double betas[] = {0.0, 0.0, 0.5, -1.25};
  for (int c = 0; c < 4; ++c) {
    const V al = V(alphas[c]), be = V(betas[c]);
    const auto x = random_vector<V>(a.cols, seed * 8 + 2 * c);
    std::vector<V> y = random_vector<V>(a.rows + kCanaries, seed * 8 + 2 * c + 1);
    if (be == 0) std::fill(y.begin(), y.begin() + a.rows, std::numeric_limits<V>::quiet_NaN());
    std::fill(y.begin() + a.rows, y.end(), V(kCanary));
    const auto y0 = y;
    const std::string what =
        "alpha " + std::to_string(alphas[c]) + ", beta " + std::to_string(betas[c]) + ": ";
    if (spmv_execute(plan, &al, a.cols ? x.data() : nullptr, &be, a.rows ? y.data() : nullptr, nullptr) !=
        SPMV_STATUS_SUCCESS)
      return what + "execute failed: " + spmv_last_error();
    const std::string bad =
        check_spmv(a, reference_spmv(a, double(al), x.data(), double(be), y0.data()), y.data());
    if (!bad.empty()) return what + bad;
    for (int k = 0; k < kCanaries; ++k)
      if (y[size_t(a.rows + k)] != V(kCanary)) return what + "wrote past the end of y";
  }
  return "";
}

spmv_options_t cpu_options(const char* format, int threads = 3) {
  spmv_options_t o;
  spmv_options_init(&o);
  o.backend = SPMV_BACKEND_CPU;
  o.format = format;
  o.threads = threads;
  return o;
}

std::vector<const Format*> cpu_formats() {
  std::vector<const Format*> out;
  for (const Format* f : all_formats())
    if (f->supports(BackendKind::cpu)) out.push_back(f);
  return out;
}

struct PlanGuard {
  spmv_plan_t p = nullptr;
  ~PlanGuard() {
    if (p) spmv_plan_destroy(p);
  }
};

std::string describe(spmv_plan_t p) {
  const char* json = nullptr;
  if (spmv_plan_describe(p, &json) != SPMV_STATUS_SUCCESS || !json) return "";
  return json;
}

// max_nnz < 0: every test matrix. `tier`: what describe must say of the kernel in use, if given.
// `op`: the plans compute op(A), judged against the reference's own transpose of A. `fill` >= 0:
// the matrices are declared symmetric, read from that triangle (the other one's entries, which
// the general test matrices have, must be ignored), judged against the reference's full matrix;
// a matrix that is not square must be refused.
template <class I, class V>
void run_all_formats(int64_t max_nnz = -1, const char* tier = nullptr,
                     spmv_operation_t op = SPMV_OPERATION_NON_TRANSPOSE, int fill = -1,
                     const char* where = nullptr) {
  if (!test::require_cpu_backend()) return;
  warn_if_no_matrices_dir();
  const auto formats = cpu_formats();
  REQUIRE(!formats.empty());
  uint64_t seed = 1000;
  int64_t one_triangle = 0;  // symmetric plans that stored one triangle (sym_diag)
  for (const TestMatrix& m : test_matrices()) {
    if (max_nnz >= 0 && m.a.nnz() > max_nnz) continue;
    Typed<I, V> t(m);
    if (fill >= 0 && m.a.rows != m.a.cols) {
      INFO("matrix " << m.name);
      spmv_options_t o = cpu_options(nullptr);
      o.matrix_type = SPMV_MATRIX_SYMMETRIC;
      PlanGuard g;
      CHECK(spmv_plan(&g.p, &t.desc, &o) == SPMV_STATUS_INVALID_VALUE);
      CHECK(std::string(spmv_last_error()).find("square") != std::string::npos);
      continue;
    }
    const HostCsr<I, V> judged = fill >= 0 ? reference_symmetric_full(t.a, fill == SPMV_FILL_UPPER)
                                 : op == SPMV_OPERATION_NON_TRANSPOSE ? t.a
                                                                      : reference_transpose(t.a);
    auto options = [&](const char* format) {
      spmv_options_t o = cpu_options(format);
      o.operation = op;
      if (where) o.cache_dir = "";  // in no cache: the kernel comes from where it must
      if (fill >= 0) o.matrix_type = SPMV_MATRIX_SYMMETRIC, o.fill_mode = spmv_fill_mode_t(fill);
      return o;
    };
    for (const Format* f : formats) {
      t.reset();
      INFO("format " << f->name() << ", matrix " << m.name << " (" << m.a.rows << " x " << m.a.cols
                     << ", nnz " << m.a.nnz() << ", base " << m.base << ")");
      const std::string name = f->name();
      spmv_options_t o = options(name.c_str());
      PlanGuard g;
      const spmv_status_t st = spmv_plan(&g.p, &t.desc, &o);
      if (st == SPMV_STATUS_UNSUPPORTED) {
        CHECK(g.p == nullptr);
        CHECK(std::string(spmv_last_error()) != "");
        continue;
      }
      REQUIRE(st == SPMV_STATUS_SUCCESS);
      t.scribble();
      const std::string d = describe(g.p);
      CHECK(test::json_error(d) == "");
      CHECK(test::json_string_field(d, "format") == name);
      if (tier) CHECK(test::json_string_field(d, "tier") == tier);
      if (where) CHECK(test::json_string_field(d, "cache") == where);
      if (compressible(m.name)) {
        const std::string codec = test::json_string_field(d, "codec");
        CHECK((codec == "uniform" || codec == "code8"));
      }
      CHECK(check_plan(g.p, judged, ++seed) == "");
      if (fill >= 0) one_triangle += test::json_string_field(d, "storage") == "one triangle";
    }
    // The planner's own choice must be just as correct.
    INFO("auto planner, matrix " << m.name);
    spmv_options_t o = options(nullptr);
    PlanGuard g;
    t.reset();
    REQUIRE(spmv_plan(&g.p, &t.desc, &o) == SPMV_STATUS_SUCCESS);
    t.scribble();
    CHECK(test::json_error(describe(g.p)) == "");
    CHECK(check_plan(g.p, judged, ++seed) == "");
  }
  // The banded matrices (poisson, diag, the symmetric SuiteSparse ones) took sym_diag.
  if (fill >= 0) CHECK(one_triangle >= 3);
}

}  // namespace

TEST_CASE("every format, int32 float", "[kernels]") { run_all_formats<int32_t, float>(); }
TEST_CASE("every format, int32 double", "[kernels]") { run_all_formats<int32_t, double>(); }
TEST_CASE("every format, int64 float", "[kernels]") { run_all_formats<int64_t, float>(); }
TEST_CASE("every format, int64 double", "[kernels]") { run_all_formats<int64_t, double>(); }
// op(A) = A^T: every format on A^T built by the plan (engine/transpose.cpp), judged against the
// reference's own transpose; the two mixed type pairs on the smaller matrices.
TEST_CASE("every format of A^T, int32 float", "[kernels][transpose]") {
  run_all_formats<int32_t, float>(-1, nullptr, SPMV_OPERATION_TRANSPOSE);
}
TEST_CASE("every format of A^T, int64 double", "[kernels][transpose]") {
  run_all_formats<int64_t, double>(-1, nullptr, SPMV_OPERATION_TRANSPOSE);
}
TEST_CASE("every format of A^T, int32 double and int64 float", "[kernels][transpose]") {
  run_all_formats<int32_t, double>(20000, nullptr, SPMV_OPERATION_TRANSPOSE);
  run_all_formats<int64_t, float>(20000, nullptr, SPMV_OPERATION_CONJUGATE_TRANSPOSE);
}

// Symmetric matrices (spmv_options_t::matrix_type) from either triangle: every format on the full
// matrix the plan builds, sym_diag on one triangle; both transpose flags (A^T = A).
TEST_CASE("every format of a symmetric matrix, int32 double, lower", "[kernels][symmetric]") {
  run_all_formats<int32_t, double>(-1, nullptr, SPMV_OPERATION_NON_TRANSPOSE, SPMV_FILL_LOWER);
}
TEST_CASE("every format of a symmetric matrix, int64 float, upper", "[kernels][symmetric]") {
  run_all_formats<int64_t, float>(-1, nullptr, SPMV_OPERATION_TRANSPOSE, SPMV_FILL_UPPER);
}
TEST_CASE("every format of a symmetric matrix, int32 float and int64 double", "[kernels][symmetric]") {
  run_all_formats<int32_t, float>(20000, nullptr, SPMV_OPERATION_NON_TRANSPOSE, SPMV_FILL_UPPER);
  run_all_formats<int64_t, double>(20000, nullptr, SPMV_OPERATION_NON_TRANSPOSE, SPMV_FILL_LOWER);
}

// The variant a plan runs while its specialized kernel compiles in the background (alpha and beta
// tested at run time), kept for good by SPMVJIT_TIERED_COMPILE=quick.
TEST_CASE("every format's run-time epilogue variant", "[kernels]") {
  // As clang compiles it for this host: not the kernel bundle's (read once per process, so this
  // holds when the test runs in a process of its own, as ctest runs it).
  setenv("SPMVJIT_KERNEL_BUNDLE", "0", 1);
  const char* saved = std::getenv("SPMVJIT_TIERED_COMPILE");
  const std::string restore = saved ? saved : "";
  setenv("SPMVJIT_TIERED_COMPILE", "quick", 1);
  run_all_formats<int32_t, double>(200000, "run-time epilogue");
  run_all_formats<int64_t, float>(200000, "run-time epilogue");
  if (saved)
    setenv("SPMVJIT_TIERED_COMPILE", restore.c_str(), 1);
  else
    unsetenv("SPMVJIT_TIERED_COMPILE");
}

// The same variant as the CPU kernel bundle holds it (compiled for x86-64-v3 at -O3 when spmvjit
// was built): a plan whose kernel is in no cache starts on it.
TEST_CASE("every format's first tier from the CPU kernel bundle", "[kernels][bundle]") {
#if defined(SPMVJIT_TEST_KERNEL_BUNDLE) && defined(__x86_64__)
  if (!(__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && __builtin_cpu_supports("bmi2")))
    SPMVJIT_SKIP("this host lacks x86-64-v3's features");
  const char* saved = std::getenv("SPMVJIT_TIERED_COMPILE");
  const std::string restore = saved ? saved : "";
  setenv("SPMVJIT_TIERED_COMPILE", "quick", 1);
  run_all_formats<int32_t, double>(200000, "run-time epilogue", SPMV_OPERATION_NON_TRANSPOSE, -1, "built-in");
  run_all_formats<int64_t, float>(200000, "run-time epilogue", SPMV_OPERATION_NON_TRANSPOSE, -1, "built-in");
  if (saved)
    setenv("SPMVJIT_TIERED_COMPILE", restore.c_str(), 1);
  else
    unsetenv("SPMVJIT_TIERED_COMPILE");
#else
  SPMVJIT_SKIP("this build makes no CPU kernel bundle (SPMVJIT_CPU_KERNEL_BUNDLE)");
#endif
}

namespace {

// `op`: plans of op(A), judged against the reference's transpose of the matrix of each update.
// `explicit_zeros`: the matrices hold some (plans then keep a copy of the pattern); without, plans
// whose format does not keep the CSR arrays rebuild the pattern from their layout.
template <class I, class V>
void run_update_values(spmv_operation_t op = SPMV_OPERATION_NON_TRANSPOSE, bool explicit_zeros = true) {
  auto judged = [&](const HostCsr<I, V>& a) {
    return op == SPMV_OPERATION_NON_TRANSPOSE ? a : reference_transpose(a);
  };
  int from_layout = 0;
  // Explicit zeros that become nonzero (and nonzeros that become zero) keep the pattern.
  for (const char* spec : {"random:500:0:15", "powerlaw:2000:2:200", "random:20000:1:8"}) {
    const auto generated = generate_matrix(spec, 21);
    TestMatrix m{spec, explicit_zeros ? with_explicit_zeros(generated) : generated};
    Typed<I, V> t(m);
    std::vector<V> fresh = random_vector<V>(t.a.nnz(), 22);
    for (size_t k = 1; k < fresh.size(); k += 3) fresh[k] = V(0);            // some become zero
    for (size_t k = 0; k < fresh.size(); k += 3) REQUIRE(fresh[k] != V(0));  // old zeros now nonzero
    for (const Format* f : cpu_formats()) {
      INFO("format " << f->name() << ", matrix " << spec);
      const std::string name = f->name();
      spmv_options_t o = cpu_options(name.c_str());
      o.operation = op;
      PlanGuard g;
      t.reset();
      const spmv_status_t st = spmv_plan(&g.p, &t.desc, &o);
      if (st == SPMV_STATUS_UNSUPPORTED) continue;
      REQUIRE(st == SPMV_STATUS_SUCCESS);
      t.scribble();  // update_values must not need the caller's pattern either
      REQUIRE(check_plan(g.p, judged(t.a), 31) == "");
      const std::string before = describe(g.p);
      const std::string pattern = test::json_string_field(before, "pattern");
      if (explicit_zeros) CHECK(pattern != "layout");
      from_layout += pattern == "layout";
      REQUIRE(spmv_plan_update_values(g.p, fresh.data(), SPMV_MEMORY_HOST) == SPMV_STATUS_SUCCESS);
      HostCsr<I, V> updated = t.a;
      updated.val = fresh;
      CHECK(check_plan(g.p, judged(updated), 32) == "");
      const std::string after = describe(g.p);
      CHECK(test::json_string_field(after, "format") == test::json_string_field(before, "format"));
      CHECK(test::json_string_field(after, "key") == test::json_string_field(before, "key"));
      CHECK(test::json_string_field(after, "spec") == test::json_string_field(before, "spec"));
      CHECK(test::json_string_field(after, "update_values") != "not yet updated");
      // And back: the original values give the original product, now through the value map the
      // first update found (every format's values are plain copies of the CSR's).
      REQUIRE(spmv_plan_update_values(g.p, t.a.val.data(), SPMV_MEMORY_HOST) == SPMV_STATUS_SUCCESS);
      CHECK(check_plan(g.p, judged(t.a), 33) == "");
      CHECK(
          test::json_string_field(describe(g.p), "update_values").starts_with("gather through a value map"));
    }
  }
  if (!explicit_zeros && op == SPMV_OPERATION_NON_TRANSPOSE) CHECK(from_layout > 10);
}

}  // namespace

TEST_CASE("update_values rebuilds the pattern from a layout that holds it", "[kernels]") {
  // Rows strictly ascending, no explicit zeros: plans keep no copy of the pattern.
  run_update_values<int32_t, double>(SPMV_OPERATION_NON_TRANSPOSE, false);
  run_update_values<int64_t, float>(SPMV_OPERATION_NON_TRANSPOSE, false);
  // The edge cases: no entries at all, empty rows, one entry, a huge row.
  for (const TestMatrix& m : test_matrices()) {
    if (m.base != 0 || !(m.name == "empty_rows" || m.name == "huge_row" || m.name == "1x1" ||
                         m.name == "0x0" || m.name == "0x5" || m.name == "5x0" || m.name == "all_empty_5x5"))
      continue;
    Typed<int32_t, double> t(m);
    const std::vector<double> fresh = random_vector<double>(t.a.nnz(), 23);
    for (const Format* f : cpu_formats()) {
      INFO("format " << f->name() << ", matrix " << m.name);
      const std::string name = f->name();
      const spmv_options_t o = cpu_options(name.c_str());
      PlanGuard g;
      t.reset();
      const spmv_status_t st = spmv_plan(&g.p, &t.desc, &o);
      if (st == SPMV_STATUS_UNSUPPORTED) continue;
      REQUIRE(st == SPMV_STATUS_SUCCESS);
      t.scribble();
      REQUIRE(spmv_plan_update_values(g.p, fresh.data(), SPMV_MEMORY_HOST) == SPMV_STATUS_SUCCESS);
      HostCsr<int32_t, double> updated = t.a;
      updated.val = fresh;
      CHECK(check_plan(g.p, updated, 34) == "");
    }
  }
}

TEST_CASE("update_values gives the new product without re-planning", "[kernels]") {
  if (!test::require_cpu_backend()) return;
  run_update_values<int32_t, double>();
  run_update_values<int64_t, float>();
}

TEST_CASE("update_values of a plan of A^T takes A's values in A's order", "[kernels][transpose]") {
  if (!test::require_cpu_backend()) return;
  run_update_values<int32_t, float>(SPMV_OPERATION_TRANSPOSE);
  run_update_values<int64_t, double>(SPMV_OPERATION_TRANSPOSE);
}

TEST_CASE("concurrent execute on distinct plans", "[kernels]") {
  if (!test::require_cpu_backend()) return;
  using I = int32_t;
  using V = double;
  const auto formats = cpu_formats();
  const char* specs[] = {"random:20000:0:12", "powerlaw:30000:1.8:3000", "poisson2d:150",
                         "denserows:20000:4:6"};
  std::vector<std::unique_ptr<Typed<I, V>>> typed;
  std::vector<PlanGuard> plans(4);
  for (int i = 0; i < 4; ++i) {
    typed.push_back(std::make_unique<Typed<I, V>>(TestMatrix{specs[i], generate_matrix(specs[i], 40 + i)}));
    // A different format per plan where it applies, else the planner's choice.
    const std::string name = formats[size_t(i) % formats.size()]->name();
    spmv_options_t o = cpu_options(name.c_str(), 2);
    if (spmv_plan(&plans[size_t(i)].p, &typed.back()->desc, &o) != SPMV_STATUS_SUCCESS) {
      o.format = nullptr;
      REQUIRE(spmv_plan(&plans[size_t(i)].p, &typed.back()->desc, &o) == SPMV_STATUS_SUCCESS);
    }
  }
  std::vector<std::string> errors(4);
  std::atomic<int> ready{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < 4; ++i)
    threads.emplace_back([&, i] {
      ready.fetch_add(1);
      while (ready.load() < 4) std::this_thread::yield();  // start together
      for (int it = 0; it < 6 && errors[size_t(i)].empty(); ++it)
        errors[size_t(i)] = check_plan(plans[size_t(i)].p, typed[size_t(i)]->a, uint64_t(100 * i + it));
    });
  for (auto& t : threads) t.join();
  for (int i = 0; i < 4; ++i) {
    INFO("thread " << i << " on " << specs[i] << ": " << describe(plans[size_t(i)].p).substr(0, 80));
    CHECK(errors[size_t(i)] == "");
  }
}
