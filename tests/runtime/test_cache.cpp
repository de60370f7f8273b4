// The kernel cache: disk entry format and its defects, memory/disk/compile outcomes in process
// and across processes (the CLI), unwritable directories, cache keys, concurrent compiles.
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "core/log.hpp"
#include "engine/gen/generators.hpp"
#include "engine/reference.hpp"
#include "runtime/backend.hpp"
#include "runtime/cache/kernel_cache.hpp"
#include "spmvjit/spmvjit.hpp"
#include "tests/test_support.hpp"

namespace {

using namespace spmvjit;
namespace fs = std::filesystem;

std::vector<char> read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::vector<char>(std::istreambuf_iterator<char>(f), {});
}
void write_file(const std::string& path, const std::vector<char>& bytes) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f.write(bytes.data(), std::streamsize(bytes.size()));
}

// A CSR kernel no other test asks for: an unused constant makes its key new in this process,
// so the first request really compiles.
KernelSpec fresh_spec(Backend& b) {
  static std::atomic<int> counter{0};
  KernelSpec s;
  s.backend = BackendKind::cpu;
  s.target = b.target().target;
  s.format = "csr";
  s.template_name = "csr";
  s.index = IndexType::i32;
  s.value = ValueType::f64;
  const auto now = std::chrono::steady_clock::now().time_since_epoch().count();
  s.constants["TEST_NONCE"] = int64_t(::getpid()) * 1000003 + (now % 1000003) * 1000 + counter++;
  return s;
}

// Collects warnings through the public callback; restores the default logger when done.
struct WarningLog {
  std::mutex mu;
  std::vector<std::string> lines;
  WarningLog() { configure_logging(SPMV_LOG_WARN, &WarningLog::callback, this); }
  ~WarningLog() { configure_logging(SPMV_LOG_WARN, nullptr, nullptr); }
  static void callback(int level, const char* msg, void* user) {
    auto* self = static_cast<WarningLog*>(user);
    std::lock_guard lock(self->mu);
    if (level >= SPMV_LOG_WARN) self->lines.push_back(msg);
  }
  size_t count() {
    std::lock_guard lock(mu);
    return lines.size();
  }
};

std::string entry_error(const std::string& path, const std::string& key) {
  std::vector<char> payload;
  std::string why;
  if (read_cache_entry(path, key, &payload, &why)) return "";
  return why.empty() ? "rejected without a reason" : why;
}

}  // namespace

TEST_CASE("cache entries: round trip and every defect rejected", "[cache]") {
  test::TempDir dir;
  const std::string key = "0123456789abcdef0123456789abcdef";
  const std::string path = cache_entry_path(dir.path(), key);
  CHECK(path.rfind(dir.path(), 0) == 0);
  std::vector<char> payload(1000);
  for (size_t i = 0; i < payload.size(); ++i) payload[i] = char(i * 7 + 3);

  std::vector<char> got;
  std::string why;
  CHECK_FALSE(read_cache_entry(path, key, &got, &why));
  CHECK(why == "absent");

  write_cache_entry(path, key, "backend=cpu;format=test", payload);
  REQUIRE(read_cache_entry(path, key, &got, &why));
  CHECK(got == payload);
  // No temp file is left next to the entry.
  int files = 0;
  for (const auto& e : fs::directory_iterator(dir.path())) files += e.is_regular_file();
  CHECK(files == 1);
  const std::vector<char> good = read_file(path);

  CHECK(entry_error(path, "fedcba9876543210fedcba9876543210") == "key mismatch");
  CHECK(entry_error(path, key + "0") == "key mismatch");

  auto bytes = good;
  bytes.back() ^= 0x10;  // payload byte
  write_file(path, bytes);
  CHECK(entry_error(path, key) == "checksum mismatch");

  bytes = good;
  bytes.pop_back();
  write_file(path, bytes);
  CHECK(entry_error(path, key) == "truncated payload");

  bytes = good;
  bytes.push_back('x');
  write_file(path, bytes);
  CHECK(entry_error(path, key) == "truncated payload");

  bytes.assign(good.begin(), good.begin() + 12);
  write_file(path, bytes);
  CHECK(entry_error(path, key) != "");

  bytes = good;
  bytes[0] = 'X';
  write_file(path, bytes);
  CHECK(entry_error(path, key) == "bad magic or truncated header");

  write_file(path, {});
  CHECK(entry_error(path, key) != "");

  // Absurd lengths in the header (key, then spec, then payload) must not be trusted.
  for (size_t at : {size_t(8), size_t(16 + key.size()), size_t(24 + key.size() + 23)}) {
    bytes = good;
    for (size_t i = 0; i < 8; ++i) bytes[at + i] = char(0xff);
    write_file(path, bytes);
    CHECK(entry_error(path, key) != "");
  }

  // Writing into a directory that does not exist fails with IO_ERROR and leaves nothing.
  try {
    write_cache_entry(dir.path() + "/missing/x.bin", key, "", payload);
    FAIL("no error");
  } catch (const Error& e) {
    CHECK(e.status() == SPMV_STATUS_IO_ERROR);
  }
}

