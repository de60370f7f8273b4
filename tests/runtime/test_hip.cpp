// HIP backend tests: every GPU kernel spec compiles through hipRTC for gfx90a (CDNA, wavefront
// 64) and gfx1030 (RDNA, wavefront 32) without a device (CI; clang for gfx942: test_hip_clang.cpp), its
// kernels are in the code object and its cache entry round-trips (hip_compile_check.hpp); target parsing,
// argument packing and the no-device paths. Tests that need an AMD GPU are tagged [hip][device] and skip
// without one.
#ifdef SPMVJIT_WITH_HIP
#include <algorithm>
#include <catch2/catch.hpp>
#include <chrono>
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <map>
#include <set>
#include <sstream>

#include "engine/device_plan.hpp"
#include "engine/formats/format.hpp"
#include "engine/gen/generators.hpp"
#include "engine/reference.hpp"
#include "engine/stats.hpp"
#include "engine/value_codec.hpp"
#include "runtime/cache/kernel_cache.hpp"
#include "runtime/device_buffer.hpp"
#include "runtime/hip/code_object.hpp"
#include "runtime/hip/hip_api.hpp"
#include "runtime/hip/hip_backend.hpp"
#include "spmvjit/spmvjit.h"
#include "tests/runtime/hip_compile_check.hpp"
#include "tests/test_support.hpp"

using namespace spmvjit;

namespace {

bool have_hiprtc() { return hip_rtc_loaded(); }

// Tests of AMD targets (gfx): a build for HIP's NVIDIA platform compiles for sm_NN instead.
#define SPMVJIT_AMD_PLATFORM_ONLY()                                                             \
  do {                                                                                          \
    if (hip::kNvidiaPlatform) SPMVJIT_SKIP("AMD targets: this build is HIP's NVIDIA platform"); \
  } while (0)
// Tests of the NVIDIA platform build.
#define SPMVJIT_NVIDIA_PLATFORM_ONLY()                                                              \
  do {                                                                                              \
    if (!hip::kNvidiaPlatform) SPMVJIT_SKIP("HIP's NVIDIA platform (SPMVJIT_HIP_PLATFORM=nvidia)"); \
  } while (0)
// A target this build's hipRTC compiles for.
const char* native_compile_target() { return hip::kNvidiaPlatform ? "sm_90" : "gfx90a"; }

template <class F>
spmv_status_t status_of(F&& f, std::string* message = nullptr) {
  try {
    f();
  } catch (const Error& e) {
    if (message) *message = e.what();
    return e.status();
  }
  return SPMV_STATUS_SUCCESS;
}

// A host CSR as the C API takes it.
template <class I, class V>
spmv_csr_t host_view(const HostCsr<I, V>& a) {
  spmv_csr_t d{};
  d.rows = a.rows, d.cols = a.cols, d.nnz = a.nnz();
  d.row_ptr = a.row_ptr.data(), d.col_idx = a.col_idx.data(), d.values = a.val.data();
  d.index_type = sizeof(I) == 4 ? SPMV_INDEX_INT32 : SPMV_INDEX_INT64;
  d.value_type = sizeof(V) == 4 ? SPMV_VALUE_FLOAT : SPMV_VALUE_DOUBLE;
  d.index_base = 0;
  d.memory = SPMV_MEMORY_HOST;
  return d;
}

}  // namespace

