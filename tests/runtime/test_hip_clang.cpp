// The HIP backend's second compiler: clang 19 through the LLVM plugin, for AMD processors hipRTC
// does not know (gfx942 with Debian's ROCm 5.2). Every GPU kernel spec compiles for gfx942; for a
// processor both compilers know, clang's code objects hold the kernels hipRTC's do, for the same
// processor, features and wavefront; the compiler is chosen and refused with reasons.
#if defined(SPMVJIT_WITH_HIP) && defined(SPMVJIT_WITH_CPU)
#include <algorithm>
#include <catch2/catch.hpp>
#include <set>
#include <string>

#include "codegen/kernel_spec.hpp"
#include "engine/device_plan.hpp"
#include "runtime/cache/kernel_cache.hpp"
#include "runtime/cpu/llvm_plugin.hpp"
#include "runtime/hip/code_object.hpp"
#include "runtime/hip/hip_api.hpp"
#include "runtime/hip/hip_backend.hpp"
#include "spmvjit/spmvjit.h"
#include "tests/runtime/hip_compile_check.hpp"
#include "tests/test_support.hpp"

using namespace spmvjit;

namespace {

// The plugin was built with lld and LLVM's AMDGPU target (CMakeLists.txt says when).
bool have_clang_amdgpu() {
  const LlvmPlugin& p = llvm_plugin();
  return p.api && p.api->compile_amdgpu;
}

#define SPMVJIT_NEEDS_CLANG_AMDGPU()                                                               \
  do {                                                                                             \
    if (hip::kNvidiaPlatform) SPMVJIT_SKIP("AMD targets: this build is HIP's NVIDIA platform");    \
    if (!have_clang_amdgpu()) SPMVJIT_SKIP("the LLVM plugin has no AMDGPU code objects (no lld)"); \
  } while (0)

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

bool hiprtc_knows(const std::string& processor) {
  if (!hip_rtc_loaded()) return false;
  const auto& known = hip::comgr_processors();
  return std::find(known.begin(), known.end(), processor) != known.end();
}

std::set<std::string> kernel_names(const hip::CodeObject& co) {
  std::set<std::string> out;
  for (const hip::CodeObjectSymbol& s : co.symbols)
    if (s.type == 2 && co.find(s.name + ".kd")) out.insert(s.name);
  return out;
}

}  // namespace

// MI300 (CDNA 3): hipRTC of ROCm 5.2 does not know it; clang compiles a share of the specs
// (test::compile_share; hipRTC's gfx90a compiles every one), twelve to a program as with hipRTC.
TEST_CASE("hip: a share of the GPU kernel specs compiles through clang: gfx942:sramecc+:xnack-, double",
          "[hip]") {
  SPMVJIT_NEEDS_CLANG_AMDGPU();
  Backend& b = hip_compiler("gfx942:sramecc+:xnack-");
  if (!hiprtc_knows("gfx942"))
    CHECK(b.compiler_version().find("+ lld, code object for gfx942") != std::string::npos);
  test::check_compile_everything(b, ValueType::f64, 4, 12);
}
TEST_CASE("hip: a share of the GPU kernel specs compiles through clang: gfx942, float", "[hip]") {
  SPMVJIT_NEEDS_CLANG_AMDGPU();
  auto b = hip_compiler_with("gfx942", HipCompilerKind::clang);
  test::check_compile_everything(*b, ValueType::f32, 6, 12);
}

// Complex values through clang's AMDGPU builtins (hip_clang_runtime.h): shuffles and atomic adds
// part by part.
TEST_CASE("hip: a share of the GPU kernel specs compiles through clang: gfx942, complex", "[hip][complex]") {
  SPMVJIT_NEEDS_CLANG_AMDGPU();
  auto b = hip_compiler_with("gfx942", HipCompilerKind::clang);
  test::check_compile_everything(*b, ValueType::c32, 4, 12);
  test::check_compile_everything(*b, ValueType::c64, 4, 12);
}

TEST_CASE("hip: clang's and hipRTC's code objects agree on kernels, processor and wavefront", "[hip]") {
  SPMVJIT_NEEDS_CLANG_AMDGPU();
  for (const char* target : {"gfx90a:sramecc+:xnack-", "gfx1030"}) {
    if (!hiprtc_knows(parse_hip_target(target).processor)) continue;
    auto rtc = hip_compiler_with(target, HipCompilerKind::hiprtc);
    auto clang = hip_compiler_with(target, HipCompilerKind::clang);
    CHECK(rtc->compiler_version() != clang->compiler_version());  // different cache keys
    std::set<std::string> seen;                                   // one spec per template
    for (const KernelSpec& spec : all_kernel_specs(rtc->target())) {
      if (!seen.insert(spec.template_name).second) continue;
      INFO(target << " " << spec.serialize());
      const KernelSource a = generate_source_for(*rtc, spec), c = generate_source_for(*clang, spec);
      CHECK(a.text == c.text);  // one source; the options differ
      CHECK(cache_key(spec, a, rtc->compiler_version()) != cache_key(spec, c, clang->compiler_version()));
      hip::CodeObject x, y;
      std::string why;
      REQUIRE(hip::parse_code_object(rtc->compile(a), &x, &why));
      const std::vector<char> bin = clang->compile(c);
      REQUIRE(hip::parse_code_object(bin, &y, &why));
      CHECK(x.mach() == y.mach());
      CHECK(x.xnack() == y.xnack());
      CHECK(x.sramecc() == y.sramecc());
      const std::set<std::string> names = kernel_names(y);
      CHECK(kernel_names(x) == names);
      CHECK(names.count("spmvjit_scale_y") == 1);
      for (const std::string& k : names) {
        hip::KernelDescriptor kd;
        REQUIRE(hip::read_kernel_descriptor(bin, k, &kd, &why));
        CHECK(kd.wave32 == (rtc->target().warp_size == 32));
        CHECK(kd.group_segment_bytes <= uint32_t(rtc->target().shared_bytes));
        CHECK(kd.kernarg_bytes >= sizeof(SpmvArgs));
      }
    }
    CHECK(seen.size() > 20);
  }
}