TEST_CASE("get_kernel: compiled then memory, ensure_cached: compiled then disk", "[cache]") {
  if (!test::require_cpu_backend()) return;
  Backend& b = get_backend(BackendKind::cpu, 0);
  test::TempDir dir;
  const KernelSpec spec = fresh_spec(b);
  CacheOutcome o1, o2;
  auto m1 = get_kernel(b, spec, dir.path(), &o1);
  CHECK(o1.where == "compiled");
  CHECK(o1.compile_seconds > 0);
  const std::string path = cache_entry_path(dir.path(), o1.key);
  CHECK(entry_error(path, o1.key) == "");
  auto m2 = get_kernel(b, spec, dir.path(), &o2);
  CHECK(o2.where == "memory");
  CHECK(o2.key == o1.key);
  CHECK(m1 == m2);
  CHECK(m1->entry("spmvjit_part_3") != nullptr);

  // ensure_cached reads and writes the disk only: a second directory starts empty.
  test::TempDir dir2;
  CacheOutcome o3, o4, o5;
  CHECK(ensure_cached(b, spec, dir2.path(), &o3));
  CHECK(o3.where == "compiled");
  CHECK_FALSE(ensure_cached(b, spec, dir2.path(), &o4));
  CHECK(o4.where == "disk");
  // A corrupt entry is recompiled and rewritten, with the reason in the note.
  const std::string path2 = cache_entry_path(dir2.path(), o3.key);
  auto bytes = read_file(path2);
  bytes[bytes.size() / 2] ^= 0x5a;
  write_file(path2, bytes);
  {
    WarningLog log;
    CHECK(ensure_cached(b, spec, dir2.path(), &o5));
    CHECK(log.count() == 1);
  }
  CHECK(o5.where == "compiled");
  CHECK(o5.note.find("rejected") != std::string::npos);
  CHECK(entry_error(path2, o3.key) == "");

  // Memory only: nothing written anywhere.
  CacheOutcome o6;
  get_kernel(b, fresh_spec(b), "", &o6);
  CHECK(o6.where == "compiled");

  // Through the public API: a second plan of the same spec in this process is a memory hit
  // (the first cannot be a disk hit: the directory is new).
  test::TempDir dir3;
  const auto a = generate_matrix("diag:500:3", 6);
  const spmv_csr_t d = csr_view<int64_t, double>(a.rows, a.cols, a.nnz(), a.row_ptr.data(),
                                                 a.col_idx.data(), a.val.data());
  Options opt;
  opt.backend = SPMV_BACKEND_CPU;
  opt.cache_dir = dir3.path().c_str();
  // Untiered: the first plan compiles the specialized module itself (tiered, its key would be
  // the quick variant's and the second plan might find either).
  const char* saved = std::getenv("SPMVJIT_TIERED_COMPILE");
  const std::string restore = saved ? saved : "";
  setenv("SPMVJIT_TIERED_COMPILE", "0", 1);
  const std::string first = SpmvPlan(d, opt).describe();
  const std::string second = SpmvPlan(d, opt).describe();
  if (saved)
    setenv("SPMVJIT_TIERED_COMPILE", restore.c_str(), 1);
  else
    unsetenv("SPMVJIT_TIERED_COMPILE");
  const std::string where = test::json_string_field(first, "cache");
  CHECK((where == "compiled" || where == "memory"));
  CHECK(test::json_string_field(second, "cache") == "memory");
  CHECK(test::json_string_field(second, "key") == test::json_string_field(first, "key"));
}