TEST_CASE("hip: target strings", "[hip]") {
  CHECK(parse_hip_target("gfx90a").str() == "gfx90a");
  CHECK(parse_hip_target("gfx90a").wavefront == 64);
  CHECK(parse_hip_target("gfx942").wavefront == 64);
  CHECK(parse_hip_target("gfx1030").wavefront == 32);
  CHECK(parse_hip_target("gfx1100").wavefront == 32);
  CHECK(parse_hip_target("gfx906").wavefront == 64);
  // Features are kept, sorted: one target, one cache key, whatever the order given.
  CHECK(parse_hip_target("gfx90a:sramecc+:xnack-").str() == "gfx90a:sramecc+:xnack-");
  CHECK(parse_hip_target("gfx90a:xnack-:sramecc+").str() == "gfx90a:sramecc+:xnack-");
  CHECK(parse_hip_target("gfx942:xnack+").features == std::vector<std::string>{"xnack+"});
  CHECK(parse_hip_target("gfx1010:xnack-").wavefront == 32);
  // HIP's NVIDIA platform: sm_NN, warps of 32, no features (either build parses them; only the
  // NVIDIA platform's compiles for them).
  CHECK(parse_hip_target("sm_90").str() == "sm_90");
  CHECK(parse_hip_target("sm_90").wavefront == 32);
  CHECK(parse_hip_target("sm_100").features.empty());
  for (const char* bad : {"",
                          "gfx",
                          "gfx9",
                          "gfx90",
                          "gfx90A",
                          "gfx12345",
                          "sm_9",
                          "sm_090",
                          "sm_90a",
                          "sm_90:xnack+",
                          "sm_1000",
                          "gfx090a",
                          "GFX90a",
                          "gfx90a:",
                          "gfx90a:xnack",
                          "gfx90a:xnack*",
                          "gfx90a:foo+",
                          "gfx90a:xnack+:xnack-",
                          "gfx1030:xnack+",
                          "gfx1030:sramecc-",
                          "gfx900:sramecc+",
                          "gfx90a::xnack+"}) {
    std::string msg;
    INFO(bad);
    CHECK(status_of([&] { parse_hip_target(bad); }, &msg) == SPMV_STATUS_INVALID_VALUE);
    CHECK(msg.find("gfx90a:sramecc+:xnack-") != std::string::npos);  // says what is expected
  }
}

TEST_CASE("hip: the kernel argument buffer is the SpmvArgs block at offset 0", "[hip]") {
  SpmvArgs a{};
  for (int i = 0; i < kMaxArrays; ++i) {
    a.a[i] = reinterpret_cast<const void*>(uintptr_t(0x1000 + i));
    a.n[i] = 1000 + i;
  }
  a.x = reinterpret_cast<const void*>(uintptr_t(0xabc0));
  a.y = reinterpret_cast<void*>(uintptr_t(0xdef0));
  a.alpha = 1.5, a.beta = -2.0, a.rows = 7, a.cols = 9;
  a.alpha_im = 0.25, a.beta_im = -0.5;
  a.scratch = reinterpret_cast<void*>(uintptr_t(0x5150));
  a.values_table = reinterpret_cast<const void*>(uintptr_t(0x7ab1e));
  const HipLaunchArgs p(a);
  // hipModuleLaunchKernel's `extra`: buffer pointer, size, end.
  CHECK(p.config[0] == HIP_LAUNCH_PARAM_BUFFER_POINTER);
  CHECK(p.config[1] == static_cast<const void*>(p.bytes));
  CHECK(p.config[2] == HIP_LAUNCH_PARAM_BUFFER_SIZE);
  CHECK(p.config[3] == static_cast<const void*>(&p.size));
  CHECK(p.config[4] == HIP_LAUNCH_PARAM_END);
  CHECK(p.size == sizeof(SpmvArgs));
  CHECK(p.size == 240);
  CHECK(reinterpret_cast<uintptr_t>(p.bytes) % 8 == 0);
  CHECK(std::memcmp(p.bytes, &a, sizeof a) == 0);
  // The kernels' view of the block (templates/contract/spmv_args.h): fields at their offsets.
  SpmvArgs back;
  std::memcpy(&back, p.bytes, sizeof back);
  CHECK(back.n[3] == 1003);
  CHECK(back.alpha == 1.5);
  CHECK(back.values_table == a.values_table);
  CHECK(offsetof(SpmvArgs, x) == 128);
  CHECK(offsetof(SpmvArgs, alpha) == 144);
  CHECK(offsetof(SpmvArgs, values_table) == 184);
  CHECK(offsetof(SpmvArgs, layout) == 216);
  // Complex values' imaginary parts, after everything the real kernels read.
  CHECK(offsetof(SpmvArgs, alpha_im) == 224);
  CHECK(offsetof(SpmvArgs, beta_im) == 232);
  CHECK(back.alpha_im == 0.25);
  CHECK(back.beta_im == -0.5);
}

