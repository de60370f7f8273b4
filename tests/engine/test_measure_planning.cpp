// Measure-mode planning: the fastest measured candidate is kept, verified, and remembered as
// versioned wisdom that is replayed with one plan, or ignored (and measured again) when stale.
#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <thread>

#include "core/json.hpp"
#include "engine/formats/format.hpp"
#include "engine/gen/generators.hpp"
#include "engine/reference.hpp"
#include "spmvjit/spmvjit.hpp"
#include "spmvjit/version.h"
#include "tests/test_support.hpp"

namespace {

using namespace spmvjit;
namespace fs = std::filesystem;

// Log lines of the plans made while it lives ("plan: <spec>" once per plan built).
struct LogCapture {
  static void callback(int, const char* message, void* user) {
    auto* self = static_cast<LogCapture*>(user);
    std::lock_guard<std::mutex> lock(self->mutex);
    self->lines.emplace_back(message);
  }
  int count(const std::string& prefix) const {
    int n = 0;
    for (const std::string& l : lines) n += l.rfind(prefix, 0) == 0;
    return n;
  }
  std::mutex mutex;
  std::vector<std::string> lines;
};

// One matrix planned in measure mode with its own cache folder.
struct MeasureFixture {
  test::TempDir dir;
  HostCsr<int32_t, double> a = generate_matrix("powerlaw:20000", 5).cast<int32_t, double>();
  spmv_csr_t desc =
      csr_view<int32_t, double>(a.rows, a.cols, a.nnz(), a.row_ptr.data(), a.col_idx.data(), a.val.data());
  LogCapture log;

  Options options() {
    Options o;
    o.backend = SPMV_BACKEND_CPU;
    o.cache_dir = dir.path().c_str();
    o.planning = SPMV_PLANNING_MEASURE;
    o.log_level = SPMV_LOG_INFO;
    o.log_callback = &LogCapture::callback;
    o.log_user = &log;
    return o;
  }
  std::string wisdom_dir() const { return dir.path() + "/wisdom"; }
  // Every file in the wisdom folder.
  std::vector<std::string> wisdom_files() const {
    std::vector<std::string> out;
    if (fs::exists(wisdom_dir()))
      for (const auto& e : fs::directory_iterator(wisdom_dir())) out.push_back(e.path().string());
    return out;
  }
  // Plans, checks the result against the reference, returns describe_json's parse.
  Json plan() {
    log.lines.clear();
    SpmvPlan plan(desc, options());
    const auto x = random_vector<double>(a.cols, 31);
    std::vector<double> y(size_t(a.rows), std::numeric_limits<double>::quiet_NaN());
    plan.execute(2.0, x.data(), 0.0, y.data());
    CHECK(check_spmv(a, reference_spmv(a, 2.0, x.data(), 0.0, y.data()), y.data()) == "");
    const std::string d = plan.describe();
    REQUIRE(test::json_error(d) == "");
    return Json::parse(d);
  }
};

Json read_json(const std::string& path) {
  std::ifstream in(path);
  return Json::parse(std::string(std::istreambuf_iterator<char>(in), {}));
}

void write_text(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::trunc);
  out << text;
}

bool measured_again(const Json& d) { return d["planner"]["measured"].is_array(); }