TEST_CASE("an unwritable cache dir degrades to memory with one warning", "[cache]") {
  if (!test::require_cpu_backend()) return;
  Backend& b = get_backend(BackendKind::cpu, 0);
  test::TempDir dir;
  const std::string file = dir.path() + "/a-file";
  write_file(file, {'x'});
  const std::string bad = file + "/cache";  // its parent is a regular file: even root fails
  WarningLog log;
  CacheOutcome o1, o2;
  REQUIRE_NOTHROW(get_kernel(b, fresh_spec(b), bad, &o1));
  REQUIRE_NOTHROW(get_kernel(b, fresh_spec(b), bad, &o2));
  CHECK(o1.where == "compiled");
  CHECK(o2.where == "compiled");
  INFO("warnings: " << (log.lines.empty() ? "" : log.lines.front()));
  CHECK(log.count() == 1);
  if (log.count()) CHECK(log.lines.front().find(bad) != std::string::npos);

  // Through the public API, plans in that directory still work and verify.
  const auto a = generate_matrix("random:300:1:9", 2);
  const spmv_csr_t d = csr_view<int64_t, double>(a.rows, a.cols, a.nnz(), a.row_ptr.data(),
                                                 a.col_idx.data(), a.val.data());
  Options o;
  o.backend = SPMV_BACKEND_CPU;
  o.cache_dir = bad.c_str();
  o.log_callback = &WarningLog::callback;
  o.log_user = &log;
  SpmvPlan plan(d, o);
  const auto x = random_vector<double>(a.cols, 3);
  std::vector<double> y(size_t(a.rows), std::numeric_limits<double>::quiet_NaN());
  plan.execute(1.0, x.data(), 0.0, y.data());
  CHECK(check_spmv(a, reference_spmv(a, 1.0, x.data(), 0.0, y.data()), y.data()) == "");
  CHECK(log.count() == 1);
}

TEST_CASE("cache key changes with constants, types, target and compiler", "[cache]") {
  if (!test::require_cpu_backend()) return;
  Backend& b = get_backend(BackendKind::cpu, 0);
  KernelSpec base;
  base.backend = BackendKind::cpu;
  base.target = "x86_64:znver4:abc";
  base.format = "sell";
  base.template_name = "sell";
  base.constants = {{"C", 8}, {"PERMUTED", 1}};
  auto key = [&](const KernelSpec& s, const std::string& compiler = "clang 19") {
    return cache_key(s, generate_source_for(b, s), compiler);
  };
  const std::string k0 = key(base);
  CHECK(key(base) == k0);  // deterministic
  CHECK(k0.size() == 32);
  std::vector<std::pair<std::string, KernelSpec>> variants;
  auto add = [&](const std::string& what, auto&& change) {
    KernelSpec s = base;
    change(s);
    variants.push_back({what, s});
  };
  add("constant value", [](KernelSpec& s) { s.constants["C"] = 16; });
  add("constant added", [](KernelSpec& s) { s.constants["EXTRA"] = 0; });
  add("value type", [](KernelSpec& s) { s.value = ValueType::f32; });
  add("index type", [](KernelSpec& s) { s.index = IndexType::i64; });
  add("target", [](KernelSpec& s) { s.target = "x86_64:skylake:def"; });
  add("template", [](KernelSpec& s) { s.template_name = s.format = "csr"; });
  std::set<std::string> keys{k0};
  for (const auto& [what, s] : variants) {
    INFO(what);
    CHECK(key(s) != k0);
    keys.insert(key(s));
  }
  CHECK(keys.size() == variants.size() + 1);
  CHECK(key(base, "clang 20") != k0);
  KernelSource src = generate_source_for(b, base);
  src.options.push_back("-DEXTRA");
  CHECK(cache_key(base, src, "clang 19") != k0);
}

TEST_CASE("two threads requesting one new kernel both get it, compiled once", "[cache]") {
  if (!test::require_cpu_backend()) return;
  Backend& b = get_backend(BackendKind::cpu, 0);
  test::TempDir dir;
  const KernelSpec spec = fresh_spec(b);
  CacheOutcome o[2];
  std::shared_ptr<LoadedModule> m[2];
  std::string err[2];
  std::atomic<int> ready{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < 2; ++i)
    threads.emplace_back([&, i] {
      ready.fetch_add(1);
      while (ready.load() < 2) std::this_thread::yield();
      try {
        m[i] = get_kernel(b, spec, dir.path(), &o[i]);
      } catch (const std::exception& e) {
        err[i] = e.what();
      }
    });
  for (auto& t : threads) t.join();
  CHECK(err[0] == "");
  CHECK(err[1] == "");
  CHECK(m[0] != nullptr);
  CHECK(m[0] == m[1]);
  std::multiset<std::string> where{o[0].where, o[1].where};
  CHECK(where == std::multiset<std::string>{"compiled", "memory"});

  // And through the public API: two plans of one matrix at once, in a fresh directory.
  const auto a = generate_matrix("powerlaw:3000", 4).cast<int32_t, float>();
  const spmv_csr_t d = csr_view<int32_t, float>(a.rows, a.cols, a.nnz(), a.row_ptr.data(),
                                                a.col_idx.data(), a.val.data());
  test::TempDir dir2;
  std::string bad[2];
  threads.clear();
  for (int i = 0; i < 2; ++i)
    threads.emplace_back([&, i] {
      spmv_options_t opt;
      spmv_options_init(&opt);
      opt.backend = SPMV_BACKEND_CPU;
      opt.cache_dir = dir2.path().c_str();
      spmv_plan_t p = nullptr;
      if (spmv_plan(&p, &d, &opt) != SPMV_STATUS_SUCCESS) {
        bad[i] = spmv_last_error();
        return;
      }
      const auto x = random_vector<float>(a.cols, 5 + i);
      std::vector<float> y(size_t(a.rows), std::numeric_limits<float>::quiet_NaN());
      const float one = 1, zero = 0;
      spmv_execute(p, &one, x.data(), &zero, y.data(), nullptr);
      bad[i] = check_spmv(a, reference_spmv(a, 1.0, x.data(), 0.0, y.data()), y.data());
      spmv_plan_destroy(p);
    });
  for (auto& t : threads) t.join();
  CHECK(bad[0] == "");
  CHECK(bad[1] == "");
}

