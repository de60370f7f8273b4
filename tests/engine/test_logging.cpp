// Logging: the process-wide setting (spmv_set_logging) and plans' own callbacks and levels, which
// take exactly that plan's messages and change nothing for anyone else.
#include <sys/stat.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <mutex>
#include <string>
#include <vector>

#include "engine/gen/generators.hpp"
#include "engine/reference.hpp"
#include "spmvjit/spmvjit.hpp"
#include "tests/test_support.hpp"

namespace {

using namespace spmvjit;

// One callback's messages.
struct Capture {
  std::mutex mu;
  std::vector<std::string> lines;
  static void callback(int, const char* message, void* user) {
    auto* self = static_cast<Capture*>(user);
    std::lock_guard lock(self->mu);
    self->lines.push_back(message);
  }
  size_t count() {
    std::lock_guard lock(mu);
    return lines.size();
  }
  bool has(const std::string& text) {
    std::lock_guard lock(mu);
    for (const std::string& l : lines)
      if (l.find(text) != std::string::npos) return true;
    return false;
  }
  std::string all() {
    std::lock_guard lock(mu);
    std::string s;
    for (const std::string& l : lines) s += l + "\n";
    return s;
  }
};

// Restores the process-wide default (warn, stderr) when the test ends, however it ends.
struct ProcessLogging {
  ProcessLogging(spmv_log_level_t level, Capture* c) {
    REQUIRE(spmv_set_logging(level, c ? &Capture::callback : nullptr, c) == SPMV_STATUS_SUCCESS);
  }
  ~ProcessLogging() { spmv_set_logging(SPMV_LOG_DEFAULT, nullptr, nullptr); }
};

// $SPMVJIT_LOG_LEVEL overrides every level these tests set.
bool env_level_unset() { return std::getenv("SPMVJIT_LOG_LEVEL") == nullptr; }

template <class V>
struct Matrix {
  HostCsr<int32_t, V> a;
  explicit Matrix(const char* spec) : a(generate_matrix(spec, 3).cast<int32_t, V>()) {}
  spmv_csr_t desc() const {
    return csr_view<int32_t, V>(a.rows, a.cols, a.nnz(), a.row_ptr.data(), a.col_idx.data(), a.val.data());
  }
};

Options logged(Capture* c, spmv_log_level_t level = SPMV_LOG_INFO) {
  Options o;
  o.backend = SPMV_BACKEND_CPU;
  o.log_level = level;
  o.log_callback = c ? &Capture::callback : nullptr;
  o.log_user = c;
  return o;
}

std::string spec_of(const SpmvPlan& p) { return Json::parse(p.describe())["kernel"]["spec"].as_string(); }

TEST_CASE("each plan's callback gets its own messages; a plan without one removes nothing", "[log]") {
  if (!test::require_cpu_backend()) return;
  if (!env_level_unset()) SPMVJIT_SKIP("$SPMVJIT_LOG_LEVEL overrides the levels under test");
  Capture process, ca, cb, ce;
  ProcessLogging setting(SPMV_LOG_INFO, &process);
  // Two value types: every message naming a kernel names one plan's.
  Matrix<double> ma("poisson2d:60");
  Matrix<float> mb("poisson2d:60");
  SpmvPlan a(ma.desc(), logged(&ca));
  SpmvPlan b(mb.desc(), logged(&cb));
  const std::string spec_a = spec_of(a), spec_b = spec_of(b);
  REQUIRE(spec_a != spec_b);
  INFO("a:\n" << ca.all() << "b:\n" << cb.all() << "process:\n" << process.all());
  CHECK(ca.has("plan: " + spec_a));
  CHECK_FALSE(ca.has(spec_b));
  CHECK(cb.has("plan: " + spec_b));
  CHECK_FALSE(cb.has(spec_a));
  CHECK(process.count() == 0);

  // A plan with neither callback nor level logs where the process-wide setting says, and
  // leaves the others' callbacks in place.
  Matrix<double> mc("random:3000:2:9");
  SpmvPlan c(mc.desc(), logged(nullptr, SPMV_LOG_DEFAULT));
  CHECK(process.has("plan: " + spec_of(c)));
  const size_t process_lines = process.count();
  // A plan's level filters its messages, wherever they go: nothing at info reaches anyone.
  SpmvPlan e(mc.desc(), logged(&ce, SPMV_LOG_WARN));
  SpmvPlan off(mc.desc(), logged(nullptr, SPMV_LOG_OFF));
  CHECK(ce.count() == 0);
  CHECK(process.count() == process_lines);

  // Later calls on a plan log through its options: values beyond the plan's 8-bit table drop
  // the compression, which update_values reports at info level.
  const size_t a_lines = ca.count();
  const auto values = random_vector<double>(ma.a.nnz(), 7);
  a.update_values(values.data());
  CHECK(ca.count() > a_lines);
  CHECK(ca.has("update_values: values stored plain"));
  CHECK_FALSE(process.has("update_values"));
  CHECK_FALSE(cb.has("update_values"));
  HostCsr<int32_t, double> updated = ma.a;
  updated.val = values;
  const auto x = random_vector<double>(ma.a.cols, 8);
  std::vector<double> y(size_t(ma.a.rows));
  a.execute(1.0, x.data(), 0.0, y.data());
  CHECK(check_spmv(updated, reference_spmv(updated, 1.0, x.data(), 0.0, y.data()), y.data()) == "");
}

TEST_CASE("the process-wide callback gets messages outside any plan (warmup)", "[log]") {
  if (!test::require_cpu_backend()) return;
  if (!env_level_unset()) SPMVJIT_SKIP("$SPMVJIT_LOG_LEVEL overrides the levels under test");
  Capture process, plan_log;
  ProcessLogging setting(SPMV_LOG_WARN, &process);
  Matrix<double> m("poisson2d:30");
  SpmvPlan p(m.desc(), logged(&plan_log, SPMV_LOG_TRACE));  // its callback is no process default
  test::TempDir dir;
  REQUIRE(::chmod(dir.path().c_str(), 0777) == 0);  // writable by others: not a kernel cache
  int count = -1;
  CHECK(spmv_warmup(SPMV_BACKEND_CPU, nullptr, dir.path().c_str(), &count) == SPMV_STATUS_IO_ERROR);
  INFO(process.all());
  CHECK(process.has(dir.path()));
  CHECK_FALSE(plan_log.has(dir.path()));
}

TEST_CASE("spmv_set_logging and options.log_level refuse unknown levels", "[log]") {
  CHECK(spmv_set_logging(spmv_log_level_t(7), nullptr, nullptr) == SPMV_STATUS_INVALID_VALUE);
  CHECK(std::string(spmv_last_error()).find("log level") != std::string::npos);
  CHECK(spmv_set_logging(spmv_log_level_t(-1), nullptr, nullptr) == SPMV_STATUS_INVALID_VALUE);
  CHECK(spmv_set_logging(SPMV_LOG_DEFAULT, nullptr, nullptr) == SPMV_STATUS_SUCCESS);
}

}  // namespace
