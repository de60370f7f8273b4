// The HIP compile-everything check (hip_compile_check.hpp): batched hipRTC programs, since the
// compiler's fixed cost per program (its runtime header, the device libraries) is a third of a
// spec's compile, and CI compiles about 1,700 specs on two cores.
#ifdef SPMVJIT_WITH_HIP
#include "tests/runtime/hip_compile_check.hpp"

#include <algorithm>
#include <catch2/catch.hpp>
#include <chrono>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <map>
#include <sstream>

#include "engine/device_plan.hpp"
#include "engine/formats/format.hpp"
#include "engine/value_codec.hpp"
#include "runtime/cache/kernel_cache.hpp"
#include "runtime/hip/code_object.hpp"
#include "runtime/hip/hip_api.hpp"
#include "runtime/hip/hip_backend.hpp"
#include "tests/test_support.hpp"

namespace spmvjit::test {

std::set<std::string> hip_expected_kernels(const KernelSpec& spec, const std::string& text) {
  const bool runtime_epilogue =
      spec.constants.count("RUNTIME_EPILOGUE") && spec.constants.at("RUNTIME_EPILOGUE");
  std::set<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.find('#') != std::string::npos) continue;  // the macros' own definitions
    if (line.rfind("SPMVJIT_EXPORT_KERNEL(", 0) == 0) {
      const size_t c1 = line.find(','), c2 = line.find(',', c1 + 1);
      std::string entry = line.substr(c1 + 1, c2 - c1 - 1);
      entry.erase(0, entry.find_first_not_of(' '));
      if (runtime_epilogue) {
        out.insert(entry + "_r");
      } else {
        for (int e = 0; e < kEpilogueVariants; ++e) out.insert(entry + "_" + std::to_string(e));
      }
    } else if (line.rfind("extern \"C\" __global__ void ", 0) == 0) {
      const size_t paren = line.find("(const SpmvArgs");
      const size_t start = line.rfind(' ', paren) + 1;
      out.insert(line.substr(start, paren - start));
    }
  }
  return out;
}

std::string hip_isolate_source(const std::string& text, const std::string& prefix) {
  static const char* kIdent = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_";
  std::set<std::string> macros;
  std::string out = "namespace " + prefix + "spec {\n";
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    const size_t hash = line.find_first_not_of(" \t");
    if (hash != std::string::npos && line[hash] == '#') {
      const size_t d = line.find_first_not_of(" \t", hash + 1);
      if (d != std::string::npos && line.compare(d, 6, "define") == 0) {
        const size_t n = line.find_first_not_of(" \t", d + 6);
        if (n != std::string::npos) macros.insert(line.substr(n, line.find_first_not_of(kIdent, n) - n));
      }
    } else if (line.find('#') == std::string::npos) {  // as hip_expected_kernels reads them
      if (line.rfind("SPMVJIT_EXPORT_KERNEL(", 0) == 0) {
        line.insert(line.find_first_not_of(' ', line.find(',') + 1), prefix);
      } else if (line.rfind("extern \"C\" __global__ void ", 0) == 0) {
        line.insert(line.rfind(' ', line.find("(const SpmvArgs")) + 1, prefix);
      }
    }
    out += line + "\n";
  }
  out += "}\n";
  // Reserved names (__device__, __launch_bounds__: hip_clang_runtime.h defines them for clang as
  // hipRTC's built-in header does) stay: undefining one would take hipRTC's own away. clang
  // pastes the runtime again (its guard is undefined) and redefines them identically.
  for (const std::string& m : macros)
    if (m.rfind("__", 0) != 0) out += "#undef " + m + "\n";
  return out;
}

