// C API contract: argument errors, invalid CSR, size overflow, unknown names, missing backends,
// the C++ exception layer, describe JSON and status strings.
#include <catch2/catch.hpp>
#include <climits>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <limits>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "engine/formats/format.hpp"
#include "engine/gen/generators.hpp"
#include "engine/reference.hpp"
#include "runtime/backend.hpp"
#include "spmvjit/spmvjit.hpp"
#include "tests/test_support.hpp"

namespace {

using namespace spmvjit;

// A plan handle no call may leave in place on failure.
spmv_plan_t sentinel() { return reinterpret_cast<spmv_plan_t>(uintptr_t(0x1)); }

// 3 x 4 matrix [[1 . . 2] [. 3 . .] [4 . 5 .]] in both index types.
template <class I>
struct Small {
  std::vector<I> rp{0, 2, 3, 5};
  std::vector<I> ci{0, 3, 1, 0, 2};
  std::vector<double> val{1, 2, 3, 4, 5};
  spmv_csr_t desc() const { return csr_view<I, double>(3, 4, 5, rp.data(), ci.data(), val.data()); }
};

spmv_options_t cpu() {
  spmv_options_t o;
  spmv_options_init(&o);
  o.backend = SPMV_BACKEND_CPU;
  return o;
}

// Plans `a` expecting failure: returns the message after checking status and *plan == NULL.
std::string plan_error(const spmv_csr_t& a, spmv_status_t expected,
                       const spmv_options_t& o = cpu()) {
  spmv_plan_t p = sentinel();
  const spmv_status_t st = spmv_plan(&p, &a, &o);
  const std::string msg = spmv_last_error();
  INFO("message: " << msg);
  CHECK(st == expected);
  CHECK(p == nullptr);
  if (st == SPMV_STATUS_SUCCESS && p && p != sentinel()) spmv_plan_destroy(p);
  CHECK(!msg.empty());
  return msg;
}

bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

}  // namespace

TEST_CASE("null pointers give INVALID_VALUE and a message", "[api]") {
  if (!test::require_cpu_backend()) return;
  Small<int32_t> m;
  const spmv_csr_t a = m.desc();
  const spmv_options_t o = cpu();
  CHECK(spmv_plan(nullptr, &a, &o) == SPMV_STATUS_INVALID_VALUE);
  CHECK(contains(spmv_last_error(), "plan"));
  spmv_plan_t p = sentinel();
  CHECK(spmv_plan(&p, nullptr, &o) == SPMV_STATUS_INVALID_VALUE);
  CHECK(p == nullptr);
  CHECK(contains(spmv_last_error(), "descriptor"));

  for (int which = 0; which < 3; ++which) {
    spmv_csr_t bad = a;
    if (which == 0) bad.row_ptr = nullptr;
    if (which == 1) bad.col_idx = nullptr;
    if (which == 2) bad.values = nullptr;
    INFO("null array " << which);
    const std::string msg = plan_error(bad, SPMV_STATUS_INVALID_VALUE);
    CHECK(contains(msg, "null"));
  }

  REQUIRE(spmv_plan(&p, &a, &o) == SPMV_STATUS_SUCCESS);
  const double one = 1, zero = 0;
  const std::vector<double> x(4, 1.0);
  std::vector<double> y(3, 0.0);
  CHECK(spmv_execute(nullptr, &one, x.data(), &zero, y.data(), nullptr) ==
        SPMV_STATUS_INVALID_VALUE);
  CHECK(contains(spmv_last_error(), "plan"));
  CHECK(spmv_execute(p, nullptr, x.data(), &zero, y.data(), nullptr) == SPMV_STATUS_INVALID_VALUE);
  CHECK(contains(spmv_last_error(), "alpha"));
  CHECK(spmv_execute(p, &one, x.data(), nullptr, y.data(), nullptr) == SPMV_STATUS_INVALID_VALUE);
  CHECK(contains(spmv_last_error(), "beta"));
  CHECK(spmv_execute(p, &one, nullptr, &zero, y.data(), nullptr) == SPMV_STATUS_INVALID_VALUE);
  CHECK(contains(spmv_last_error(), "x"));
  CHECK(spmv_execute(p, &one, x.data(), &zero, nullptr, nullptr) == SPMV_STATUS_INVALID_VALUE);
  CHECK(contains(spmv_last_error(), "y"));
  const char* json = nullptr;
  CHECK(spmv_plan_describe(nullptr, &json) == SPMV_STATUS_INVALID_VALUE);
  CHECK(spmv_plan_describe(p, nullptr) == SPMV_STATUS_INVALID_VALUE);
  CHECK(std::string(spmv_last_error()) != "");
  CHECK(spmv_plan_update_values(nullptr, m.val.data(), SPMV_MEMORY_HOST) ==
        SPMV_STATUS_INVALID_VALUE);
  CHECK(spmv_plan_update_values(p, nullptr, SPMV_MEMORY_HOST) == SPMV_STATUS_INVALID_VALUE);
  CHECK(contains(spmv_last_error(), "values"));
  CHECK(spmv_plan_update_values(p, m.val.data(), spmv_memory_t(7)) == SPMV_STATUS_INVALID_VALUE);
  CHECK(contains(spmv_last_error(), "memory"));
  CHECK(spmv_plan_update_values(p, m.val.data(), SPMV_MEMORY_DEVICE) == SPMV_STATUS_INVALID_VALUE);
  CHECK(contains(spmv_last_error(), "device"));
  // Every failed call above left the plan working.
  REQUIRE(spmv_execute(p, &one, x.data(), &zero, y.data(), nullptr) == SPMV_STATUS_SUCCESS);
  CHECK(y == std::vector<double>{3, 3, 9});
  CHECK(spmv_plan_destroy(p) == SPMV_STATUS_SUCCESS);
  CHECK(spmv_plan_destroy(nullptr) == SPMV_STATUS_SUCCESS);
}

