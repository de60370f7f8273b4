// hipRTC and clang as the HIP backend's compilers (runtime/hip/hip_compiler.hpp).
#include "runtime/hip/hip_compiler.hpp"

#include <algorithm>
#include <mutex>

#include "core/error.hpp"
#include "runtime/hip/code_object.hpp"
#include "runtime/hip/hip_api.hpp"
#ifdef SPMVJIT_WITH_CPU
#include "runtime/cpu/llvm_plugin.hpp"
#endif

namespace spmvjit {
namespace {

// Why hipRTC cannot compile for `t` ("" when it can), with its table and comgr's version.
std::string hiprtc_refusal(const HipTarget& t, const hip::RtcApi** api, std::string* comgr) {
  const bool nvidia_target = t.processor.compare(0, 3, "sm_") == 0;
  if (nvidia_target != hip::kNvidiaPlatform)
    return "hip: this build's hipRTC compiles for " +
           std::string(hip::kNvidiaPlatform ? "NVIDIA GPUs (sm_NN: HIP's NVIDIA platform)"
                                            : "AMD GPUs (gfxNNN)") +
           ", not " + t.str() + " (SPMVJIT_HIP_PLATFORM chooses the platform at build time)";
  std::string why;
  *api = hip::rtc(&why);
  if (!*api) return "hip: " + why;
  static const std::vector<std::string> none;
  const std::vector<std::string>& known = hip::kNvidiaPlatform ? none : hip::comgr_processors(comgr);
  // An unknown processor aborts hipRTC (ROCm 5.2) instead of failing: refuse it here.
  if (!known.empty() && std::find(known.begin(), known.end(), t.processor) == known.end())
    return "hip: hipRTC (" + (*api)->library + ", " + *comgr + ") cannot compile for " + t.processor +
           "; it knows " + known.front() + " to " + known.back() + " (a newer ROCm is needed)";
  return "";
}

// hipRTC for one target: a code object for exactly that processor and feature settings.
class HiprtcCompiler final : public HipCompiler {
 public:
  explicit HiprtcCompiler(const HipTarget& t) : target_(t) {
    std::string comgr;
    if (const std::string why = hiprtc_refusal(t, &api_, &comgr); !why.empty())
      fail(SPMV_STATUS_UNSUPPORTED, why);
    int major = 0, minor = 0;
    api_->hiprtcVersion(&major, &minor);
    version_ = "hiprtc " + std::to_string(major) + "." + std::to_string(minor);
    if (api_->runtime_version) {
      int v = 0;
      if (api_->runtime_version(&v) == hipSuccess) version_ += " hip " + std::to_string(v);
    }
    if (!comgr.empty()) version_ += " " + comgr;
    version_ += hip::kNvidiaPlatform ? " (NVRTC) PTX for " + t.str() : " code object for " + t.str();
  }

  const std::string& version() const override { return version_; }

  std::vector<std::string> options() const override {
    // No fast-math: NaN/Inf must propagate like the reference. The processor with its feature
    // settings, explicitly: hipRTC would otherwise ask the (absent) device.
    if (hip::kNvidiaPlatform)  // NVRTC's options; hipRTC there returns PTX (nvrtcGetPTX)
      return {"--gpu-architecture=compute_" + target_.processor.substr(3), "-std=c++17",
              "-D__HIP_PLATFORM_NVIDIA__=1"};
    return {"--offload-arch=" + target_.str(), "-O3", "-std=c++17"};
  }

  std::vector<char> compile(const KernelSource& src) const override {
    // hipRTC is not thread-safe: ROCm 5.2's corrupts the heap when two programs compile at once
    // (seen in the compile-everything test), and later ones serialize internally anyway. One
    // compile at a time per process, for every target.
    // (NVRTC, hipRTC on HIP's NVIDIA platform, is thread-safe.)
    static std::mutex serial;
    std::unique_lock lock(serial, std::defer_lock);
    if (!hip::kNvidiaPlatform) lock.lock();
    hiprtcProgram prog = nullptr;
    hiprtcResult r =
        api_->hiprtcCreateProgram(&prog, src.text.c_str(), src.name.c_str(), 0, nullptr, nullptr);
    if (r != HIPRTC_SUCCESS)
      fail(SPMV_STATUS_COMPILE_FAILED,
           "hipRTC cannot create a program for " + src.name + ": " + api_->hiprtcGetErrorString(r));
    struct Guard {
      const hip::RtcApi* api;
      hiprtcProgram* p;
      ~Guard() { api->hiprtcDestroyProgram(p); }
    } guard{api_, &prog};
    std::vector<const char*> opts;
    for (const auto& o : src.options) opts.push_back(o.c_str());
    r = api_->hiprtcCompileProgram(prog, int(opts.size()), opts.data());
    size_t log_size = 0;
    api_->hiprtcGetProgramLogSize(prog, &log_size);
    std::string log(log_size, '\0');
    if (log_size) api_->hiprtcGetProgramLog(prog, log.data());
    while (!log.empty() && (log.back() == '\0' || log.back() == '\n')) log.pop_back();
    if (r != HIPRTC_SUCCESS)
      fail(SPMV_STATUS_COMPILE_FAILED, "hipRTC failed to compile " + src.name + " (" + version_ + ", " +
                                           api_->hiprtcGetErrorString(r) + "):\n" + log);
    size_t size = 0;
    api_->hiprtcGetCodeSize(prog, &size);
    std::vector<char> binary(size);
    if (size) r = api_->hiprtcGetCode(prog, binary.data());
    if (r != HIPRTC_SUCCESS || binary.empty())
      fail(SPMV_STATUS_COMPILE_FAILED, "hipRTC produced no code object for " + src.name + ":\n" + log);
    return binary;
  }