TEST_CASE("hip: without a device, plans report NO_DEVICE clearly", "[hip]") {
  if (hip_runtime_loaded()) {
    WARN("a HIP device is present: the no-device path is not exercised here");
    return;
  }
  std::string why;
  CHECK_FALSE(hip_runtime_loaded(&why));
  CHECK(why.rfind("no HIP device", 0) == 0);
  CHECK_FALSE(hip_available(0));
  CHECK_FALSE(backend_available(BackendKind::hip, 0));
  std::string msg;
  CHECK(status_of([] { hip_backend(0); }, &msg) == SPMV_STATUS_NO_DEVICE);
  CHECK(msg.rfind("no HIP device", 0) == 0);
  const auto a = generate_matrix("poisson2d:10");
  const spmv_csr_t d = host_view(a);
  spmv_options_t o;
  spmv_options_init(&o);
  o.backend = SPMV_BACKEND_HIP;
  spmv_plan_t p = nullptr;
  CHECK(spmv_plan(&p, &d, &o) == SPMV_STATUS_NO_DEVICE);
  CHECK(p == nullptr);
  CHECK(std::string(spmv_last_error()).find("no HIP device") != std::string::npos);
  // Warmup for the device ("native") needs one; a named target does not (below).
  CHECK(spmv_warmup(SPMV_BACKEND_HIP, nullptr, "", nullptr) == SPMV_STATUS_NO_DEVICE);
}

TEST_CASE("hip: missing libraries are reported with what was tried", "[hip]") {
  const std::string rt = hip::probe_runtime({"libspmvjit-no-such-hip.so.5"});
  CHECK(rt.rfind("no HIP device: cannot load the HIP runtime", 0) == 0);
  CHECK(rt.find("libspmvjit-no-such-hip.so.5") != std::string::npos);
  const std::string rtc = hip::probe_rtc({"libspmvjit-no-such-hiprtc.so.5", "libspmvjit-nor-this.so"});
  CHECK(rtc.find("hipRTC not found") != std::string::npos);
  CHECK(rtc.find("libspmvjit-nor-this.so") != std::string::npos);
  CHECK(rtc.find("libamdhip64-dev") != std::string::npos);
  // A library without the entry points is named with what it lacks.
  const std::string libc = hip::probe_rtc({"libc.so.6"});
  CHECK(libc.find("libc.so.6 lacks hiprtcVersion") != std::string::npos);
  // The sonames follow the headers' HIP major version.
  CHECK(hip::runtime_candidates().back() == "libamdhip64.so." + std::to_string(hip::kHipMajor));
}