TEMPLATE_TEST_CASE("invalid CSR is rejected with the row and position", "[api]", int32_t, int64_t) {
  if (!test::require_cpu_backend()) return;
  using I = TestType;
  struct Case {
    const char* name;
    std::function<void(Small<I>&, spmv_csr_t&)> mutate;
    spmv_status_t status;
    std::vector<std::string> parts;  // the message must name these
  };
  const std::vector<Case> cases = {
      {"non-monotone row_ptr",
       [](Small<I>& m, spmv_csr_t&) {
         m.rp = {0, 3, 2, 5};
       },
       SPMV_STATUS_INVALID_MATRIX,
       {"monotone", "row_ptr[2]"}},
      {"row_ptr[0] not the base",
       [](Small<I>& m, spmv_csr_t&) {
         m.rp = {1, 2, 3, 5};
       },
       SPMV_STATUS_INVALID_MATRIX,
       {"row_ptr[0]"}},
      {"column too large",
       [](Small<I>& m, spmv_csr_t&) { m.ci[3] = 4; },
       SPMV_STATUS_INVALID_MATRIX,
       {"position 3", "row 2", "column index 4"}},
      {"negative column",
       [](Small<I>& m, spmv_csr_t&) { m.ci[1] = -1; },
       SPMV_STATUS_INVALID_MATRIX,
       {"position 1", "row 0"}},
      {"row_ptr[rows] != nnz",
       [](Small<I>&, spmv_csr_t& d) { d.nnz = 4; },
       SPMV_STATUS_INVALID_MATRIX,
       {"nnz = 4", "row_ptr[rows]"}},
      {"base 1 with a zero column",
       [](Small<I>& m, spmv_csr_t& d) {
         for (auto& v : m.rp) ++v;
         d.index_base = 1;  // columns stay zero-based: column 0 is out of range
       },
       SPMV_STATUS_INVALID_MATRIX,
       {"position 0", "row 1", "[1, 5)"}},
      {"negative rows",
       [](Small<I>&, spmv_csr_t& d) { d.rows = -3; },
       SPMV_STATUS_INVALID_MATRIX,
       {"negative"}},
      {"negative cols",
       [](Small<I>&, spmv_csr_t& d) { d.cols = -1; },
       SPMV_STATUS_INVALID_MATRIX,
       {"negative"}},
      {"negative nnz",
       [](Small<I>&, spmv_csr_t& d) { d.nnz = -5; },
       SPMV_STATUS_INVALID_MATRIX,
       {"negative"}},
      {"index base 2",
       [](Small<I>&, spmv_csr_t& d) { d.index_base = 2; },
       SPMV_STATUS_INVALID_VALUE,
       {"index_base"}},
      {"index base -1",
       [](Small<I>&, spmv_csr_t& d) { d.index_base = -1; },
       SPMV_STATUS_INVALID_VALUE,
       {"index_base"}},
      {"bad index type",
       [](Small<I>&, spmv_csr_t& d) { d.index_type = spmv_index_type_t(7); },
       SPMV_STATUS_INVALID_VALUE,
       {"index type", "7"}},
      {"bad value type",
       [](Small<I>&, spmv_csr_t& d) { d.value_type = spmv_value_type_t(9); },
       SPMV_STATUS_INVALID_VALUE,
       {"value type", "9"}},
      {"bad memory kind",
       [](Small<I>&, spmv_csr_t& d) { d.memory = spmv_memory_t(5); },
       SPMV_STATUS_INVALID_VALUE,
       {"memory", "5"}},
      {"device memory for a CPU plan",
       [](Small<I>&, spmv_csr_t& d) { d.memory = SPMV_MEMORY_DEVICE; },
       SPMV_STATUS_INVALID_VALUE,
       {"device memory"}},
  };
  for (const Case& c : cases) {
    INFO("case: " << c.name);
    Small<I> m;
    spmv_csr_t d = m.desc();
    c.mutate(m, d);
    d.row_ptr = m.rp.data();
    d.col_idx = m.ci.data();
    const std::string msg = plan_error(d, c.status);
    for (const auto& part : c.parts) CHECK(contains(msg, part));
  }
}

