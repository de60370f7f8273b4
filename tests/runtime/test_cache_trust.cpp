// The kernel cache's trust checks: entries that are not regular files of this user's are refused
// and replaced, directories others may write are not used, concurrent writers never tear entries.
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fcntl.h>
#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <limits>
#include <mutex>
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

constexpr uid_t kOtherUid = 65534;  // nobody

// A CSR kernel no other test asks for (see test_cache.cpp): its first request really compiles.
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
  s.constants["TRUST_NONCE"] = int64_t(::getpid()) * 1000003 + (now % 1000003) * 1000 + counter++;
  return s;
}

// Warnings logged while it lives.
struct Warnings {
  std::mutex mu;
  std::vector<std::string> lines;
  Warnings() { configure_logging(SPMV_LOG_WARN, &Warnings::callback, this); }
  ~Warnings() { configure_logging(SPMV_LOG_WARN, nullptr, nullptr); }
  static void callback(int level, const char* msg, void* user) {
    auto* self = static_cast<Warnings*>(user);
    std::lock_guard lock(self->mu);
    if (level >= SPMV_LOG_WARN) self->lines.push_back(msg);
  }
  std::string all() {
    std::lock_guard lock(mu);
    std::string s;
    for (const auto& l : lines) s += l + "\n";
    return s;
  }
  size_t count() {
    std::lock_guard lock(mu);
    return lines.size();
  }
};

std::string entry_error(const std::string& path, const std::string& key) {
  std::vector<char> payload;
  std::string why;
  return read_cache_entry(path, key, &payload, &why) ? "" : why;
}

std::vector<char> read_bytes(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::vector<char>(std::istreambuf_iterator<char>(f), {});
}

void write_bytes(const std::string& path, const std::vector<char>& bytes) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f.write(bytes.data(), std::streamsize(bytes.size()));
}

size_t files_in(const std::string& dir) {
  size_t n = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir)) ++n;
  return n;
}

// Opens `fifo` for writing if no one finished within `seconds`: a reader stuck in open() is set
// free, so a regression fails the test (rescued) instead of hanging it.
class FifoRescuer {
 public:
  FifoRescuer(std::string fifo, int seconds)
      : thread_([this, fifo = std::move(fifo), seconds] {
          const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
          while (!done_.load() && std::chrono::steady_clock::now() < end)
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
          if (done_.load()) return;
          rescued_ = true;
          const int fd = ::open(fifo.c_str(), O_WRONLY | O_NONBLOCK);
          if (fd >= 0) ::close(fd);
        }) {}
  ~FifoRescuer() { finish(); }
  bool finish() {
    done_ = true;
    if (thread_.joinable()) thread_.join();
    return rescued_.load();
  }

 private:
  std::atomic<bool> done_{false}, rescued_{false};
  std::thread thread_;
};

}  // namespace