TEST_CASE("hip: compiler-only backend facts and failures", "[hip]") {
  SPMVJIT_AMD_PLATFORM_ONLY();
  if (!have_hiprtc()) {
    SPMVJIT_SKIP("hipRTC not found");
  }
  Backend& b = hip_compiler("gfx90a:sramecc+:xnack-");
  CHECK(&b == &hip_compiler("gfx90a:xnack-:sramecc+"));
  CHECK(b.kind() == BackendKind::hip);
  CHECK(b.target().target == "gfx90a:sramecc+:xnack-");
  CHECK(b.target().warp_size == 64);
  CHECK(b.target().shared_bytes == 65536);
  CHECK(hip_compiler("gfx1030").target().warp_size == 32);
  CHECK(b.compiler_version().find("hiprtc") != std::string::npos);
  CHECK(b.compiler_version().find("gfx90a:sramecc+:xnack-") != std::string::npos);
  CHECK(b.compiler_version() != hip_compiler("gfx90a").compiler_version());
  const auto opts = b.compile_options(KernelSpec{});
  CHECK(std::find(opts.begin(), opts.end(), "--offload-arch=gfx90a:sramecc+:xnack-") != opts.end());
  for (const auto& o : opts) CHECK(o.find("fast") == std::string::npos);
  // Targets: malformed -> INVALID_VALUE; well-formed but unknown to this hipRTC -> UNSUPPORTED,
  // refused before hipRTC sees it (ROCm 5.2's aborts the process on one).
  // An NVIDIA target is for a build of HIP's NVIDIA platform.
  std::string msg;
  CHECK(status_of([] { hip_compiler("sm_90"); }, &msg) == SPMV_STATUS_UNSUPPORTED);
  CHECK(msg.find("compiles for AMD GPUs (gfxNNN), not sm_90") != std::string::npos);
  CHECK(spmv_warmup(SPMV_BACKEND_HIP, "gfx90a:bogus+", "", nullptr) == SPMV_STATUS_INVALID_VALUE);
  std::string comgr;
  const auto& known = hip::comgr_processors(&comgr);
  INFO(comgr);
  CHECK(std::find(known.begin(), known.end(), "gfx90a") != known.end());
  CHECK(std::find(known.begin(), known.end(), "gfx1030") != known.end());
  if (std::find(known.begin(), known.end(), "gfx9ff") == known.end()) {
    CHECK(status_of([] { hip_compiler("gfx9ff"); }, &msg) == SPMV_STATUS_UNSUPPORTED);
    CHECK(msg.find("cannot compile for gfx9ff") != std::string::npos);
  }
  // The compile log travels with the error.
  KernelSource bad{"bad.cu", "extern \"C\" __global__ void k() { undeclared_thing += 1; }\n",
                   b.compile_options(KernelSpec{})};
  CHECK(status_of([&] { b.compile(bad); }, &msg) == SPMV_STATUS_COMPILE_FAILED);
  CHECK(msg.find("undeclared_thing") != std::string::npos);
  // A spec whose wavefront is not the target's does not compile (the prelude checks it).
  KernelSpec wrong = spec_for(b.target(), "csr", "csr", IndexType::i32, ValueType::f64);
  wrong.warp_size = 32;
  CHECK(status_of([&] { b.compile(generate_source_for(b, wrong)); }, &msg) == SPMV_STATUS_COMPILE_FAILED);
  CHECK(msg.find("wavefront size") != std::string::npos);
  // No device behind it.
  CHECK(status_of([&] { DeviceBuffer d(b, 16); }) == SPMV_STATUS_NO_DEVICE);
  CHECK(status_of([&] { b.load({'x'}, "k"); }) == SPMV_STATUS_NO_DEVICE);
  CHECK(status_of([&] { b.make_executor(1); }) == SPMV_STATUS_NO_DEVICE);
}

TEST_CASE("hip: the code-object reader refuses what is not an AMDGPU image", "[hip]") {
  hip::CodeObject co;
  std::string why;
  CHECK_FALSE(hip::parse_code_object({}, &co, &why));
  CHECK_FALSE(hip::parse_code_object({'n', 'o', 't', ' ', 'e', 'l', 'f'}, &co, &why));
  CHECK(why == "not an ELF image");
  // This test binary: an ELF, but for x86-64.
  std::ifstream self("/proc/self/exe", std::ios::binary);
  std::vector<char> exe((std::istreambuf_iterator<char>(self)), std::istreambuf_iterator<char>());
  REQUIRE(exe.size() > 64);
  CHECK_FALSE(hip::parse_code_object(exe, &co, &why));
  CHECK(why.find("not AMDGPU") != std::string::npos);
  if (!have_hiprtc() || hip::kNvidiaPlatform) return;
  Backend& b = hip_compiler("gfx90a");
  const std::vector<char> bin = b.compile(generate_source_for(
      b, spec_for(b.target(), "csr", "csr", IndexType::i32, ValueType::f64, {{"RUNTIME_EPILOGUE", 1}})));
  REQUIRE(hip::parse_code_object(bin, &co, &why));
  CHECK(co.find("spmvjit_part_r") != nullptr);
  CHECK(co.find("spmvjit_part_0") == nullptr);
  // Every truncation is refused or read within bounds, never past the end.
  for (size_t n = 0; n < bin.size(); n += 97) {
    std::vector<char> cut(bin.begin(), bin.begin() + n);
    hip::KernelDescriptor kd;
    hip::parse_code_object(cut, &co, &why);
    hip::read_kernel_descriptor(cut, "spmvjit_part_r", &kd, &why);
  }
}