TEST_CASE("measure mode times several formats, verifies, and writes versioned wisdom", "[planner]") {
  if (!test::require_cpu_backend()) return;
  MeasureFixture m;
  const Json first = m.plan();
  // At least two formats were timed, each with its parameters and seconds.
  const Json& measured = first["planner"]["measured"];
  REQUIRE(measured.is_array());
  REQUIRE(measured.size() >= 2);
  for (const Json& t : measured.items()) {
    CHECK(find_format(t["format"].as_string()) != nullptr);
    CHECK((t.find("seconds") || t.find("reason")));
  }
  const auto files = m.wisdom_files();
  REQUIRE(files.size() == 1);
  CHECK(fs::path(files[0]).extension() == ".json");
  const Json e = read_json(files[0]);
  CHECK(e["layout"] == Json(1));
  CHECK(e["version"] == Json(SPMVJIT_VERSION_STRING));
  CHECK(e["backend"] == Json("cpu"));
  CHECK(e["target"] == first["target"]);
  CHECK(e["format"] == first["format"]);
  CHECK(e["params"] == first["params"]);
  CHECK(e["matrix"]["nnz"].as_int() == m.a.nnz());
  CHECK(e["measured"] == measured);

  // The same matrix again: the wisdom is replayed with one plan, not a second round of timing.
  const Json again = m.plan();
  CHECK(m.log.count("plan: ") == 1);
  CHECK(again["format"] == first["format"]);
  CHECK(again["params"] == first["params"]);
  CHECK(again["planner"]["measured"]["file"] == Json(files[0]));
  CHECK(again["planner"]["why"].as_string().find("wisdom") != std::string::npos);
}

TEST_CASE("measure mode replays the remembered format and parameters", "[planner]") {
  if (!test::require_cpu_backend()) return;
  MeasureFixture m;
  const Json first = m.plan();
  const auto files = m.wisdom_files();
  REQUIRE(files.size() == 1);
  // Whatever was measured, a remembered choice wins, with its parameters: here the estimate's
  // worst applicable candidate, which measuring would not pick.
  Json worst;
  for (const Json& c : first["planner"]["candidates"].items())
    if (c["applicable"].as_bool()) worst = c;
  REQUIRE(worst.is_object());
  Json e = read_json(files[0]);
  e["format"] = worst["format"];
  e["params"] = worst["params"];
  write_text(files[0], e.dump());
  const Json d = m.plan();
  CHECK(m.log.count("plan: ") == 1);
  CHECK(m.log.count("wisdom: ignoring") == 0);
  CHECK(d["format"] == worst["format"]);
  CHECK(d["params"] == worst["params"]);
  CHECK(d["planner"]["measured"]["format"] == worst["format"]);
}

TEST_CASE("stale, foreign or corrupt wisdom is ignored and measured again", "[planner]") {
  if (!test::require_cpu_backend()) return;
  MeasureFixture m;
  m.plan();
  const auto files = m.wisdom_files();
  REQUIRE(files.size() == 1);
  const std::string path = files[0];
  const Json good = read_json(path);
  auto edited = [&](std::initializer_list<Json::Member> changes) {
    Json e = good;
    for (const auto& [key, value] : changes) e[key] = value;
    return e.dump();
  };
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"older version", edited({{"version", "0.0.1"}})},
      {"newer layout", edited({{"layout", 2}})},
      {"another target", edited({{"target", "x86_64-unknown-linux-gnu:other:0"}})},
      {"another backend", edited({{"backend", "cuda"}})},
      {"another matrix shape", edited({{"matrix", Json::object({{"rows", 1}})}})},
      {"unknown format", edited({{"format", "no_such_format"}})},
      {"no parameters", edited({{"params", nullptr}})},
      {"a parameter not an integer",
       edited({{"format", "csr_vector"}, {"params", Json::object({{"L", "4"}})}})},
      {"parameters not a candidate",
       edited({{"format", "csr_vector"}, {"params", Json::object({{"L", 3}})}})},
      {"a format that does not apply",
       edited({{"format", "ell"}, {"params", Json::object()}})},  // pads too much
      {"truncated", good.dump().substr(0, 40)},
      {"empty", ""},
      {"not JSON", "sell\n"},  // what the old wisdom files held
      {"not an object", "[1,2,3]"},
  };
  for (const auto& [what, text] : cases) {
    INFO(what);
    write_text(path, text);
    const Json d = m.plan();
    CHECK(measured_again(d));
    CHECK(m.log.count("wisdom: ignoring") == 1);
    CHECK(m.log.count("plan: ") >= 2);
    // The entry is rewritten for this build, target and matrix.
    const Json now = read_json(path);
    CHECK(now["version"] == Json(SPMVJIT_VERSION_STRING));
    CHECK(now["target"] == good["target"]);
    CHECK(now["matrix"] == good["matrix"]);
    CHECK(now["format"] == d["format"]);
  }
  CHECK(m.wisdom_files().size() == 1);
}

