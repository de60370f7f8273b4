// core/private_file: private directories, the checks before a read, and atomic writes that leave
// no temporary behind (a full disk, a file size limit, racing threads and processes).
#include "core/private_file.hpp"

#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "core/error.hpp"
#include "tests/test_support.hpp"

namespace {

using namespace spmvjit;
namespace fs = std::filesystem;

constexpr uid_t kOtherUid = 65534;  // nobody

void write_text(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
}

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

mode_t mode_of(const std::string& path) {
  struct stat st {};
  REQUIRE(::stat(path.c_str(), &st) == 0);
  return st.st_mode & 07777;
}

// Names in `dir` besides `keep`: temporaries left behind.
std::vector<std::string> leftovers(const std::string& dir, const std::string& keep) {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().filename() != keep) out.push_back(e.path().filename().string());
  return out;
}

ReadStatus read_status(const std::string& path, std::string* why, size_t max = 1 << 20) {
  std::vector<char> bytes;
  why->clear();
  return read_private_file(path, max, &bytes, why);
}

// A write that puts half of what it is asked to, then finds the disk full.
ssize_t half_then_enospc(int fd, const void* data, size_t size) {
  static thread_local bool wrote = false;
  if (!wrote && size > 1) {
    wrote = true;
    return ::write(fd, data, size / 2);
  }
  wrote = false;
  errno = ENOSPC;
  return -1;
}

}  // namespace

TEST_CASE("private directories are created 0700 and refused when others may write them", "[cache]") {
  test::TempDir tmp;
  const std::string dir = tmp.path() + "/a/b/cache";
  CHECK(ensure_private_dir(dir) == "");
  for (const std::string& d : {tmp.path() + "/a", tmp.path() + "/a/b", dir}) {
    INFO(d);
    CHECK(mode_of(d) == 0700);
  }
  CHECK(ensure_private_dir(dir) == "");  // exists already: fine

  for (mode_t m : {mode_t(0770), mode_t(0707), mode_t(0777), mode_t(01777)}) {
    INFO("mode " << std::oct << m);
    REQUIRE(::chmod(dir.c_str(), m) == 0);
    const std::string why = ensure_private_dir(dir);
    CHECK(why.find("writable by group or others") != std::string::npos);
    CHECK(why.find(dir) != std::string::npos);
  }
  REQUIRE(::chmod(dir.c_str(), 0755) == 0);
  CHECK(ensure_private_dir(dir) == "");  // readable by others is not a risk to this user

  write_text(tmp.path() + "/file", "x");
  CHECK(ensure_private_dir(tmp.path() + "/file") != "");
  CHECK(ensure_private_dir(tmp.path() + "/file/sub").find("cannot create directory") != std::string::npos);

  if (::geteuid() != 0) {
    WARN("not root: a directory of another user's cannot be made here");
  } else {
    REQUIRE(::chown(dir.c_str(), kOtherUid, kOtherUid) == 0);
    CHECK(ensure_private_dir(dir).find("owned by uid 65534") != std::string::npos);
  }
}

TEST_CASE("private reads refuse FIFOs, symlinks, devices, foreign and oversized files", "[cache]") {
  test::TempDir tmp;
  const std::string good = tmp.path() + "/good";
  write_text(good, "hello");
  std::vector<char> bytes;
  std::string why;
  REQUIRE(read_private_file(good, 100, &bytes, &why) == ReadStatus::ok);
  CHECK(std::string(bytes.begin(), bytes.end()) == "hello");
  CHECK(read_status(tmp.path() + "/none", &why) == ReadStatus::absent);
  CHECK(read_status(good + "/below-a-file", &why) == ReadStatus::absent);

  // A FIFO: without O_NONBLOCK the open would wait for a writer forever.
  const std::string fifo = tmp.path() + "/fifo";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  CHECK(read_status(fifo, &why) == ReadStatus::rejected);
  CHECK(why == "a FIFO");

  // Symlinks are not followed: to /dev/zero (would read until memory runs out) nor to a good file.
  const std::string zero = tmp.path() + "/zero";
  REQUIRE(::symlink("/dev/zero", zero.c_str()) == 0);
  CHECK(read_status(zero, &why) == ReadStatus::rejected);
  CHECK(why.find("symbolic link") != std::string::npos);
  const std::string link = tmp.path() + "/link";
  REQUIRE(::symlink(good.c_str(), link.c_str()) == 0);
  CHECK(read_status(link, &why) == ReadStatus::rejected);
  CHECK(read_status("/dev/zero", &why) == ReadStatus::rejected);
  CHECK(why == "a character device");
  CHECK(read_status(tmp.path(), &why) == ReadStatus::rejected);
  CHECK(why == "a directory");

  // Writable by others, or larger than the caller's limit (a sparse GiB: refused unread).
  REQUIRE(::chmod(good.c_str(), 0666) == 0);
  CHECK(read_status(good, &why) == ReadStatus::rejected);
  CHECK(why.find("writable by group or others") != std::string::npos);
  REQUIRE(::chmod(good.c_str(), 0600) == 0);
  CHECK(read_status(good, &why, 4) == ReadStatus::rejected);
  CHECK(why.find("more than the limit") != std::string::npos);
  const std::string huge = tmp.path() + "/huge";
  { std::ofstream touch(huge); }
  fs::resize_file(huge, uintmax_t(1) << 30);
  CHECK(read_status(huge, &why) == ReadStatus::rejected);
  CHECK(why.find("1073741824 bytes") != std::string::npos);

  if (::geteuid() != 0) {
    WARN("not root: a file of another user's cannot be made here");
  } else {
    REQUIRE(::chown(good.c_str(), kOtherUid, kOtherUid) == 0);
    CHECK(read_status(good, &why) == ReadStatus::rejected);
    CHECK(why.find("owned by uid 65534") != std::string::npos);
  }
}