namespace {

// One target and value type per test case, so ctest runs them side by side: hipRTC compiles one
// program at a time per process (runtime/hip/hip_backend.cpp says why). Twelve specs to a program
// take about two thirds of the time of twelve programs (hip_compile_check.cpp).
constexpr size_t kSpecsPerProgram = 12;

void compile_everything(const char* target, ValueType value, unsigned share) {
  if (hip::kNvidiaPlatform != (std::string(target).rfind("sm_", 0) == 0)) {
    SPMVJIT_SKIP("not a target of this build's HIP platform");
  }
  if (!have_hiprtc()) {
    SPMVJIT_SKIP("hipRTC not found");
  }
  test::check_compile_everything(hip_compiler(target), value, share, kSpecsPerProgram);
}

}  // namespace

TEST_CASE("hip: a spec's source shares a program with others only renamed and cleaned up after", "[hip]") {
  if (!have_hiprtc()) {
    SPMVJIT_SKIP("hipRTC not found");
  }
  Backend& b = hip_compiler(native_compile_target());
  std::set<std::string> seen;  // one spec of each template: the rewrite reads lines, not formats
  for (const KernelSpec& spec : all_kernel_specs(b.target())) {
    if (!seen.insert(spec.template_name).second) continue;
    const std::string text = generate_source_for(b, spec).text;
    const std::string iso = test::hip_isolate_source(text, "b7_");
    INFO(spec.serialize());
    std::set<std::string> renamed;
    for (const std::string& k : test::hip_expected_kernels(spec, text)) renamed.insert("b7_" + k);
    REQUIRE(renamed.size() >= 2);
    CHECK(test::hip_expected_kernels(spec, iso) == renamed);
    CHECK(iso.rfind("namespace b7_spec {\n", 0) == 0);
    for (const char* m : {"SPMVJIT_INDEX_T", "SPMVJIT_VALUE_T", "SPMVJIT_WARP", "SPMVJIT_EXPORT_KERNEL"})
      CHECK(iso.find(std::string("\n#undef ") + m + "\n") != std::string::npos);
    // Nothing but the entry names changes inside.
    std::string back = iso.substr(iso.find('\n') + 1, iso.find("\n}\n#undef ") - iso.find('\n'));
    for (size_t p; (p = back.find("b7_")) != std::string::npos;) back.erase(p, 3);
    CHECK(back == text);
  }
  CHECK(seen.size() > 20);
}

TEST_CASE("hip: every GPU kernel spec compiles through hipRTC: gfx90a:sramecc+:xnack-, double", "[hip]") {
  compile_everything("gfx90a:sramecc+:xnack-", ValueType::f64, 1);
}
TEST_CASE("hip: a share of the GPU kernel specs compiles through hipRTC: gfx90a:sramecc+:xnack-, float",
          "[hip]") {
  compile_everything("gfx90a:sramecc+:xnack-", ValueType::f32, 3);
}
// The other targets and value types compile a share of the specs (test::compile_share): gfx90a's
// double compiles every one.
TEST_CASE("hip: a share of the GPU kernel specs compiles through hipRTC: gfx1030, double", "[hip]") {
  compile_everything("gfx1030", ValueType::f64, 6);
}
TEST_CASE("hip: a share of the GPU kernel specs compiles through hipRTC: gfx1030, float", "[hip]") {
  compile_everything("gfx1030", ValueType::f32, 6);
}

// Complex values: the formats that take them (plain values only).
TEST_CASE("hip: a share of the GPU kernel specs compiles through hipRTC: gfx90a:sramecc+:xnack-, complex",
          "[hip][complex]") {
  compile_everything("gfx90a:sramecc+:xnack-", ValueType::c32, 3);
  compile_everything("gfx90a:sramecc+:xnack-", ValueType::c64, 2);
}
TEST_CASE("hip: a share of the GPU kernel specs compiles through hipRTC: gfx1030, complex",
          "[hip][complex]") {
  compile_everything("gfx1030", ValueType::c64, 4);
}

