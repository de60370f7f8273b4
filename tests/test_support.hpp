// Helpers shared by the core tests: a strict JSON syntax checker, temp dirs, subprocesses.
#pragma once

#include <stdlib.h>
#include <sys/wait.h>

#include <catch2/catch.hpp>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "codegen/kernel_spec.hpp"
#include "core/json.hpp"
#include "engine/value_codec.hpp"
#include "runtime/backend.hpp"
#include "spmvjit/spmvjit.h"

// Catch prints Json values in failed checks as their text.
namespace Catch {
template <>
struct StringMaker<spmvjit::Json> {
  static std::string convert(const spmvjit::Json& j) { return j.dump(); }
};
}  // namespace Catch

// A test that cannot run here (no device, no compiler, no backend in this build) says why and
// returns; ctest reports it as skipped, not passed (SKIP_REGULAR_EXPRESSION in tests/CMakeLists.txt).
#define SPMVJIT_SKIP(why)             \
  do {                                \
    WARN("SPMVJIT_SKIPPED: " << why); \
    return;                           \
  } while (0)

namespace spmvjit::test {

// True if this build has the CPU backend (SPMVJIT_WITH_CPU, public on the library). Without it
// (a GPU-only build) the caller returns early: Catch2 v2 has no SKIP, so the test passes with a
// WARN saying why, once per test case.
inline bool require_cpu_backend() {
#ifdef SPMVJIT_WITH_CPU
  return true;
#else
  static std::string warned_for;
  const std::string name = Catch::getResultCapture().getCurrentTestName();
  if (name != warned_for) {
    warned_for = name;
    WARN("SPMVJIT_SKIPPED: " << name << ": no CPU backend in this build");
  }
  return false;
#endif
}

// Strict JSON (RFC 8259) syntax check: returns "" if `s` is one valid JSON value, else what is
// wrong and where. Enough to catch unescaped quotes, "nan"/"inf" numbers and bad nesting.
class JsonChecker {
 public:
  explicit JsonChecker(std::string_view s) : s_(s) {}
  std::string check() {
    skip_ws();
    if (!value(0)) return error_;
    skip_ws();
    if (pos_ != s_.size()) return fail("trailing characters");
    return "";
  }

 private:
  bool value(int depth) {
    if (depth > 64) return fail("nesting too deep"), false;
    skip_ws();
    if (pos_ >= s_.size()) return fail("unexpected end"), false;
    const char c = s_[pos_];
    if (c == '{') return object(depth);
    if (c == '[') return array(depth);
    if (c == '"') return string();
    if (c == '-' || std::isdigit(static_cast<unsigned char>(c))) return number();
    for (std::string_view lit : {"true", "false", "null"})
      if (s_.substr(pos_, lit.size()) == lit) {
        pos_ += lit.size();
        return true;
      }
    return fail("unexpected character"), false;
  }
  bool object(int depth) {
    ++pos_;
    skip_ws();
    if (peek('}')) return ++pos_, true;
    for (;;) {
      skip_ws();
      if (!peek('"')) return fail("expected a key"), false;
      if (!string()) return false;
      skip_ws();
      if (!peek(':')) return fail("expected ':'"), false;
      ++pos_;
      if (!value(depth + 1)) return false;
      skip_ws();
      if (peek(',')) {
        ++pos_;
        continue;
      }
      if (peek('}')) return ++pos_, true;
      return fail("expected ',' or '}'"), false;
    }
  }
  bool array(int depth) {
    ++pos_;
    skip_ws();
    if (peek(']')) return ++pos_, true;
    for (;;) {
      if (!value(depth + 1)) return false;
      skip_ws();
      if (peek(',')) {
        ++pos_;
        continue;
      }
      if (peek(']')) return ++pos_, true;
      return fail("expected ',' or ']'"), false;
    }
  }
  bool string() {
    ++pos_;
    while (pos_ < s_.size()) {
      const unsigned char c = static_cast<unsigned char>(s_[pos_]);
      if (c == '"') return ++pos_, true;
      if (c < 0x20) return fail("control character in string"), false;
      if (c == '\\') {
        if (++pos_ >= s_.size()) break;
        const char e = s_[pos_];
        if (e == 'u') {
          for (int i = 1; i <= 4; ++i)
            if (pos_ + i >= s_.size() || !std::isxdigit(static_cast<unsigned char>(s_[pos_ + i])))
              return fail("bad \\u escape"), false;
          pos_ += 4;
        } else if (std::string_view("\"\\/bfnrt").find(e) == std::string_view::npos) {
          return fail("bad escape"), false;
        }
      }
      ++pos_;
    }
    return fail("unterminated string"), false;
  }
  bool number() {
    const size_t start = pos_;
    if (peek('-')) ++pos_;
    if (peek('0')) {
      ++pos_;
    } else if (!digits()) {
      return fail("bad number"), false;
    }
    if (peek('.')) {
      ++pos_;
      if (!digits()) return fail("bad fraction"), false;
    }
    if (peek('e') || peek('E')) {
      ++pos_;
      if (peek('+') || peek('-')) ++pos_;
      if (!digits()) return fail("bad exponent"), false;
    }
    return pos_ > start;
  }
  bool digits() {
    const size_t b = pos_;
    while (pos_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[pos_]))) ++pos_;
    return pos_ > b;
  }
  bool peek(char c) const { return pos_ < s_.size() && s_[pos_] == c; }
  void skip_ws() {
    while (pos_ < s_.size() && (s_[pos_] == ' ' || s_[pos_] == '\n' || s_[pos_] == '\t' || s_[pos_] == '\r'))
      ++pos_;
  }
  std::string fail(const std::string& what) {
    if (error_.empty()) {
      const size_t b = pos_ > 30 ? pos_ - 30 : 0;
      error_ = what + " at offset " + std::to_string(pos_) + " near '" + std::string(s_.substr(b, 60)) + "'";
    }
    return error_;
  }

  std::string_view s_;
  size_t pos_ = 0;
  std::string error_;
};