TEST_CASE("atomic writes: mode 0600, replace links without following, leave nothing on failure", "[cache]") {
  test::TempDir tmp;
  const std::string path = tmp.path() + "/entry";
  write_file_atomically(path, "first", 5);
  CHECK(read_text(path) == "first");
  CHECK(mode_of(path) == 0600);

  // A symlink or FIFO where the file goes is replaced, its target untouched.
  const std::string target = tmp.path() + "/target";
  write_text(target, "keep");
  fs::remove(path);
  REQUIRE(::symlink(target.c_str(), path.c_str()) == 0);
  write_file_atomically(path, "second", 6);
  CHECK_FALSE(fs::is_symlink(path));
  CHECK(read_text(path) == "second");
  CHECK(read_text(target) == "keep");
  fs::remove(path);
  REQUIRE(::mkfifo(path.c_str(), 0600) == 0);
  write_file_atomically(path, "third", 5);
  CHECK(fs::is_regular_file(path));
  fs::remove(target);

  SECTION("a disk that fills up half-way") {
    const WriteFunction saved = set_write_function_for_tests(&half_then_enospc);
    std::string message;
    try {
      write_file_atomically(path, "0123456789", 10);
    } catch (const Error& e) {
      message = e.what();
      CHECK(e.status() == SPMV_STATUS_IO_ERROR);
    }
    set_write_function_for_tests(saved);
    CHECK(message.find(std::strerror(ENOSPC)) != std::string::npos);
    CHECK(read_text(path) == "third");  // the old file stays whole
    CHECK(leftovers(tmp.path(), "entry").empty());
  }
  SECTION("a real file size limit (write fails with EFBIG)") {
    rlimit old{};
    REQUIRE(::getrlimit(RLIMIT_FSIZE, &old) == 0);
    rlimit tiny = old;
    tiny.rlim_cur = 16;
    const auto old_handler = ::signal(SIGXFSZ, SIG_IGN);
    REQUIRE(::setrlimit(RLIMIT_FSIZE, &tiny) == 0);
    const std::vector<char> big(4096, 'x');
    bool threw = false;
    try {
      write_file_atomically(path, big.data(), big.size());
    } catch (const Error&) {
      threw = true;
    }
    ::setrlimit(RLIMIT_FSIZE, &old);
    ::signal(SIGXFSZ, old_handler);
    CHECK(threw);
    CHECK(read_text(path) == "third");
    CHECK(leftovers(tmp.path(), "entry").empty());
  }
  SECTION("a directory where the file goes: the rename fails, the temporary goes") {
    fs::remove(path);
    fs::create_directories(path + "/occupied");
    CHECK_THROWS_AS(write_file_atomically(path, "x", 1), Error);
    CHECK(leftovers(tmp.path(), "entry").empty());
  }
}

TEST_CASE("8 threads and 2 processes writing one file never tear it nor leave a temporary", "[cache]") {
  test::TempDir tmp;
  const std::string path = tmp.path() + "/shared";
  // Contents of different lengths, each recognizable whole: a torn file would mix or cut them.
  auto content = [](int writer, int round) {
    return std::string(size_t(1000 + 97 * writer + round), char('a' + writer));
  };
  auto whole = [&](const std::string& s) {
    if (s.empty()) return false;
    const int writer = s[0] - 'a';
    for (char c : s)
      if (c != s[0]) return false;
    return writer >= 0 && writer < 10 && s.size() >= 1000 + 97 * size_t(writer) &&
           s.size() < 1000 + 97 * size_t(writer) + 50;
  };
  constexpr int kRounds = 50;
  std::atomic<int> torn{0}, errors{0};
  std::atomic<bool> done{false};
  // Two forked processes (writers 8 and 9) beside eight threads of this one, forked before any
  // thread starts (a child forked while a thread holds a lock would wait for it forever).
  std::vector<pid_t> children;
  for (int writer = 8; writer < 10; ++writer) {
    const pid_t pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
      int status = 0;
      for (int r = 0; r < kRounds; ++r) {
        const std::string s = content(writer, r);
        try {
          write_file_atomically(path, s.data(), s.size());
        } catch (...) {
          status = 1;
        }
      }
      ::_exit(status);
    }
    children.push_back(pid);
  }
  std::thread reader([&] {
    std::vector<char> bytes;
    std::string why;
    while (!done.load()) {
      if (read_private_file(path, 1 << 20, &bytes, &why) == ReadStatus::ok &&
          !whole(std::string(bytes.begin(), bytes.end())))
        ++torn;
    }
  });
  std::vector<std::thread> writers;
  for (int writer = 0; writer < 8; ++writer)
    writers.emplace_back([&, writer] {
      for (int r = 0; r < kRounds; ++r) {
        const std::string s = content(writer, r);
        try {
          write_file_atomically(path, s.data(), s.size());
        } catch (...) {
          ++errors;
        }
      }
    });
  for (auto& t : writers) t.join();
  for (pid_t pid : children) {
    int status = 0;
    REQUIRE(::waitpid(pid, &status, 0) == pid);
    CHECK(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);
  }
  done = true;
  reader.join();
  CHECK(errors.load() == 0);
  CHECK(torn.load() == 0);
  CHECK(whole(read_text(path)));
  CHECK(leftovers(tmp.path(), "shared").empty());
}