// HIP's NVIDIA platform: hipRTC is NVRTC, the code is PTX for the device's architecture.
TEST_CASE("hip: a share of the GPU kernel specs compiles through hipRTC over NVRTC: sm_90, double", "[hip]") {
  compile_everything("sm_90", ValueType::f64, 4);
}
TEST_CASE("hip: a share of the GPU kernel specs compiles through hipRTC over NVRTC: sm_90, float", "[hip]") {
  compile_everything("sm_90", ValueType::f32, 6);
}

TEST_CASE("hip: the NVIDIA platform build compiles PTX for sm_NN and refuses gfx targets", "[hip]") {
  SPMVJIT_NVIDIA_PLATFORM_ONLY();
  Backend& b = hip_compiler("sm_90");
  CHECK(b.target().target == "sm_90");
  CHECK(b.target().warp_size == 32);
  CHECK(b.compiler_version().find("(NVRTC) PTX for sm_90") != std::string::npos);
  const auto opts = b.compile_options(KernelSpec{});
  CHECK(std::find(opts.begin(), opts.end(), "--gpu-architecture=compute_90") != opts.end());
  CHECK(std::find(opts.begin(), opts.end(), "-D__HIP_PLATFORM_NVIDIA__=1") != opts.end());
  std::string msg;
  CHECK(status_of([] { hip_compiler("gfx90a"); }, &msg) == SPMV_STATUS_UNSUPPORTED);
  CHECK(msg.find("compiles for NVIDIA GPUs") != std::string::npos);
  CHECK(status_of([] { hip_compiler("sm_9"); }) == SPMV_STATUS_INVALID_VALUE);
  const std::vector<char> bin = b.compile(generate_source_for(
      b, spec_for(b.target(), "csr", "csr", IndexType::i32, ValueType::f64, {{"RUNTIME_EPILOGUE", 1}})));
  std::string why;
  CHECK(hip::is_ptx_module(bin, "sm_90", &why));
  CHECK_FALSE(hip::is_ptx_module(bin, "sm_80", &why));
  CHECK(why == "compiled for sm_90, not sm_80");
  CHECK_FALSE(hip::is_ptx_module({'x'}, "sm_90", &why));
  // The compile log travels with the error.
  KernelSource bad{"bad.cu", "extern \"C\" __global__ void k() { undeclared_thing += 1; }\n",
                   b.compile_options(KernelSpec{})};
  CHECK(status_of([&] { b.compile(bad); }, &msg) == SPMV_STATUS_COMPILE_FAILED);
  CHECK(msg.find("undeclared_thing") != std::string::npos);
}

TEST_CASE("hip: csr5's kernel compiles for a wavefront of 64 though no plan takes it yet", "[hip]") {
  SPMVJIT_AMD_PLATFORM_ONLY();
  if (!have_hiprtc()) {
    SPMVJIT_SKIP("hipRTC not found");
  }
  Backend& b = hip_compiler("gfx90a");
  // The tile is one wavefront; the descriptors and device build hold 32 lanes (csr5.h).
  CHECK(find_format("csr5")->kernel_variants(b.target(), ValueType::f64).empty());
  const KernelSpec spec =
      spec_for(b.target(), "csr5", "csr5", IndexType::i32, ValueType::f64, {{"OMEGA", 64}, {"SIGMA", 16}});
  const std::vector<char> bin = b.compile(generate_source_for(b, spec));
  hip::CodeObject co;
  std::string why;
  REQUIRE(hip::parse_code_object(bin, &co, &why));
  CHECK(co.find("spmvjit_part_3") != nullptr);
  CHECK(co.find("spmvjit_fixup_0") != nullptr);
}

