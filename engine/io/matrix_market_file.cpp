// Matrix Market files: opened, mapped (or read) within the memory limit and handed to the parser
// (matrix_market.cpp); only regular files, whose size is known.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <new>
#include <string>

#include "engine/io/matrix_market.hpp"

namespace spmvjit {
namespace {

std::string os_error(const std::string& what, const std::string& path) {
  return what + " '" + path + "': " + std::strerror(errno);
}

// Plain reads of at most `limit` bytes: file systems without mmap, and files whose size stat
// does not know (st_size 0, as in /proc).
std::string read_all(int fd, const std::string& path, uint64_t limit) {
  std::string text(size_t(1) << 16, '\0');
  size_t used = 0;
  for (;;) {
    if (used == text.size()) {
      if (used >= limit)
        fail(SPMV_STATUS_OUT_OF_MEMORY,
             "'" + path + "' is larger than the reader's memory limit of " + mtx::gib(limit));
      text.resize(std::min<uint64_t>(text.size() * 2, limit));
    }
    const ssize_t got = ::read(fd, text.data() + used, text.size() - used);
    if (got < 0) {
      if (errno == EINTR) continue;
      fail(SPMV_STATUS_IO_ERROR, os_error("cannot read", path));
    }
    if (got == 0) break;
    used += size_t(got);
  }
  text.resize(used);
  return text;
}

const char* file_kind(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO or pipe";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

}  // namespace

uint64_t default_read_memory_limit() {
  const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGESIZE);
  uint64_t limit = pages > 0 && page > 0 ? uint64_t(pages) * uint64_t(page) : UINT64_MAX;
  for (int resource : {RLIMIT_AS, RLIMIT_DATA}) {
    struct rlimit r {};
    if (::getrlimit(resource, &r) == 0 && r.rlim_cur != RLIM_INFINITY)
      limit = std::min<uint64_t>(limit, r.rlim_cur);
  }
  return limit;
}

namespace {

// The file's text (mapped, else read) handed to parse(text).
template <class Parse>
auto with_file_text(const std::string& path, const ReadOptions& options, Parse&& parse) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) fail(SPMV_STATUS_IO_ERROR, os_error("cannot open", path));
  struct Close {
    int fd;
    ~Close() { ::close(fd); }
  } close_fd{fd};
  struct stat st {};
  if (::fstat(fd, &st) != 0) fail(SPMV_STATUS_IO_ERROR, os_error("cannot stat", path));
  // /dev/zero never ends and a FIFO may never send: only files whose size is known are read.
  if (!S_ISREG(st.st_mode))
    fail(SPMV_STATUS_IO_ERROR, "cannot read '" + path + "': " + file_kind(st.st_mode) +
                                   ", not a regular file (write the matrix to a file first)");
  const uint64_t limit = options.memory_limit ? options.memory_limit : default_read_memory_limit();
  if (st.st_size > 0) {
    // Mapping the page cache saves copying the text into fresh (zeroed, faulted) memory. With a
    // progress callback the pages are read as the parser reaches them (MADV_SEQUENTIAL reads
    // ahead), not all before it starts, so the progress counts the reading of a cold file too.
    const size_t size = size_t(st.st_size);
    void* map = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE | (options.progress ? 0 : MAP_POPULATE), fd, 0);
    if (map != MAP_FAILED) {
      ::madvise(map, size, MADV_SEQUENTIAL);
      struct Unmap {
        void* p;
        size_t n;
        ~Unmap() { ::munmap(p, n); }
      } unmap{map, size};
      return parse(std::string_view(static_cast<const char*>(map), size));
    }
  }
  std::string text;
  try {
    text = read_all(fd, path, std::max<uint64_t>(limit, uint64_t(st.st_size)));
  } catch (const std::bad_alloc&) {
    fail(SPMV_STATUS_OUT_OF_MEMORY, "'" + path + "': out of host memory while reading the file");
  }
  return parse(std::string_view(text));
}

}  // namespace

HostCsr<int64_t, double> read_matrix_market(const std::string& path, const ReadOptions& options,
                                            MatrixMarketInfo* info) {
  return with_file_text(
      path, options, [&](std::string_view text) { return parse_matrix_market(text, path, options, info); });
}

std::string read_matrix_market_banner(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return "";
  struct Close {
    int fd;
    ~Close() { ::close(fd); }
  } close_fd{fd};
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) return "";
  char buf[1024];
  const ssize_t n = ::pread(fd, buf, sizeof buf, 0);
  if (n <= 0) return "";
  const std::string_view head(buf, size_t(n));
  return std::string(head.substr(0, std::min(head.find('\n'), head.size())));
}

HostCsr<int64_t, std::complex<double>> read_matrix_market_complex(const std::string& path,
                                                                  const ReadOptions& options,
                                                                  MatrixMarketInfo* info) {
  return with_file_text(path, options, [&](std::string_view text) {
    return parse_matrix_market_complex(text, path, options, info);
  });
}

}  // namespace spmvjit
