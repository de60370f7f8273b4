// Golden files (tests/data/golden/, see its README): every module's generated kernel source, and the
// cache keys and disk entries recorded under kCacheFormatVersion, so that every change of generated
// source shows in review and a change of the kernel ABI, the key derivation or the entry layout
// without a version bump fails. SPMVJIT_UPDATE_GOLDEN=1 re-records what may be re-recorded.
#include <catch2/catch.hpp>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "codegen/kernel_spec.hpp"
#include "core/digest.hpp"
#include "engine/device_plan.hpp"
#include "runtime/cache/kernel_cache.hpp"
#include "tests/test_support.hpp"

namespace {

using namespace spmvjit;
namespace fs = std::filesystem;

const char* const kUpdateHint =
    "If the change is intended, review it and re-record:\n"
    "  SPMVJIT_UPDATE_GOLDEN=1 build/tests/spmvjit_tests \"[golden]\"\n"
    "and commit tests/data/golden/ with it.";

bool updating() {
  const char* e = std::getenv("SPMVJIT_UPDATE_GOLDEN");
  return e && *e && std::string(e) != "0";
}

fs::path golden_dir() { return fs::path(SPMVJIT_GOLDEN_DIR); }

bool read_text(const fs::path& p, std::string* out) {
  std::ifstream f(p, std::ios::binary);
  if (!f) return false;
  std::ostringstream s;
  s << f.rdbuf();
  *out = s.str();
  return true;
}

void write_text(const fs::path& p, const std::string& text) {
  fs::create_directories(p.parent_path());
  std::ofstream f(p, std::ios::binary | std::ios::trunc);
  f << text;
  if (!f.flush()) FAIL("cannot write " << p.string());
}

std::vector<std::string> split_lines(const std::string& s) {
  std::vector<std::string> out;
  std::istringstream in(s);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

// "source/csr.cpu.cpp:17: golden `...` / now `...`": where two texts part, for the failure message.
std::string first_difference(const std::string& name, const std::string& golden, const std::string& now) {
  const auto a = split_lines(golden), b = split_lines(now);
  size_t i = 0;
  while (i < a.size() && i < b.size() && a[i] == b[i]) ++i;
  auto clip = [](const std::string& s) { return s.size() > 90 ? s.substr(0, 87) + "..." : s; };
  const std::string line = name + ":" + std::to_string(i + 1) + ": ";
  if (i == a.size() && i == b.size()) return line + "line ends differ (a final newline?)";
  if (i == a.size()) return line + "golden ends here, generated goes on with `" + clip(b[i]) + "`";
  if (i == b.size()) return line + "generated ends here, golden goes on with `" + clip(a[i]) + "`";
  return line + "golden `" + clip(a[i]) + "`, generated `" + clip(b[i]) + "`";
}

// Fixed fake targets: no host CPU name or feature reaches a golden file. The formats read only
// simd_bytes (CPU) and warp_size (GPU) to pick their variants.
TargetInfo golden_target(BackendKind b) {
  TargetInfo t;
  t.backend = b;
  t.threads = 1;
  if (b == BackendKind::cpu) {
    t.target = "golden-cpu";
    t.simd_bytes = 32;
    t.warp_size = 0;
  } else if (b == BackendKind::hip) {  // CDNA: wavefronts of 64, the feature flags in the name
    t.target = "gfx90a:sramecc+:xnack-";
    t.simd_bytes = 0;
    t.warp_size = 64;
  } else {
    t.target = "sm_90";
    t.simd_bytes = 0;
    t.warp_size = 32;
  }
  return t;
}

// Fixed compile options and compiler version: the key's other inputs, never the host's.
std::vector<std::string> golden_options(BackendKind b) {
  if (b == BackendKind::cpu) return {"-x", "c++", "-std=c++20", "-O3"};
  if (b == BackendKind::hip) return {"--offload-arch=gfx90a:sramecc+:xnack-", "-O3", "-std=c++17"};
  return {"--gpu-architecture=sm_90", "-std=c++17"};
}
const char* const kGoldenCompiler = "golden-compiler 1.0";
const std::string kPayload = "spmvjit golden payload\n";

struct GoldenModule {
  std::string id;    // "csr.cpu": module (KernelSpec::format) and backend
  std::string file;  // "csr.cpu.cpp" under source/
  KernelSpec spec;
};

// One canonical spec per module all_kernel_specs yields (formats and device-planning modules) and
// backend: int32 indices, double values, the first variant. Sorted by id.
std::vector<GoldenModule> golden_modules() {
  std::map<std::string, GoldenModule> by_id;
  for (BackendKind b : {BackendKind::cpu, BackendKind::cuda, BackendKind::hip})
    for (const KernelSpec& s : all_kernel_specs(golden_target(b))) {
      if (s.index != IndexType::i32 || s.value != ValueType::f64) continue;
      const std::string id = s.format + "." + to_string(b);
      by_id.try_emplace(id, GoldenModule{id, id + (b == BackendKind::cpu ? ".cpp" : ".cu"), s});
    }
  std::vector<GoldenModule> out;
  for (auto& [id, m] : by_id) out.push_back(std::move(m));
  return out;
}

// The bytes write_cache_entry puts on disk for (key, spec, kPayload); read_cache_entry must take
// them back.
std::string entry_bytes(const test::TempDir& dir, const std::string& key, const std::string& spec) {
  const std::string path = cache_entry_path(dir.path(), key);
  write_cache_entry(path, key, spec, std::vector<char>(kPayload.begin(), kPayload.end()));
  std::vector<char> payload;
  std::string why;
  REQUIRE(read_cache_entry(path, key, &payload, &why));
  REQUIRE(std::string(payload.begin(), payload.end()) == kPayload);
  std::string bytes;
  REQUIRE(read_text(path, &bytes));
  return bytes;
}

std::string hex_byte(unsigned char c) {
  const char* d = "0123456789abcdef";
  return {d[c >> 4], d[c & 15]};
}

// The golden cache record as (id, value) lines in file order: the version, the ABI lines (rule a),
// then one line per module (rule b). Ids are the first two words of a line.
struct Record {
  int version = -1;
  std::vector<std::pair<std::string, std::string>> abi, modules;
};

Record current_record(const std::vector<GoldenModule>& modules) {
  Record r;
  r.version = kCacheFormatVersion;
  for (const char* f : {"contract/spmv_args.h", "contract/arrays.h"}) {
    const char* text = find_template(f);
    REQUIRE(text != nullptr);
    r.abi.push_back({std::string("abi ") + f, digest_hex(std::string(text))});
  }
  // The key derivation on a source that no template edit touches.
  KernelSpec probe;
  probe.backend = BackendKind::cpu;
  probe.target = "golden-cpu";
  probe.format = probe.template_name = "probe";
  const KernelSource probe_src{"probe.cpp", "int golden_probe;\n", golden_options(BackendKind::cpu)};
  r.abi.push_back({"abi cache_key", cache_key(probe, probe_src, kGoldenCompiler)});
  // The entry layout, as a hex dump of a whole entry with a fixed key, spec and payload.
  test::TempDir dir;
  const std::string layout = entry_bytes(dir, "00112233445566778899aabbccddeeff", "golden-spec");
  for (size_t off = 0; off < layout.size(); off += 16) {
    std::string hex, ascii;
    for (size_t i = off; i < off + 16; ++i) {
      if (i >= layout.size()) {
        hex += "   ";
        continue;
      }
      const unsigned char c = static_cast<unsigned char>(layout[i]);
      hex += hex_byte(c) + " ";
      ascii += c >= 0x20 && c < 0x7f ? char(c) : '.';
    }
    char offset[16];
    std::snprintf(offset, sizeof offset, "%04zx", off);
    r.abi.push_back({std::string("entry_layout ") + offset, hex + " |" + ascii + "|"});
  }
  for (const GoldenModule& m : modules) {
    KernelSource src = generate_source(m.spec);
    src.options = golden_options(m.spec.backend);
    const std::string key = cache_key(m.spec, src, kGoldenCompiler);
    const std::string entry = entry_bytes(dir, key, m.spec.serialize());
    const std::string value = "source=" + digest_hex(src.text) + " key=" + key +
                              " entry=" + digest_hex(entry) + " bytes=" + std::to_string(entry.size());
    r.modules.push_back({"module " + m.id, value});
  }
  return r;
}

std::string render(const Record& r) {
  std::string s =
      "# Golden cache keys and disk entries: written by tests/codegen/test_golden.cpp, never by hand\n"
      "# (see README.md). Keys: compiler version \"" +
      std::string(kGoldenCompiler) +
      "\" and fixed options per backend. Entries:\n"
      "# write_cache_entry of the payload \"spmvjit golden payload\\n\". abi: digests of the embedded\n"
      "# contract files and the key of a fixed probe source; entry_layout: a whole entry with a fixed key\n"
      "# and spec; module: digest of the golden source, its key, digest and size of its entry.\n"
      "cache_format_version " +
      std::to_string(r.version) + "\n";
  for (const auto* part : {&r.abi, &r.modules})
    for (const auto& [id, value] : *part) s += id + " " + value + "\n";
  return s;
}

// Parses render's output; false with `why` on a malformed file.
bool parse(const std::string& text, Record* r, std::string* why) {
  int n = 0;
  for (const std::string& line : split_lines(text)) {
    ++n;
    if (line.empty() || line[0] == '#') continue;
    if (line.rfind("cache_format_version ", 0) == 0) {
      r->version = std::atoi(line.c_str() + 21);
      continue;
    }
    const size_t a = line.find(' ');
    const size_t b = a == std::string::npos ? a : line.find(' ', a + 1);
    if (b == std::string::npos) return *why = "line " + std::to_string(n) + " malformed: " + line, false;
    const std::string id = line.substr(0, b), value = line.substr(b + 1);
    (id.rfind("module ", 0) == 0 ? r->modules : r->abi).push_back({id, value});
  }
  if (r->version < 0) return *why = "no cache_format_version line", false;
  return true;
}

// The value of `name=` in a module line ("" if absent).
std::string field(const std::string& value, const std::string& name) {
  const size_t p = value.find(name + "=");
  if (p == std::string::npos) return "";
  const size_t b = p + name.size() + 1;
  return value.substr(b, value.find(' ', b) - b);
}

// "key 0a1b... -> 2c3d..., entry ...": the fields of two module lines that differ.
std::string what_changed(const std::string& recorded, const std::string& now) {
  std::string s;
  for (const char* f : {"key", "entry", "bytes"})
    if (field(recorded, f) != field(now, f))
      s += (s.empty() ? "" : ", ") + std::string(f) + " " + field(recorded, f) + " -> " + field(now, f);
  return s.empty() ? "recorded `" + recorded + "`, now `" + now + "`" : s;
}

std::string listed(const std::vector<std::string>& items) {
  std::string s;
  for (size_t i = 0; i < items.size() && i < 12; ++i) s += "  " + items[i] + "\n";
  if (items.size() > 12) s += "  ... and " + std::to_string(items.size() - 12) + " more\n";
  return s;
}

}  // namespace

TEST_CASE("golden kernel sources: generate_source of every module, byte for byte", "[golden][codegen]") {
  const fs::path dir = golden_dir() / "source";
  const std::string project_dir = fs::path(SPMVJIT_TEMPLATE_DIR).parent_path().string();
  const bool update = updating();
  std::vector<std::string> problems, rewritten;
  std::set<std::string> expected;
  for (const GoldenModule& m : golden_modules()) {
    expected.insert(m.file);
    const std::string text = generate_source(m.spec).text;
    INFO(m.file);
    CHECK(text.find(project_dir) == std::string::npos);  // no absolute path of this checkout
    std::string golden;
    const bool have = read_text(dir / m.file, &golden);
    if (have && golden == text) continue;
    if (update) {
      write_text(dir / m.file, text);
      rewritten.push_back("source/" + m.file + (have ? " (changed)" : " (new module)"));
    } else {
      problems.push_back(have ? first_difference("source/" + m.file, golden, text)
                              : "source/" + m.file + ": missing (a new module?)");
    }
  }
  if (fs::is_directory(dir))
    for (const auto& e : fs::directory_iterator(dir)) {
      const std::string name = e.path().filename().string();
      if (expected.count(name)) continue;
      if (update) {
        fs::remove(e.path());
        rewritten.push_back("source/" + name + " (removed: no such module)");
      } else {
        problems.push_back("source/" + name + ": stale, no module generates it any more");
      }
    }
  if (!rewritten.empty()) WARN("golden: rewrote\n" << listed(rewritten));
  if (!problems.empty())
    FAIL(problems.size() << " golden kernel source(s) in " << dir.string()
                         << " differ from what generate_source now makes:\n"
                         << listed(problems) << kUpdateHint);
}

// The rule: while the recorded version equals kCacheFormatVersion, (a) the contract files
// spmv_args.h and arrays.h, the key derivation and the entry layout must match the record, and
// (b) a module whose source is unchanged must keep its key and entry bytes. Breaking either needs
// a version bump; SPMVJIT_UPDATE_GOLDEN=1 refuses to paper over it. A template edit alone changes
// the source and with it the key (the source is hashed into it), so old entries can never be taken
// for the new kernel: that is safe and only needs re-recording.
TEST_CASE("golden cache keys and entries: ABI or layout changes bump kCacheFormatVersion",
          "[golden][cache]") {
  const fs::path path = golden_dir() / "cache_entries.txt";
  const bool update = updating();
  const Record now = current_record(golden_modules());
  const std::string text = render(now);
  std::string old_text;
  Record old;
  std::string why;
  const bool have = read_text(path, &old_text);
  if (have && !parse(old_text, &old, &why)) FAIL(path.string() << ": " << why << "\n" << kUpdateHint);
  if (have && old_text == text) return;

  std::vector<std::string> breaks;   // need a version bump
  std::vector<std::string> changes;  // may be re-recorded as they are
  if (!have) {
    changes.push_back("cache_entries.txt: missing");
  } else if (old.version != now.version) {
    changes.push_back("kCacheFormatVersion is " + std::to_string(now.version) +
                      ", the goldens were recorded under " + std::to_string(old.version));
  } else {
    const std::map<std::string, std::string> abi(old.abi.begin(), old.abi.end());
    std::set<std::string> now_abi;
    for (const auto& [id, value] : now.abi) {
      now_abi.insert(id);
      auto it = abi.find(id);
      if (it == abi.end())
        breaks.push_back(id + ": new, recorded nothing");
      else if (it->second != value)
        breaks.push_back(id + ": recorded " + it->second + ", now " + value);
    }
    for (const auto& [id, value] : old.abi)
      if (!now_abi.count(id)) breaks.push_back(id + ": recorded " + value + ", now gone");
    const std::map<std::string, std::string> mods(old.modules.begin(), old.modules.end());
    std::set<std::string> now_mods;
    for (const auto& [id, value] : now.modules) {
      now_mods.insert(id);
      auto it = mods.find(id);
      if (it == mods.end())
        changes.push_back(id + ": new");
      else if (it->second == value)
        continue;
      else if (field(it->second, "source") == field(value, "source"))
        breaks.push_back(id + ": same source, but " + what_changed(it->second, value));
      else
        changes.push_back(id + ": its source changed, and its key with it (safe: no old entry matches it)");
    }
    for (const auto& [id, value] : old.modules)
      if (!now_mods.count(id)) changes.push_back(id + ": stale, no such module any more");
  }
  if (!breaks.empty())
    FAIL(
        "The kernel ABI (templates/contract/spmv_args.h, arrays.h), the cache-key derivation or the "
        "cache-entry layout changed without a kCacheFormatVersion bump (still "
        << now.version << ", as recorded in " << path.string() << "):\n"
        << listed(breaks)
        << "Bump kCacheFormatVersion in codegen/kernel_spec.hpp so that no entry written before is "
           "taken for a new one, then re-record with SPMVJIT_UPDATE_GOLDEN=1 build/tests/spmvjit_tests "
           "\"[golden]\". Re-recording alone does not accept this.");
  if (changes.empty()) changes.push_back("its comments or formatting differ from what the test writes");
  if (update) {
    write_text(path, text);
    WARN("golden: rewrote cache_entries.txt under kCacheFormatVersion " << now.version << ":\n"
                                                                        << listed(changes));
    return;
  }
  FAIL(path.string() << " is out of date:\n" << listed(changes) << kUpdateHint);
}