TEST_CASE("hip: warmup for a named target enumerates every spec and finds them on disk", "[hip]") {
  SPMVJIT_AMD_PLATFORM_ONLY();
  if (!have_hiprtc()) {
    SPMVJIT_SKIP("hipRTC not found");
  }
  // The entries the compile tests write, under the keys they compute, with a stand-in payload:
  // warmup must look every spec up under the same key and compile nothing.
  const test::TempDir dir;
  for (const char* target : {"gfx90a:sramecc+:xnack-", "gfx1030"}) {
    Backend& b = hip_compiler(target);
    std::set<std::string> keys;
    for (const KernelSpec& s : all_kernel_specs(b.target())) {
      const KernelSource src = generate_source_for(b, s);
      const std::string key = cache_key(s, src, b.compiler_version());
      keys.insert(key);
      write_cache_entry(cache_entry_path(dir.path(), key), key, s.serialize(), {'c', 'o'});
    }
    int count = -1;
    // The features in another order are the same target.
    const std::string as_given = std::string(target) == "gfx1030" ? "gfx1030" : "gfx90a:xnack-:sramecc+";
    REQUIRE(spmv_warmup(SPMV_BACKEND_HIP, as_given.c_str(), dir.path().c_str(), &count) ==
            SPMV_STATUS_SUCCESS);
    CHECK(count == int(all_kernel_specs(b.target()).size()));
    CHECK(keys.size() == all_kernel_specs(b.target()).size());  // no two specs share a key
    std::printf("hip: warmup %s: %d kernel specs\n", target, count);
  }
  int files = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir.path()))
    files += e.path().extension() == ".bin";
  CHECK(files == int(all_kernel_specs(hip_compiler("gfx90a:sramecc+:xnack-").target()).size() +
                     all_kernel_specs(hip_compiler("gfx1030").target()).size()));
  int count = -1;
  CHECK(spmv_warmup(SPMV_BACKEND_HIP, "gfx90", dir.path().c_str(), &count) == SPMV_STATUS_INVALID_VALUE);
  // A processor neither hipRTC nor clang knows: refused, never handed to hipRTC (ROCm 5.2's aborts
  // the process on one). gfx942, which ROCm 5.2 does not know, goes to clang (test_hip_clang.cpp).
  CHECK(spmv_warmup(SPMV_BACKEND_HIP, "gfx9ff", dir.path().c_str(), &count) == SPMV_STATUS_UNSUPPORTED);
  CHECK(std::string(spmv_last_error()).find("cannot compile for gfx9ff") != std::string::npos);
}

TEST_CASE("hip: the HIP prelude's shared part is prelude_cuda.h's", "[hip]") {
  const std::string marker = "// E bit 0:";
  const std::string cuda = find_template("gpu/prelude_cuda.h"), hip = find_template("gpu/prelude_hip.h");
  REQUIRE(cuda.find(marker) != std::string::npos);
  REQUIRE(hip.find(marker) != std::string::npos);
  CHECK(cuda.substr(cuda.find(marker)) == hip.substr(hip.find(marker)));
}