TEST_CASE("bad options are INVALID_VALUE", "[api]") {
  if (!test::require_cpu_backend()) return;
  Small<int32_t> m;
  spmv_options_t o = cpu();
  o.backend = spmv_backend_t(9);
  CHECK(contains(plan_error(m.desc(), SPMV_STATUS_INVALID_VALUE, o), "backend"));
  o = cpu();
  o.threads = -1;
  CHECK(contains(plan_error(m.desc(), SPMV_STATUS_INVALID_VALUE, o), "threads"));
  o = cpu();
  o.log_level = spmv_log_level_t(17);
  CHECK(contains(plan_error(m.desc(), SPMV_STATUS_INVALID_VALUE, o), "log level"));
  int count = -1;
  CHECK(spmv_warmup(SPMV_BACKEND_CPU, "sm_90", "", &count) == SPMV_STATUS_INVALID_VALUE);
  CHECK(contains(spmv_last_error(), "native"));
  CHECK(count == 0);
  // Out-of-range enums are read as ints before use (UB as enums: the sanitizer build checks).
  CHECK(spmv_warmup(spmv_backend_t(9), nullptr, "", &count) == SPMV_STATUS_INVALID_VALUE);
  CHECK(contains(spmv_last_error(), "backend"));
  o = cpu();
  o.planning = spmv_planning_t(-3);
  CHECK(contains(plan_error(m.desc(), SPMV_STATUS_INVALID_VALUE, o), "planning mode -3"));
}

TEST_CASE("sizes beyond the index type are SIZE_OVERFLOW before any array is read", "[api]") {
  if (!test::require_cpu_backend()) return;
  // Only row_ptr[0] exists: validation must reject from the sizes alone.
  const int32_t rp32[1] = {0};
  const int64_t rp64[1] = {0};
  const int64_t big = int64_t(INT32_MAX) + 1;
  struct Case {
    int64_t rows, cols, nnz;
    int base;
  };
  for (const Case c : {Case{big, 4, 0, 0}, Case{1, big, 0, 0}, Case{1, 4, big, 0},
                       Case{INT32_MAX, 4, 0, 1}, Case{int64_t(1) << 40, 4, 0, 0}}) {
    INFO("rows " << c.rows << " cols " << c.cols << " nnz " << c.nnz << " base " << c.base);
    spmv_csr_t d = csr_view<int32_t, float>(c.rows, c.cols, c.nnz, rp32, rp32, nullptr, c.base);
    d.values = rp32;  // non-null: the size check must fire, not the null check
    const std::string msg = plan_error(d, SPMV_STATUS_SIZE_OVERFLOW);
    CHECK(contains(msg, "int32"));
  }
  // int64 indices: sizes no memory can hold (byte counts would wrap around size_t).
  for (const int64_t n : {INT64_MAX, INT64_MAX / 2, int64_t(1) << 61}) {
    INFO("int64 rows " << n);
    spmv_csr_t d = csr_view<int64_t, double>(n, 4, 0, rp64, rp64, nullptr);
    plan_error(d, SPMV_STATUS_SIZE_OVERFLOW);
    d = csr_view<int64_t, double>(1, 4, n, rp64, rp64, nullptr);
    d.values = rp64;
    plan_error(d, SPMV_STATUS_SIZE_OVERFLOW);
  }
}