TEST_CASE("hip: the compiler is chosen per processor and refused with reasons", "[hip]") {
  SPMVJIT_NEEDS_CLANG_AMDGPU();
  const std::string clang_version = llvm_plugin().api->clang_version;
  // Automatic: hipRTC where it knows the processor, clang elsewhere.
  if (hiprtc_knows("gfx90a")) CHECK(hip_compiler("gfx90a").compiler_version().rfind("hiprtc", 0) == 0);
  if (!hiprtc_knows("gfx942")) CHECK(hip_compiler("gfx942").compiler_version().rfind(clang_version, 0) == 0);
  auto clang = hip_compiler_with("gfx942:xnack+", HipCompilerKind::clang);
  CHECK(clang->target().warp_size == 64);
  CHECK(hip_compiler_with("gfx1100", HipCompilerKind::clang)->target().warp_size == 32);
  // clang's options: the processor and its features as cc1 takes them, no fast-math.
  const auto opts = clang->compile_options(KernelSpec{});
  for (const char* o : {"amdgcn-amd-amdhsa", "gfx942", "+xnack", "-fcuda-is-device", "-DSPMVJIT_HIP_CLANG=1"})
    CHECK(std::find(opts.begin(), opts.end(), o) != opts.end());
  for (const auto& o : opts) CHECK(o.find("fast") == std::string::npos);
  // The compile log travels with the error.
  std::string msg;
  KernelSource bad{"bad.cu", "extern \"C\" __global__ void k() { undeclared_thing += 1; }\n", opts};
  CHECK(status_of([&] { clang->compile(bad); }, &msg) == SPMV_STATUS_COMPILE_FAILED);
  CHECK(msg.find("undeclared_thing") != std::string::npos);
  // Without the runtime header nothing HIP is defined: the header is what makes templates compile.
  KernelSource bare{"bare.cu", "extern \"C\" __global__ void k() {}\n", opts};
  bare.options.erase(std::find(bare.options.begin(), bare.options.end(), "-DSPMVJIT_HIP_CLANG=1"));
  CHECK(status_of([&] { clang->compile(bare); }, &msg) == SPMV_STATUS_COMPILE_FAILED);
  // A spec whose wavefront is not the target's does not compile (the prelude checks it).
  KernelSpec wrong = spec_for(clang->target(), "csr", "csr", IndexType::i32, ValueType::f64);
  wrong.warp_size = 32;
  CHECK(status_of([&] { clang->compile(generate_source_for(*clang, wrong)); }, &msg) ==
        SPMV_STATUS_COMPILE_FAILED);
  CHECK(msg.find("wavefront size") != std::string::npos);
  // Refusals: hipRTC asked for a processor it does not know; clang for an NVIDIA target; a
  // processor neither knows names both reasons.
  if (!hiprtc_knows("gfx942")) {
    CHECK(status_of([] { hip_compiler_with("gfx942", HipCompilerKind::hiprtc); }, &msg) ==
          SPMV_STATUS_UNSUPPORTED);
    CHECK(msg.find("cannot compile for gfx942") != std::string::npos);
  }
  CHECK(status_of([] { hip_compiler_with("sm_90", HipCompilerKind::clang); }, &msg) ==
        SPMV_STATUS_UNSUPPORTED);
  CHECK(msg.find("AMD GPUs") != std::string::npos);
  CHECK(status_of([] { hip_compiler("gfx9ff"); }, &msg) == SPMV_STATUS_UNSUPPORTED);
  CHECK(msg.find("does not know gfx9ff") != std::string::npos);
  if (hip_rtc_loaded()) CHECK(msg.find("cannot compile for gfx9ff") != std::string::npos);
  // No device behind it.
  CHECK(status_of([&] { clang->load({'x'}, "k"); }) == SPMV_STATUS_NO_DEVICE);
}

TEST_CASE("hip: warmup for gfx942 goes through clang and finds every spec on disk", "[hip]") {
  SPMVJIT_NEEDS_CLANG_AMDGPU();
  // As the hipRTC warmup test: entries under the keys the compiler-only backend computes, with a
  // stand-in payload; warmup must look every spec up under the same key and compile nothing.
  const test::TempDir dir;
  Backend& b = hip_compiler("gfx942:sramecc+:xnack-");
  for (const KernelSpec& s : all_kernel_specs(b.target())) {
    const std::string key = cache_key(s, generate_source_for(b, s), b.compiler_version());
    write_cache_entry(cache_entry_path(dir.path(), key), key, s.serialize(), {'c', 'o'});
  }
  int count = -1;
  REQUIRE(spmv_warmup(SPMV_BACKEND_HIP, "gfx942:xnack-:sramecc+", dir.path().c_str(), &count) ==
          SPMV_STATUS_SUCCESS);
  CHECK(count == int(all_kernel_specs(b.target()).size()));
  CHECK(count > 500);
}

#endif