namespace {

// What is wrong with `spec`'s kernels, named `prefix` + entry, in the code object `bin`.
std::string check_kernels(Backend& b, const KernelSpec& spec, const std::string& text,
                          const std::vector<char>& bin, const std::string& prefix, int* kernels) {
  if (bin.empty()) return "empty code object";
  const HipTarget t = parse_hip_target(b.target().target);
  hip::CodeObject co;
  std::string why;
  if (hip::kNvidiaPlatform) {  // PTX: every kernel an .entry
    if (!hip::is_ptx_module(bin, t.str(), &why)) return "PTX: " + why;
    const std::string ptx(bin.data());
    const std::set<std::string> want = hip_expected_kernels(spec, text);
    if (want.size() < 2) return "the source defines only " + std::to_string(want.size()) + " kernels";
    for (const std::string& name : want)
      if (ptx.find(".entry " + prefix + name + "(") == std::string::npos)
        return "no kernel entry " + prefix + name;
    *kernels = int(want.size());
    return "";
  }
  if (!hip::parse_code_object(bin, &co, &why)) return "code object: " + why;
  static const std::map<std::string, int> kMach = {
      {"gfx90a", 0x3f}, {"gfx1030", 0x36}, {"gfx908", 0x30}, {"gfx942", 0x4c}};
  if (kMach.count(t.processor) && co.mach() != kMach.at(t.processor))
    return "e_flags name processor " + std::to_string(co.mach());
  for (const std::string& f : t.features) {
    const int want = f.back() == '+' ? 3 : 2;
    if ((f.rfind("xnack", 0) == 0 ? co.xnack() : co.sramecc()) != want)
      return "feature " + f + " not in e_flags";
  }
  const std::set<std::string> want = hip_expected_kernels(spec, text);
  if (want.size() < 2) return "the source defines only " + std::to_string(want.size()) + " kernels";
  for (const std::string& name : want) {
    const std::string k = prefix + name;
    const hip::CodeObjectSymbol* s = co.find(k);
    if (!s || s->type != 2) return "no kernel symbol " + k;
    hip::KernelDescriptor kd;
    if (!hip::read_kernel_descriptor(bin, k, &kd, &why)) return why;
    if (kd.wave32 != (t.wavefront == 32)) return k + " compiled for the other wavefront size";
    if (kd.kernarg_bytes < sizeof(SpmvArgs)) return k + ": kernarg segment below sizeof(SpmvArgs)";
    if (int(kd.group_segment_bytes) > b.target().shared_bytes) return k + ": static LDS exceeds the target's";
  }
  *kernels = int(want.size());
  return "";
}

// The product's way for one spec: compiled alone into the disk cache, checked from its entry.
std::string check_alone(Backend& b, const KernelSpec& spec, const KernelSource& src, const std::string& dir,
                        int* kernels) {
  CacheOutcome o;
  ensure_cached(b, spec, dir, &o);
  std::vector<char> bin;
  std::string why;
  if (!read_cache_entry(cache_entry_path(dir, o.key), o.key, &bin, &why)) return "cache entry: " + why;
  return check_kernels(b, spec, src.text, bin, "", kernels);
}

std::string batch_prefix(size_t i) { return "b" + std::to_string(i) + "_"; }

}  // namespace

