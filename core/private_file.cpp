// Files only this user can have written: private directories, checked reads, atomic replacement.
#include "core/private_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <functional>
#include <random>
#include <thread>

#include "core/error.hpp"

namespace spmvjit {
namespace {

std::atomic<WriteFunction> g_write{nullptr};

std::string error_text(int err) { return std::strerror(err); }

std::string octal_mode(mode_t m) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0%03o", unsigned(m & 07777));
  return buf;
}

// Why a file or directory of this stat may not be trusted, "" when it may.
std::string ownership_problem(const struct stat& st) {
  if (st.st_uid != ::geteuid())
    return "owned by uid " + std::to_string(st.st_uid) + ", not this user (uid " +
           std::to_string(::geteuid()) + ")";
  if (st.st_mode & (S_IWGRP | S_IWOTH))
    return "writable by group or others (mode " + octal_mode(st.st_mode) + ")";
  return "";
}

const char* kind_of(mode_t m) {
  if (S_ISDIR(m)) return "a directory";
  if (S_ISFIFO(m)) return "a FIFO";
  if (S_ISCHR(m)) return "a character device";
  if (S_ISBLK(m)) return "a block device";
  if (S_ISSOCK(m)) return "a socket";
  if (S_ISLNK(m)) return "a symbolic link";
  return "not a regular file";
}

// A suffix no other writer of the same path picks: the pid tells processes apart on one host, the
// counter threads and calls of this process, the random bits processes of equal pids in different
// pid namespaces sharing one directory.
std::string temporary_suffix() {
  static std::atomic<uint64_t> counter{0};
  thread_local std::mt19937_64 rng{std::random_device{}() ^
                                   std::hash<std::thread::id>{}(std::this_thread::get_id())};
  char buf[64];
  std::snprintf(buf, sizeof buf, ".tmp.%ld.%llu.%016llx", long(::getpid()),
                static_cast<unsigned long long>(counter.fetch_add(1)),
                static_cast<unsigned long long>(rng()));
  return buf;
}

}  // namespace

std::string ensure_private_dir(const std::string& dir) {
  if (dir.empty()) return "no directory given";
  // stat, not lstat: a cache directory reached through a symlink of the user's own is fine; what
  // it points at is what gets checked. An existing directory costs this one call (no mkdir, which
  // may fail with EROFS on a read-only file system that could still serve its entries).
  struct stat st;
  if (::stat(dir.c_str(), &st) != 0) {
    std::string cur;
    for (size_t i = 0; i <= dir.size(); ++i) {
      if ((i == dir.size() || dir[i] == '/') && !cur.empty() && ::mkdir(cur.c_str(), 0700) != 0 &&
          errno != EEXIST)
        return "cannot create directory " + cur + ": " + error_text(errno);
      if (i < dir.size()) cur += dir[i];
    }
    if (::stat(dir.c_str(), &st) != 0) return "cannot use directory " + dir + ": " + error_text(errno);
  }
  if (!S_ISDIR(st.st_mode)) return "cannot use directory " + dir + ": not a directory";
  if (const std::string why = ownership_problem(st); !why.empty()) return "directory " + dir + " is " + why;
  return "";
}

ReadStatus read_private_file(const std::string& path, size_t max_bytes, std::vector<char>* out,
                             std::string* why) {
  out->clear();
  // O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer, forever.
  const int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) {
    const int err = errno;
    if (err == ENOENT || err == ENOTDIR) return ReadStatus::absent;
    *why = err == ELOOP ? "a symbolic link (not followed)" : "cannot open it: " + error_text(err);
    return ReadStatus::rejected;
  }
  struct stat st;
  ReadStatus status = ReadStatus::rejected;
  if (::fstat(fd, &st) != 0) {
    *why = "cannot stat it: " + error_text(errno);
  } else if (!S_ISREG(st.st_mode)) {
    *why = kind_of(st.st_mode);
  } else if (std::string owner = ownership_problem(st); !owner.empty()) {
    *why = std::move(owner);
  } else if (st.st_size < 0 || uint64_t(st.st_size) > max_bytes) {
    *why = std::to_string(st.st_size) + " bytes, more than the limit of " + std::to_string(max_bytes);
  } else {
    // Bounded by the size fstat saw: a file that grows meanwhile is cut there (its content check
    // then fails), one that shrinks is refused.
    out->resize(size_t(st.st_size));
    size_t done = 0;
    while (done < out->size()) {
      const ssize_t n = ::read(fd, out->data() + done, out->size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      done += size_t(n);
    }
    if (done == out->size())
      status = ReadStatus::ok;
    else
      *why = "changed while read (" + std::to_string(done) + " of " + std::to_string(out->size()) + " bytes)";
  }
  ::close(fd);
  if (status != ReadStatus::ok) out->clear();
  return status;
}

void write_file_atomically(const std::string& path, const void* data, size_t size) {
  const std::string tmp = path + temporary_suffix();
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) fail(SPMV_STATUS_IO_ERROR, "cannot create " + tmp + ": " + error_text(errno));
  const WriteFunction write_fn = g_write.load();
  std::string err;
  for (size_t done = 0; done < size && err.empty();) {
    const char* p = static_cast<const char*>(data) + done;
    const ssize_t n = write_fn ? write_fn(fd, p, size - done) : ::write(fd, p, size - done);
    if (n > 0)
      done += size_t(n);
    else if (n == 0 || errno != EINTR)
      err = "cannot write " + tmp + ": " + error_text(n == 0 ? ENOSPC : errno);
  }
  if (::close(fd) != 0 && err.empty()) err = "cannot write " + tmp + ": " + error_text(errno);
  if (err.empty() && ::rename(tmp.c_str(), path.c_str()) != 0)
    err = "cannot rename " + tmp + " to " + path + ": " + error_text(errno);
  if (!err.empty()) {
    ::unlink(tmp.c_str());
    fail(SPMV_STATUS_IO_ERROR, err);
  }
}

WriteFunction set_write_function_for_tests(WriteFunction f) { return g_write.exchange(f); }

}  // namespace spmvjit