TEST_CASE("unknown format name lists the known formats", "[api]") {
  if (!test::require_cpu_backend()) return;
  Small<int32_t> m;
  spmv_options_t o = cpu();
  o.format = "no-such-format";
  const std::string msg = plan_error(m.desc(), SPMV_STATUS_INVALID_VALUE, o);
  CHECK(contains(msg, "no-such-format"));
  for (const Format* f : all_formats()) CHECK(contains(msg, f->name()));
  o.format = "auto";
  spmv_plan_t p = nullptr;
  const spmv_csr_t d = m.desc();
  CHECK(spmv_plan(&p, &d, &o) == SPMV_STATUS_SUCCESS);
  spmv_plan_destroy(p);
}

TEST_CASE("a GPU backend that is absent says so", "[api]") {
  Small<int32_t> m;
  for (const auto& [backend, kind, name] :
       {std::tuple{SPMV_BACKEND_CUDA, BackendKind::cuda, "CUDA"},
        std::tuple{SPMV_BACKEND_HIP, BackendKind::hip, "HIP"}}) {
    if (backend_available(kind, 0)) continue;
    INFO("backend " << name);
    spmv_options_t o = cpu();
    o.backend = backend;
    spmv_plan_t p = sentinel();
    const spmv_csr_t d = m.desc();
    const spmv_status_t st = spmv_plan(&p, &d, &o);
    CHECK((st == SPMV_STATUS_NO_DEVICE || st == SPMV_STATUS_UNSUPPORTED));
    CHECK(p == nullptr);
    CHECK(contains(spmv_last_error(), name));
  }
}

TEST_CASE("the C++ layer throws ApiError with the status", "[api]") {
  if (!test::require_cpu_backend()) return;
  Small<int64_t> m;
  m.ci[2] = 9;
  try {
    SpmvPlan plan(m.desc());
    FAIL("no exception for an out-of-range column");
  } catch (const ApiError& e) {
    CHECK(e.status() == SPMV_STATUS_INVALID_MATRIX);
    CHECK(contains(e.what(), "invalid matrix"));
    CHECK(contains(e.what(), "position 2"));
  }
  m.ci[2] = 1;
  Options o;
  o.backend = SPMV_BACKEND_CPU;
  SpmvPlan plan(m.desc(), o);
  const auto x = random_vector<double>(4, 5);
  std::vector<double> y(3, std::numeric_limits<double>::quiet_NaN());
  plan.execute(2.0, x.data(), 0.0, y.data());
  HostCsr<int64_t, double> ref;
  ref.rows = 3;
  ref.cols = 4;
  ref.row_ptr = m.rp;
  ref.col_idx = m.ci;
  ref.val = m.val;
  CHECK(check_spmv(ref, reference_spmv(ref, 2.0, x.data(), 0.0, y.data()), y.data()) == "");
  try {
    plan.execute(1.0, x.data(), 0.0, static_cast<double*>(nullptr));
    FAIL("no exception for a null y");
  } catch (const ApiError& e) {
    CHECK(e.status() == SPMV_STATUS_INVALID_VALUE);
  }
  CHECK_THROWS_AS(plan.update_values(nullptr), ApiError);
  SpmvPlan moved(std::move(plan));
  CHECK(plan.get() == nullptr);
  CHECK(moved.get() != nullptr);
  CHECK(test::json_error(moved.describe()) == "");
}