std::vector<HipCompileJob> hip_compile_all(Backend& b, const std::string& dir, ValueType value,
                                           unsigned share, size_t batch, size_t* code_bytes) {
  std::vector<HipCompileJob> jobs;
  for (const KernelSpec& s :
       compile_test_specs(all_kernel_specs(b.target()), b.target().target, compile_share(share),
                          [&](const KernelSpec& s) { return s.value == value; }))
    jobs.push_back({s});
  *code_bytes = 0;
  std::set<std::pair<std::string, int64_t>> firsts;  // (template, value codec)
  std::vector<size_t> batched;
  for (size_t i = 0; i < jobs.size(); ++i) {
    HipCompileJob& j = jobs[i];
    const auto& c = j.spec.constants;
    j.alone =
        firsts.insert({j.spec.template_name, c.count(kValueCodecParam) ? c.at(kValueCodecParam) : -1}).second;
    if (!j.alone) {
      batched.push_back(i);
      continue;
    }
    const auto t0 = std::chrono::steady_clock::now();
    try {
      j.error = check_alone(b, j.spec, generate_source_for(b, j.spec), dir, &j.kernels);
    } catch (const std::exception& e) {
      j.error = e.what();
    }
    j.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  }
  for (size_t begin = 0; begin < batched.size(); begin += batch) {
    const size_t n = std::min(batched.size() - begin, batch);
    std::vector<KernelSource> srcs;
    KernelSource program{"batch.cu", "", {}};
    for (size_t k = 0; k < n; ++k) {
      HipCompileJob& j = jobs[batched[begin + k]];
      srcs.push_back(generate_source_for(b, j.spec));
      if (k == 0) program.options = srcs.back().options;
      if (srcs.back().options != program.options) j.error = "compile options differ within one target";
      program.text += hip_isolate_source(srcs.back().text, batch_prefix(k));
    }
    const auto t0 = std::chrono::steady_clock::now();
    std::vector<char> bin;
    std::string failed;
    try {
      bin = b.compile(program);
    } catch (const std::exception& e) {
      failed = e.what();
    }
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    *code_bytes += bin.size();
    for (size_t k = 0; k < n; ++k) {
      HipCompileJob& j = jobs[batched[begin + k]];
      const KernelSource& src = srcs[k];
      j.seconds = seconds / double(n);
      if (!j.error.empty()) continue;
      try {
        if (!failed.empty()) {  // which spec: compiled alone, it fails with its own log
          b.compile(src);
          j.error = "compiles alone but not beside other specs: " + failed;
          continue;
        }
        j.error = check_kernels(b, j.spec, src.text, bin, batch_prefix(k), &j.kernels);
        if (!j.error.empty()) continue;
        const std::string key = cache_key(j.spec, src, b.compiler_version());
        const std::string path = cache_entry_path(dir, key);
        write_cache_entry(path, key, j.spec.serialize(), bin);
        std::vector<char> back;
        std::string why;
        if (!read_cache_entry(path, key, &back, &why))
          j.error = "cache entry: " + why;
        else if (back != bin)
          j.error = "cache entry reads back different bytes";
      } catch (const std::exception& e) {
        j.error = e.what();
      }
    }
  }
  return jobs;
}

void check_compile_everything(Backend& b, ValueType value, unsigned share, size_t batch) {
  const TempDir dir;
  const auto t0 = std::chrono::steady_clock::now();
  size_t bytes = 0;
  const std::vector<HipCompileJob> jobs = hip_compile_all(b, dir.path(), value, share, batch, &bytes);
  std::map<std::string, std::pair<int, double>> per_format;  // specs, compile seconds
  double compile_s = 0, alone_s = 0;
  int kernels = 0, alone = 0;
  for (const HipCompileJob& j : jobs) {
    INFO(j.spec.serialize() << "\n" << j.error);
    CHECK(j.error == "");
    auto& pf = per_format[j.spec.format];
    ++pf.first;
    pf.second += j.seconds;
    compile_s += j.seconds;
    kernels += j.kernels;
    alone += j.alone;
    if (j.alone) alone_s += j.seconds;
  }
  const double total = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf(
      "hip: %zu %s kernel specs (%d kernels) compiled for %s in %.1f s (%.0f ms each; %d alone through the "
      "cache, %.0f ms each; the rest %zu to a program, code objects %zu KiB)\n",
      jobs.size(), to_string(value), kernels, b.target().target.c_str(), total,
      1e3 * compile_s / double(jobs.size()), alone, 1e3 * alone_s / std::max(alone, 1), batch, bytes >> 10);
  for (const auto& [f, c] : per_format)
    std::printf("  %-18s %3d specs, %5.0f ms each\n", f.c_str(), c.first, 1e3 * c.second / c.first);
  // Every format with GPU kernels and every device-planning module is among them (csr5 only where
  // its tile fits the wavefront).
  // Complex values: the formats that take them, and no device planning (their plans convert on
  // the host).
  for (const Format* f : all_formats())
    if (f->supports(BackendKind::hip) && f->supports_value(value) &&
        !f->kernel_variants(b.target(), value).empty())
      CHECK(per_format.count(f->name()) == 1);
  CHECK(per_format.count("device_plan") == (is_complex(value) ? 0u : 1u));
  CHECK(per_format.count("value_map") == (is_complex(value) ? 0u : 1u));
  int files = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir.path()))
    files += e.path().extension() == ".bin";
  CHECK(files == int(jobs.size()));
}

}  // namespace spmvjit::test
#endif