#ifdef SPMVJIT_CLI_PATH
namespace {

// Runs `spmvjit run` on a small generated matrix; returns the describe JSON (checks exit 0).
std::string run_cli(const std::string& cache_dir, std::string* output) {
  // timeout: a lookup stuck on a bad entry (a FIFO) fails the test instead of hanging it.
  const std::string cmd = std::string("timeout 300 '") + SPMVJIT_CLI_PATH +
                          "' run --gen poisson2d:17 --backend cpu " +
                          "--format csr --iters 1 --describe --cache-dir '" + cache_dir + "'";
  const int rc = test::run_command(cmd, output);
  INFO(cmd << "\n" << *output);
  REQUIRE(rc == 0);
  CHECK(output->find("verified yes") != std::string::npos);
  const size_t p = output->find("{\"format\"");
  REQUIRE(p != std::string::npos);
  const std::string json = output->substr(p, output->find('\n', p) - p);
  CHECK(test::json_error(json) == "");
  return json;
}

}  // namespace

TEST_CASE("a second process loads the kernel from disk, bad entries are recompiled", "[cache]") {
  if (!test::require_cpu_backend()) return;
  test::TempDir dir;
  std::string out;
  const std::string first = run_cli(dir.path(), &out);
  CHECK(test::json_string_field(first, "cache") == "compiled");
  const std::string key = test::json_string_field(first, "key");
  const std::string path = cache_entry_path(dir.path(), key);
  REQUIRE(entry_error(path, key) == "");
  const std::string second = run_cli(dir.path(), &out);
  CHECK(test::json_string_field(second, "cache") == "disk");
  CHECK(test::json_string_field(second, "key") == key);

  const auto good = read_file(path);
  for (const std::string damage : {"flipped byte", "truncated", "fifo", "symlink to /dev/zero"}) {
    INFO(damage);
    auto bytes = good;
    if (damage == "fifo" || damage == "symlink to /dev/zero") {
      fs::remove(path);
      REQUIRE((damage == "fifo" ? ::mkfifo(path.c_str(), 0600) : ::symlink("/dev/zero", path.c_str())) == 0);
    } else {
      if (damage == "truncated")
        bytes.resize(bytes.size() * 2 / 3);
      else
        bytes[bytes.size() - 100] ^= 0x01;
      write_file(path, bytes);
    }
    const std::string again = run_cli(dir.path(), &out);
    CHECK(test::json_string_field(again, "cache") == "compiled");
    CHECK(test::json_string_field(again, "note").find("rejected") != std::string::npos);
    CHECK(entry_error(path, key) == "");  // rewritten valid
    CHECK(test::json_string_field(run_cli(dir.path(), &out), "cache") == "disk");
  }
}

TEST_CASE("the CLI with an unwritable cache dir still runs and warns once", "[cache]") {
  if (!test::require_cpu_backend()) return;
  test::TempDir dir;
  write_file(dir.path() + "/f", {'x'});
  std::string out;
  const std::string json = run_cli(dir.path() + "/f/cache", &out);
  CHECK(test::json_string_field(json, "cache") == "compiled");
  size_t warnings = 0;  // logger lines look like "[spmvjit warning] ..."
  for (size_t p = out.find("[spmvjit warn"); p != std::string::npos;
       p = out.find("[spmvjit warn", p + 1))
    ++warnings;
  INFO(out);
  CHECK(warnings == 1);
}
#endif