TEST_CASE("cache entries that are not regular files of ours are refused, recompiled, replaced", "[cache]") {
  if (!test::require_cpu_backend()) return;
  Backend& b = get_backend(BackendKind::cpu, 0);
  test::TempDir dir;
  const KernelSpec spec = fresh_spec(b);
  CacheOutcome first;
  REQUIRE(ensure_cached(b, spec, dir.path(), &first));  // disk only: each call below reads it
  const std::string key = first.key;
  const std::string path = cache_entry_path(dir.path(), key);
  REQUIRE(entry_error(path, key) == "");
  const std::vector<char> good = read_bytes(path);
  test::TempDir elsewhere;
  const std::string copy = elsewhere.path() + "/copy.bin";
  write_bytes(copy, good);

  // Each damage, then: the lookup compiles, says why in its note and one warning, and the path
  // holds a valid regular entry of ours again.
  auto expect_recompiled = [&](const std::string& reason) {
    Warnings w;
    CacheOutcome o;
    CHECK(ensure_cached(b, spec, dir.path(), &o));
    CHECK(o.where == "compiled");
    INFO("note: " << o.note);
    CHECK(o.note.find("rejected") != std::string::npos);
    CHECK(o.note.find(reason) != std::string::npos);
    CHECK(w.count() == 1);
    struct stat st {};
    REQUIRE(::lstat(path.c_str(), &st) == 0);
    CHECK(S_ISREG(st.st_mode));
    CHECK(st.st_uid == ::geteuid());
    CHECK((st.st_mode & 0777) == 0600);
    CHECK(entry_error(path, key) == "");
    CHECK(files_in(dir.path()) == 1);  // no temporary beside it
  };

  SECTION("a FIFO does not hang the lookup") {
    fs::remove(path);
    REQUIRE(::mkfifo(path.c_str(), 0600) == 0);
    FifoRescuer rescuer(path, 20);
    expect_recompiled("a FIFO");
    CHECK_FALSE(rescuer.finish());
  }
  SECTION("a symlink to /dev/zero is not followed") {
    fs::remove(path);
    REQUIRE(::symlink("/dev/zero", path.c_str()) == 0);
    expect_recompiled("symbolic link");
  }
  SECTION("a symlink to a valid entry is not followed either, nor its target touched") {
    fs::remove(path);
    REQUIRE(::symlink(copy.c_str(), path.c_str()) == 0);
    expect_recompiled("symbolic link");
    CHECK(read_bytes(copy) == good);
  }
  SECTION("a file of another user's (root only)") {
    if (::geteuid() != 0) {
      WARN("not root: cannot give a file away; skipped");
      return;
    }
    REQUIRE(::chown(path.c_str(), kOtherUid, kOtherUid) == 0);
    expect_recompiled("owned by uid 65534");
  }
  SECTION("an entry others may write") {
    REQUIRE(::chmod(path.c_str(), 0666) == 0);
    expect_recompiled("writable by group or others");
  }
  SECTION("a truncated entry") {
    write_bytes(path, std::vector<char>(good.begin(), good.begin() + long(good.size() / 2)));
    expect_recompiled("truncated");
  }
  SECTION("a header claiming a payload beyond the limit is refused unallocated") {
    auto bytes = good;
    const size_t at = 8 + 8 + key.size();  // magic, key length, key: then the spec length
    uint64_t spec_len = 0;
    for (int i = 0; i < 8; ++i) spec_len |= uint64_t(uint8_t(bytes[at + size_t(i)])) << (8 * i);
    const size_t len_at = at + 8 + size_t(spec_len);
    for (int i = 0; i < 8; ++i) bytes[len_at + size_t(i)] = char(i == 5 ? 0x40 : 0);  // 2^46 bytes
    write_bytes(path, bytes);
    expect_recompiled("beyond the limit");
  }
  SECTION("a file larger than the limit is refused unread") {
    fs::resize_file(path, kMaxCacheEntryBytes + 1);  // sparse
    expect_recompiled("more than the limit");
  }
}

TEST_CASE("a cache directory others may write is not used: memory only, one warning", "[cache]") {
  if (!test::require_cpu_backend()) return;
  Backend& b = get_backend(BackendKind::cpu, 0);
  test::TempDir tmp;
  const std::string dir = tmp.path() + "/shared";
  const KernelSpec spec = fresh_spec(b);
  CacheOutcome o;
  REQUIRE(ensure_cached(b, spec, dir, &o));  // a valid entry, while the directory was private
  REQUIRE(files_in(dir) == 1);

  SECTION("group or world writable") { REQUIRE(::chmod(dir.c_str(), 0777) == 0); }
  SECTION("owned by another user (root only)") {
    if (::geteuid() != 0) {
      WARN("not root: cannot give a directory away; skipped");
      return;
    }
    REQUIRE(::chown(dir.c_str(), kOtherUid, kOtherUid) == 0);
  }
  Warnings w;
  CacheOutcome o1, o2;
  // The valid entry there is not loaded: compiled, into memory only.
  REQUIRE_NOTHROW(get_kernel(b, spec, dir, &o1));
  CHECK(o1.where == "compiled");
  REQUIRE_NOTHROW(get_kernel(b, fresh_spec(b), dir, &o2));
  CHECK(o2.where == "compiled");
  // Warmup, whose point is the disk, says so instead of compiling everything for nothing.
  int count = -1;
  CHECK(spmv_warmup(SPMV_BACKEND_CPU, nullptr, dir.c_str(), &count) == SPMV_STATUS_IO_ERROR);
  CHECK(count == 0);
  CHECK(std::string(spmv_last_error()).find(dir) != std::string::npos);
  INFO(w.all());
  CHECK(w.count() == 1);
  CHECK(w.all().find(dir) != std::string::npos);
  CHECK(w.all().find("memory cache only") != std::string::npos);
  CHECK(files_in(dir) == 1);  // nothing written there either

  // Plans with that directory still run and verify.
  const auto a = generate_matrix("random:300:1:9", 3);
  const spmv_csr_t d =
      csr_view<int64_t, double>(a.rows, a.cols, a.nnz(), a.row_ptr.data(), a.col_idx.data(), a.val.data());
  Options opt;
  opt.backend = SPMV_BACKEND_CPU;
  opt.cache_dir = dir.c_str();
  SpmvPlan plan(d, opt);
  const auto x = random_vector<double>(a.cols, 3);
  std::vector<double> y(size_t(a.rows), std::numeric_limits<double>::quiet_NaN());
  plan.execute(1.0, x.data(), 0.0, y.data());
  CHECK(check_spmv(a, reference_spmv(a, 1.0, x.data(), 0.0, y.data()), y.data()) == "");
}

