// Files only this user can have written: private directories, checked reads, atomic replacement.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <string>
#include <vector>

namespace spmvjit {

// Creates `dir` and any missing parent with mode 0700, then checks that it is a directory owned by
// this user (the effective uid) that neither group nor others may write: whoever can write it
// could plant native code the cache would run. Returns "" when it may be used, else why not
// (the path included).
std::string ensure_private_dir(const std::string& dir);

enum class ReadStatus { ok, absent, rejected };

// Reads `path` whole into `out` if it is a regular file owned by this user, not writable by group
// or others, of at most `max_bytes`. The open follows no symlink (the final component) and does
// not wait on a FIFO; the size is checked before anything is allocated or read. absent: nothing
// there (ENOENT, ENOTDIR); rejected: anything else, with `why` set.
ReadStatus read_private_file(const std::string& path, size_t max_bytes, std::vector<char>* out,
                             std::string* why);

// Replaces `path` with `size` bytes: written to a temporary of a unique name in the same directory
// (pid, counter and random bits; O_EXCL, mode 0600), then renamed over `path`, which replaces
// whatever was there (a symlink or FIFO included) without following it. The temporary is removed
// on any failure, a full disk mid-write included. Throws Error(SPMV_STATUS_IO_ERROR).
void write_file_atomically(const std::string& path, const void* data, size_t size);

// Test hook: the write(2) that write_file_atomically calls (nullptr restores ::write). Returns the
// previous one. Lets a test fail a write half-way with ENOSPC.
using WriteFunction = ssize_t (*)(int fd, const void* data, size_t size);
WriteFunction set_write_function_for_tests(WriteFunction f);

}  // namespace spmvjit