TEST_CASE("describe is valid JSON with format, params, stats, kernel and timings", "[api]") {
  if (!test::require_cpu_backend()) return;
  const auto a = generate_matrix("poisson2d:30").cast<int32_t, double>();
  const spmv_csr_t d = csr_view<int32_t, double>(a.rows, a.cols, a.nnz(), a.row_ptr.data(),
                                                 a.col_idx.data(), a.val.data());
  SpmvPlan plan(d, [] {
    Options o;
    o.backend = SPMV_BACKEND_CPU;
    return o;
  }());
  const std::string j = plan.describe();
  INFO(j);
  REQUIRE(test::json_error(j) == "");
  for (const char* key :
       {"\"format\":\"", "\"params\":{", "\"stats\":{", "\"kernel\":{", "\"key\":\"",
        "\"cache\":\"", "\"timings\":{", "\"total\":", "\"compile\":", "\"rows\":900"})
    CHECK(contains(j, key));
  CHECK(contains(j, "\"nnz\":" + std::to_string(a.nnz())));
  const std::string key = test::json_string_field(j, "key");
  CHECK(key.size() == 32);
  CHECK(key.find_first_not_of("0123456789abcdef") == std::string::npos);
  const std::string where = test::json_string_field(j, "cache");
  // "built-in": the first tier from the CPU kernel bundle (a fresh cache, as in CI).
  CHECK((where == "memory" || where == "disk" || where == "compiled" || where == "built-in"));
  CHECK(find_format(test::json_string_field(j, "format")) != nullptr);

  // The checker itself must reject what a careless describe could emit.
  CHECK(test::json_error("{\"a\":nan}") != "");
  CHECK(test::json_error("{\"a\":\"x\"y\"}") != "");
  CHECK(test::json_error("{\"a\":[1,2,]}") != "");
  CHECK(test::json_error("{\"a\":1}}") != "");
  CHECK(test::json_error("{\"a\":-1.5e+3,\"b\":[true,null,\"\\n\"]}") == "");
}

TEST_CASE("status strings cover every code", "[api]") {
  std::set<std::string> seen;
  for (int s = SPMV_STATUS_SUCCESS; s <= SPMV_STATUS_INTERNAL_ERROR; ++s) {
    const std::string str = spmv_status_string(spmv_status_t(s));
    INFO("status " << s);
    CHECK(!str.empty());
    CHECK(str != "unknown status");
    seen.insert(str);
  }
  CHECK(seen.size() == size_t(SPMV_STATUS_INTERNAL_ERROR) + 1);
  CHECK(std::string(spmv_status_string(spmv_status_t(SPMV_STATUS_INTERNAL_ERROR + 1))) ==
        "unknown status");
  CHECK(std::string(spmv_status_string(spmv_status_t(-1))) == "unknown status");
}

TEST_CASE("the last error is per thread", "[api]") {
  if (!test::require_cpu_backend()) return;
  Small<int32_t> m;
  m.rp[1] = 7;
  spmv_plan_t p = nullptr;
  const spmv_options_t o = cpu();
  const spmv_csr_t d = m.desc();
  REQUIRE(spmv_plan(&p, &d, &o) == SPMV_STATUS_INVALID_MATRIX);
  const std::string here = spmv_last_error();
  CHECK(!here.empty());
  std::string there = "unset";
  std::thread([&] { there = spmv_last_error(); }).join();
  CHECK(there == "");
  CHECK(std::string(spmv_last_error()) == here);
}

namespace {

void count_messages(int, const char*, void* user) { ++*static_cast<int*>(user); }

}  // namespace

// Run in a fresh process by the next test: the process's very first log message must reach the
// callback of the plan that logged it.
TEST_CASE("first log message of a process reaches the plan's callback", "[.first-log]") {
  if (!test::require_cpu_backend()) return;
  Small<int32_t> m;
  const spmv_csr_t d = m.desc();
  int messages = 0;
  spmv_options_t o = cpu();
  o.log_level = SPMV_LOG_INFO;  // a plan logs its spec at info level
  o.log_callback = &count_messages;
  o.log_user = &messages;
  spmv_plan_t p = nullptr;
  REQUIRE(spmv_plan(&p, &d, &o) == SPMV_STATUS_SUCCESS);
  spmv_plan_destroy(p);
  CHECK(messages > 0);
}

TEST_CASE("the log callback gets a process's first message", "[api]") {
  if (!test::require_cpu_backend()) return;
  const std::string self = std::filesystem::read_symlink("/proc/self/exe").string();
  std::string out;
  const int rc = test::run_command("env -u SPMVJIT_LOG_LEVEL '" + self + "' '[.first-log]'", &out);
  INFO(out);
  CHECK(rc == 0);
  CHECK(out.find("All tests passed") != std::string::npos);
  CHECK(out.find("1 test case") != std::string::npos);
}