TEST_CASE("the cache directory and its parents are created 0700, entries 0600", "[cache]") {
  if (!test::require_cpu_backend()) return;
  Backend& b = get_backend(BackendKind::cpu, 0);
  test::TempDir tmp;
  const std::string dir = tmp.path() + "/xdg/spmvjit";
  CacheOutcome o;
  get_kernel(b, fresh_spec(b), dir, &o);
  CHECK(o.where == "compiled");
  struct stat st {};
  for (const std::string& d : {tmp.path() + "/xdg", dir}) {
    INFO(d);
    REQUIRE(::stat(d.c_str(), &st) == 0);
    CHECK((st.st_mode & 0777) == 0700);
  }
  REQUIRE(::stat(cache_entry_path(dir, o.key).c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0600);
}

TEST_CASE("8 threads and 2 processes writing one cache entry: 50 rounds, never torn", "[cache]") {
  test::TempDir dir;
  const std::string key = "00112233445566778899aabbccddeeff";
  const std::string path = cache_entry_path(dir.path(), key);
  auto payload = [](int writer, int round) {
    return std::vector<char>(size_t(5000 + 131 * writer + round), char(writer * 16 + round % 16));
  };
  constexpr int kRounds = 50;
  std::atomic<int> bad{0}, errors{0};
  std::atomic<bool> done{false};
  // The processes fork before any thread starts: a child forked while another thread holds a
  // lock (the allocator's, under AddressSanitizer) would wait for it forever.
  std::vector<pid_t> children;
  for (int writer = 8; writer < 10; ++writer) {
    const pid_t pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
      int status = 0;
      for (int r = 0; r < kRounds; ++r) try {
          write_cache_entry(path, key, "writer " + std::to_string(writer), payload(writer, r));
        } catch (...) {
          status = 1;
        }
      ::_exit(status);
    }
    children.push_back(pid);
  }
  std::thread reader([&] {
    std::vector<char> got;
    std::string why;
    while (!done.load())
      if (!read_cache_entry(path, key, &got, &why) && why != "absent") ++bad;
  });
  std::vector<std::thread> writers;
  for (int writer = 0; writer < 8; ++writer)
    writers.emplace_back([&, writer] {
      for (int r = 0; r < kRounds; ++r) try {
          write_cache_entry(path, key, "writer " + std::to_string(writer), payload(writer, r));
        } catch (...) {
          ++errors;
        }
    });
  for (auto& t : writers) t.join();
  for (pid_t pid : children) {
    int status = -1;
    REQUIRE(::waitpid(pid, &status, 0) == pid);
    CHECK((WIFEXITED(status) && WEXITSTATUS(status) == 0));
  }
  done = true;
  reader.join();
  CHECK(errors.load() == 0);
  CHECK(bad.load() == 0);
  CHECK(entry_error(path, key) == "");
  CHECK(files_in(dir.path()) == 1);
}