inline std::string json_error(std::string_view s) { return JsonChecker(s).check(); }

// The string value of the first "key":"..." in a flat search of `json` ("" if absent).
inline std::string json_string_field(const std::string& json, const std::string& key) {
  const std::string pat = "\"" + key + "\":\"";
  const size_t p = json.find(pat);
  if (p == std::string::npos) return "";
  const size_t b = p + pat.size();
  return json.substr(b, json.find('"', b) - b);
}

// A fresh directory under the system temp dir, removed with everything in it on destruction.
class TempDir {
 public:
  TempDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "spmvjit-test-XXXXXX").string();
    if (::mkdtemp(tmpl.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    path_ = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// Runs a shell command; returns its exit status and fills `out` with stdout + stderr.
inline int run_command(const std::string& cmd, std::string* out) {
  out->clear();
  FILE* p = ::popen((cmd + " 2>&1").c_str(), "r");
  if (!p) return -1;
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) out->append(buf, n);
  const int st = ::pclose(p);
  return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

// A JSON file's contents (the file must exist and parse).
inline Json read_json_file(const std::string& path) {
  std::ifstream in(path);
  REQUIRE(in);
  return Json::parse(std::string(std::istreambuf_iterator<char>(in), {}));
}

// The GPU backend the device tests ([cuda]) run on: CUDA, or the HIP backend when
// SPMVJIT_TEST_GPU=hip. A build for HIP's NVIDIA platform (SPMVJIT_HIP_PLATFORM=nvidia) runs the
// whole device suite through the HIP backend this way on an NVIDIA GPU (scripts/gpu_run.sh).
inline BackendKind gpu_kind() {
  const char* e = std::getenv("SPMVJIT_TEST_GPU");
  return e && std::string(e) == "hip" ? BackendKind::hip : BackendKind::cuda;
}
inline spmv_backend_t gpu_api() {
  return gpu_kind() == BackendKind::hip ? SPMV_BACKEND_HIP : SPMV_BACKEND_CUDA;
}
// Specs that differ from another only in a baked count compile alike: the compile-everything
// tests that need not cover every spec (CI compiles on two cores) take sym_diag's run-time count
// and its smallest and largest DIAGS (engine/formats/sym_diag.cpp), not all fifteen.
inline bool compile_test_takes(const KernelSpec& s) {
  const auto it = s.constants.find("DIAGS");
  return it == s.constants.end() || it->second == 2 || it->second == 16;
}

// The compile-everything tests compile every spec on each compiler's first target (NVRTC's sm_90,
// hipRTC's gfx90a in double) and a share of n on the others: CI compiles on two cores, and every
// spec on every target would be some 9,000 compiles, over an hour there. A share takes the first
// spec of each template and value codec (every module and encoding meets every target) and one in
// n of the rest, picked by a hash of the target and the spec so that the targets sharing a value
// type take different ones. SPMVJIT_TEST_COMPILE_ALL=1 (scripts/gpu_run.sh's many cores, a change
// to the templates) makes every share 1: every spec everywhere.
inline unsigned compile_share(unsigned n) {
  const char* e = std::getenv("SPMVJIT_TEST_COMPILE_ALL");
  return e && *e && std::string(e) != "0" ? 1u : n;
}

// The specs of `all` (in their order) that `wanted` accepts and compile_test_takes, cut to a share
// of `n` on `target` (compile_share above).
template <class Wanted>
std::vector<KernelSpec> compile_test_specs(const std::vector<KernelSpec>& all, const std::string& target,
                                           unsigned n, Wanted wanted) {
  std::vector<KernelSpec> out;
  std::set<std::pair<std::string, int64_t>> firsts;  // (template, value codec)
  for (const KernelSpec& s : all) {
    if (!wanted(s) || !compile_test_takes(s)) continue;
    const auto codec = s.constants.find(kValueCodecParam);
    const bool first =
        firsts.insert({s.template_name, codec == s.constants.end() ? -1 : codec->second}).second;
    uint64_t h = 1469598103934665603ull;  // FNV-1a: the same picks on every machine
    for (const char c : target + "|" + s.serialize()) h = (h ^ uint8_t(c)) * 1099511628211ull;
    if (first || n <= 1 || h % n == 0) out.push_back(s);
  }
  return out;
}

inline bool gpu_available() { return backend_available(gpu_kind(), 0); }
inline Backend& gpu_backend() { return get_backend(gpu_kind(), 0); }

}  // namespace spmvjit::test