TEST_CASE("wisdom is written through a temporary that never stays behind", "[planner]") {
  if (!test::require_cpu_backend()) return;
  MeasureFixture m;
  m.plan();
  auto files = m.wisdom_files();
  REQUIRE(files.size() == 1);
  const std::string path = files[0];

  SECTION("a full disk: the write fails, the plan does not, the temporary is removed") {
    fs::remove(path);
    rlimit old{};
    REQUIRE(getrlimit(RLIMIT_FSIZE, &old) == 0);
    rlimit tiny = old;
    tiny.rlim_cur = 16;  // bytes: writes past it fail with EFBIG
    const auto old_handler = signal(SIGXFSZ, SIG_IGN);
    REQUIRE(setrlimit(RLIMIT_FSIZE, &tiny) == 0);
    Json d;
    try {
      d = m.plan();  // the kernels are on disk and in memory already: only wisdom writes
    } catch (...) {
      setrlimit(RLIMIT_FSIZE, &old);
      signal(SIGXFSZ, old_handler);
      throw;
    }
    setrlimit(RLIMIT_FSIZE, &old);
    signal(SIGXFSZ, old_handler);
    CHECK(measured_again(d));
    CHECK(m.wisdom_files().empty());
  }
  SECTION("the rename fails: the temporary is removed") {
    fs::remove(path);
    fs::create_directories(path + "/occupied");  // a non-empty folder where the entry goes
    const Json d = m.plan();
    CHECK(measured_again(d));
    files = m.wisdom_files();
    REQUIRE(files.size() == 1);
    CHECK(files[0] == path);
  }
  SECTION("two processes measuring at once leave one valid entry") {
#ifndef SPMVJIT_CLI_PATH
    SPMVJIT_SKIP("no command line in this build");
#else
    fs::remove(path);
    std::string run = std::string("'") + SPMVJIT_CLI_PATH +
                      "' run --gen powerlaw:20000 --seed 5 --measure --backend cpu --iters 1 --cache-dir '" +
                      m.dir.path() + "' > /dev/null";
    std::string out;
    CHECK(test::run_command("(" + run + " & " + run + " & wait)", &out) == 0);
    INFO(out);
    files = m.wisdom_files();
    REQUIRE(files.size() == 1);
    CHECK(read_json(files[0])["version"] == Json(SPMVJIT_VERSION_STRING));
#endif
  }
  for (const std::string& f : m.wisdom_files()) CHECK(f.find(".tmp") == std::string::npos);
}