 private:
  HipTarget target_;
  const hip::RtcApi* api_ = nullptr;
  std::string version_;
};

// clang 19 in the LLVM plugin: HIP device code for one AMD processor, linked by lld into a code
// object. No ROCm headers or device libraries: the source defines SPMVJIT_HIP_CLANG, and
// prelude_hip.h then includes hip_clang_runtime.h.
#ifdef SPMVJIT_WITH_CPU
// Why clang cannot compile for `t` ("" when it can), with the plugin's table.
std::string clang_refusal(const HipTarget& t, const spmvjit_llvm_toolchain_v1_t** api) {
  if (hip::kNvidiaPlatform || t.processor.compare(0, 3, "gfx") != 0)
    return "clang compiles HIP for AMD GPUs here, not " + t.str();
  const LlvmPlugin& p = llvm_plugin();
  if (!p.api) return "clang: " + p.error;
  if (!p.api->compile_amdgpu)
    return "clang: the LLVM plugin " + p.path + " was built without AMDGPU code objects (lld: liblld-19-dev)";
  const std::string list = std::string(",") + p.api->amdgpu_processors + ",";
  if (list.find("," + t.processor + ",") == std::string::npos)
    return "clang (" + std::string(p.api->clang_version) + ") does not know " + t.processor;
  *api = p.api;
  return "";
}

class ClangHipCompiler final : public HipCompiler {
 public:
  ClangHipCompiler(const HipTarget& t, const spmvjit_llvm_toolchain_v1_t* api) : target_(t), api_(api) {
    version_ = std::string(api->clang_version) + " + lld, code object for " + t.str();
  }
  const std::string& version() const override { return version_; }
  std::vector<std::string> options() const override {
    // clang's cc1 arguments for a HIP device compile, as its driver passes them for
    // --offload-arch=<target> --cuda-device-only -nogpuinc -nogpulib; no fast-math (NaN and Inf
    // propagate as in the reference).
    std::vector<std::string> o = {"-triple", "amdgcn-amd-amdhsa", "-target-cpu", target_.processor};
    for (const std::string& f : target_.features)  // "sramecc+" -> "+sramecc"
      o.insert(o.end(), {"-target-feature", f.back() + f.substr(0, f.size() - 1)});
    o.insert(o.end(), {"-fcuda-is-device", "-x", "hip", "-std=c++17", "-O3", "-mrelocation-model", "pic",
                       "-pic-level", "2", "-fvisibility=hidden", "-fapply-global-visibility-to-externs",
                       "-fhip-new-launch-api", "-vectorize-loops", "-vectorize-slp", "-nostdsysteminc",
                       "-nobuiltininc", "-DSPMVJIT_HIP_CLANG=1"});
    return o;
  }
  std::vector<char> compile(const KernelSource& src) const override {
    std::vector<const char*> argv;
    for (const auto& o : src.options) argv.push_back(o.c_str());
    spmvjit_llvm_bytes out{};
    const int r = api_->compile_amdgpu(argv.data(), argv.size(), src.name.c_str(), src.text.data(),
                                       src.text.size(), &out);
    std::vector<char> bytes(out.data, out.data + out.size);
    api_->release(&out);
    if (r != 0) fail(SPMV_STATUS_COMPILE_FAILED, "hip: " + std::string(bytes.begin(), bytes.end()));
    hip::CodeObject co;
    std::string why;
    if (!hip::parse_code_object(bytes, &co, &why))
      fail(SPMV_STATUS_COMPILE_FAILED, "hip: clang made no AMDGPU code object of " + src.name + ": " + why);
    return bytes;
  }

 private:
  HipTarget target_;
  const spmvjit_llvm_toolchain_v1_t* api_;
  std::string version_;
};
#else
std::string clang_refusal(const HipTarget&, const void**) {
  return "clang: this build has no LLVM plugin (SPMVJIT_WITH_CPU is off)";
}
#endif

}  // namespace

std::unique_ptr<HipCompiler> make_hip_compiler(const HipTarget& t, HipCompilerKind which) {
  std::string rtc_why, clang_why;
  if (which != HipCompilerKind::clang) {
    const hip::RtcApi* api = nullptr;
    std::string comgr;
    rtc_why = hiprtc_refusal(t, &api, &comgr);
    if (rtc_why.empty()) return std::make_unique<HiprtcCompiler>(t);
    if (which == HipCompilerKind::hiprtc) fail(SPMV_STATUS_UNSUPPORTED, rtc_why);
  }
#ifdef SPMVJIT_WITH_CPU
  const spmvjit_llvm_toolchain_v1_t* llvm = nullptr;
#else
  const void* llvm = nullptr;
#endif
  clang_why = clang_refusal(t, &llvm);
#ifdef SPMVJIT_WITH_CPU
  if (clang_why.empty()) return std::make_unique<ClangHipCompiler>(t, llvm);
#endif
  if (which == HipCompilerKind::clang) fail(SPMV_STATUS_UNSUPPORTED, "hip: " + clang_why);
  fail(SPMV_STATUS_UNSUPPORTED, rtc_why + "; " + clang_why);
}

}  // namespace spmvjit