// ---- with an AMD GPU ----
namespace {

// Four SpMVs covering the epilogues on device x and y (y with canaries past the end); "" or what
// went wrong.
template <class I, class V>
std::string check_on_device(spmv_plan_t plan, const HostCsr<I, V>& a, uint64_t seed) {
  constexpr int kCanaries = 5;
  Backend& b = hip_backend(0);
  const DeviceBuffer dx(b, size_t(std::max<int64_t>(a.cols, 1)) * sizeof(V)),
      dy(b, size_t(a.rows + kCanaries) * sizeof(V));
  const double alphas[] = {1.5, 1.0, -0.5, 1.0}, betas[] = {0.0, 0.0, 0.75, -1.0};
  for (int c = 0; c < 4; ++c) {
    const V al = V(alphas[c]), be = V(betas[c]);
    const auto x = random_vector<V>(a.cols, seed * 8 + 2 * c);
    std::vector<V> y = random_vector<V>(a.rows + kCanaries, seed * 8 + 2 * c + 1);
    if (be == 0) std::fill(y.begin(), y.begin() + a.rows, std::numeric_limits<V>::quiet_NaN());
    std::fill(y.begin() + a.rows, y.end(), V(12345));
    const auto y0 = y;
    b.upload(dx.get(), x.data(), x.size() * sizeof(V));
    b.upload(dy.get(), y.data(), y.size() * sizeof(V));
    const std::string what =
        "alpha " + std::to_string(alphas[c]) + ", beta " + std::to_string(betas[c]) + ": ";
    if (spmv_execute(plan, &al, dx.get(), &be, dy.get(), nullptr) != SPMV_STATUS_SUCCESS)
      return what + "execute failed: " + spmv_last_error();
    b.synchronize(nullptr);
    b.download(y.data(), dy.get(), y.size() * sizeof(V));
    const std::string bad =
        check_spmv(a, reference_spmv(a, double(al), x.data(), double(be), y0.data()), y.data());
    if (!bad.empty()) return what + bad;
    for (int k = 0; k < kCanaries; ++k)
      if (y[size_t(a.rows + k)] != V(12345)) return what + "wrote past the end of y";
  }
  return "";
}

template <class I, class V>
void every_format_on_device() {
  if (!hip_available(0)) {
    SPMVJIT_SKIP("no HIP device");
  }
  int planned = 0, refused = 0;
  uint64_t seed = 700;
  for (const char* m : {"poisson2d:40", "random:3000:1:40", "powerlaw:5000", "short:5000:2", "dense:50",
                        "random:37:1:40:1000", "powerlaw:5000@ones", "random:3000:1:40@few"}) {
    const HostCsr<I, V> a = generate_matrix(m, 5).template cast<I, V>();
    const spmv_csr_t d = host_view(a);
    std::vector<std::string> names = {"auto"};
    for (const Format* f : all_formats())
      if (f->supports(BackendKind::hip)) names.push_back(f->name());
    for (const std::string& name : names) {
      INFO("format " << name << ", matrix " << m);
      spmv_options_t o;
      spmv_options_init(&o);
      o.backend = SPMV_BACKEND_HIP;
      o.format = name.c_str();
      spmv_plan_t p = nullptr;
      const spmv_status_t st = spmv_plan(&p, &d, &o);
      if (st == SPMV_STATUS_UNSUPPORTED && name != "auto") {  // e.g. csr5 on a wavefront of 64
        ++refused;
        continue;
      }
      INFO(spmv_last_error());
      REQUIRE(st == SPMV_STATUS_SUCCESS);
      ++planned;
      const std::string bad = check_on_device(p, a, ++seed);
      spmv_plan_destroy(p);
      CHECK(bad == "");
    }
  }
  std::printf("hip device check: %d plans verified, %d refused as unsupported\n", planned, refused);
}

}  // namespace

TEST_CASE("hip device: every format int32 double", "[hip][device]") {
  every_format_on_device<int32_t, double>();
}
TEST_CASE("hip device: every format int64 float", "[hip][device]") {
  every_format_on_device<int64_t, float>();
}

TEST_CASE("hip device: target facts, memory and bad binaries", "[hip][device]") {
  if (!hip_available(0)) {
    SPMVJIT_SKIP("no HIP device");
  }
  Backend& b = hip_backend(0);
  const HipTarget t = parse_hip_target(b.target().target);  // gcnArchName parses
  CHECK(b.target().warp_size == t.wavefront);
  CHECK(b.target().sm_count > 0);
  CHECK(b.target().shared_bytes >= 32 << 10);
  std::string msg;
  CHECK(status_of([&] { DeviceBuffer huge(b, size_t(1) << 52); }, &msg) == SPMV_STATUS_OUT_OF_MEMORY);
  // A binary that is no code object is refused before the runtime sees it (the cache recompiles).
  CHECK(status_of([&] { b.load({'n', 'o', 't', ' ', 'e', 'l', 'f'}, "bad"); }) == SPMV_STATUS_COMPILE_FAILED);
}

#endif  // SPMVJIT_WITH_HIP