TEST_CASE("wisdom that is not a regular file of ours, or in a folder others may write, is not read",
          "[planner]") {
  if (!test::require_cpu_backend()) return;
  MeasureFixture m;
  const Json first = m.plan();
  const auto files = m.wisdom_files();
  REQUIRE(files.size() == 1);
  const std::string path = files[0];
  auto logged = [&](const std::string& prefix, const std::string& part) {
    int n = 0;
    for (const std::string& l : m.log.lines)
      n += l.rfind(prefix, 0) == 0 && l.find(part) != std::string::npos;
    return n;
  };
  // After each: measured again, said why once, and the entry is a regular file again.
  auto expect_ignored = [&](const std::string& reason) {
    const Json d = m.plan();
    CHECK(measured_again(d));
    CHECK(logged("wisdom: ignoring", reason) == 1);
    CHECK(fs::is_regular_file(fs::symlink_status(path)));
    CHECK(read_json(path)["format"] == d["format"]);
  };
  SECTION("a FIFO does not hang planning") {
    fs::remove(path);
    REQUIRE(::mkfifo(path.c_str(), 0600) == 0);
    // Sets a stuck reader free after 20 s, so a regression fails instead of hanging.
    std::atomic<bool> done{false}, rescued{false};
    std::thread rescuer([&] {
      for (int i = 0; i < 1000 && !done.load(); ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
      if (done.load()) return;
      rescued = true;
      const int fd = ::open(path.c_str(), O_WRONLY | O_NONBLOCK);
      if (fd >= 0) ::close(fd);
    });
    expect_ignored("a FIFO");
    done = true;
    rescuer.join();
    CHECK_FALSE(rescued.load());
  }
  SECTION("a symlink to /dev/zero is not followed") {
    fs::remove(path);
    REQUIRE(::symlink("/dev/zero", path.c_str()) == 0);
    expect_ignored("symbolic link");
  }
  SECTION("a file too large to be wisdom is not read") {
    fs::resize_file(path, 2 << 20);
    expect_ignored("more than the limit");
  }
  SECTION("a file of another user's (root only)") {
    if (::geteuid() != 0) {
      WARN("not root: cannot give a file away; this section skipped");  // not SPMVJIT_SKIP: the others ran
      return;
    }
    REQUIRE(::chown(path.c_str(), 65534, 65534) == 0);
    expect_ignored("owned by uid 65534");
  }
  SECTION("a wisdom folder others may write: no wisdom read or written, planning still succeeds") {
    REQUIRE(::chmod(m.wisdom_dir().c_str(), 0777) == 0);
    Json e = read_json(path);
    e["format"] = "no_such_format";  // would be ignored if read: shows it is not even read
    write_text(path, e.dump());
    const Json d = m.plan();
    CHECK(measured_again(d));
    CHECK(logged("wisdom: not used", "writable by group or others") == 1);
    CHECK(m.log.count("wisdom: ignoring") == 0);
    CHECK(read_json(path)["format"] == Json("no_such_format"));  // not rewritten
  }
  for (const std::string& f : m.wisdom_files()) CHECK(f.find(".tmp") == std::string::npos);
}

TEST_CASE("8 threads measuring one matrix at once leave one whole wisdom entry", "[planner]") {
  if (!test::require_cpu_backend()) return;
  MeasureFixture m;
  m.plan();  // compiles the kernels once, so the threads below mostly time and write
  REQUIRE(m.wisdom_files().size() == 1);
  fs::remove(m.wisdom_files()[0]);
  std::vector<std::string> errors(8);
  std::vector<std::thread> threads;
  for (int i = 0; i < 8; ++i)
    threads.emplace_back([&, i] {
      try {
        SpmvPlan plan(m.desc, m.options());
      } catch (const std::exception& e) {
        errors[size_t(i)] = e.what();
      }
    });
  for (auto& t : threads) t.join();
  for (const std::string& e : errors) CHECK(e == "");
  const auto files = m.wisdom_files();
  REQUIRE(files.size() == 1);
  CHECK(files[0].find(".tmp") == std::string::npos);
  CHECK(read_json(files[0])["version"] == Json(SPMVJIT_VERSION_STRING));
}

TEST_CASE("measure mode rejects an unknown planning value", "[planner]") {
  if (!test::require_cpu_backend()) return;
  const auto a = generate_matrix("poisson2d:10").cast<int32_t, double>();
  const spmv_csr_t desc = csr_view<int32_t, double>(a.rows, a.cols, a.nnz(), a.row_ptr.data(),
                                                    a.col_idx.data(), a.val.data());
  spmv_options_t o;
  spmv_options_init(&o);
  o.backend = SPMV_BACKEND_CPU;
  o.planning = spmv_planning_t(7);
  spmv_plan_t plan = nullptr;
  CHECK(spmv_plan(&plan, &desc, &o) == SPMV_STATUS_INVALID_VALUE);
  CHECK(plan == nullptr);
  CHECK(std::string(spmv_last_error()).find("planning") != std::string::npos);
}

}  // namespace
