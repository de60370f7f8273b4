// `spmvjit inspect`, `gen` and `warmup`: the small subcommands.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>

#include "engine/formats/format.hpp"
#include "engine/gen/generators.hpp"
#include "engine/io/matrix_market.hpp"
#include "engine/planner.hpp"
#include "engine/stats.hpp"
#include "engine/warmup.hpp"
#include "runtime/backend.hpp"
#include "runtime/cache/kernel_cache.hpp"
#include "tools/spmvjit/cli.hpp"
#include "tools/spmvjit/commands.hpp"
#include "tools/spmvjit/progress.hpp"

namespace spmvjit::cli {

int cmd_inspect(int argc, char** argv) {
  Args args(argc, argv, 2, {"help", "json", "device-input"},
            {"gen", "seed", "backend", "target", "index", "duplicates", "time"});
  if (args.has("help")) {
    std::fputs(
        "usage: spmvjit inspect FILE.mtx|--gen SPEC [--json] [--backend cpu|cuda|hip]\n"
        "                       [--target sm_XY|gfxNNN] [--index int32|int64] [--duplicates sum|error]\n"
        "  prints MatrixStats and, when the backend exists, the planner's ranking (--json: both\n"
        "  as one JSON object, \"planner\" null without a backend); with\n"
        "  --backend cuda|hip --target, ranks for that GPU without one (the GPU cost model reads\n"
        "  no device facts but the warp width); --index: the planner's index type (default int32,\n"
        "  int64 when the matrix needs it); --duplicates: a file's repeated entries summed with a\n"
        "  warning (default) or refused; --device-input: ranks as a plan of CSR already in device\n"
        "  memory does (the statistics and row sample alone, the formats a device builds);\n"
        "  --time N: the statistics and the choice N more times, each from a fresh row sample as\n"
        "  in a plan, their median and fastest times printed (JSON: \"timing\"; the estimate\n"
        "  threads as a plan takes them, or $SPMVJIT_ESTIMATE_THREADS)\n",
        stdout);
    return 0;
  }
  std::string name;
  const auto a = load_matrix(args, &name);
  const IndexType index = index_for(args, a);
  const MatrixStats s = compute_stats(a.ref());
  const bool json = args.has("json");
  Json out = Json::object({{"matrix", name}, {"stats", s.to_json()}, {"planner", nullptr}});
  if (!json) std::printf("matrix             %s\n%s", name.c_str(), s.to_text().c_str());
  const spmv_backend_t b = backend_from(args.get("backend", "auto"));
  const BackendKind kind = b == SPMV_BACKEND_CUDA                    ? BackendKind::cuda
                           : b == SPMV_BACKEND_HIP                   ? BackendKind::hip
                           : b == SPMV_BACKEND_CPU                   ? BackendKind::cpu
                           : backend_available(BackendKind::cuda, 0) ? BackendKind::cuda
                                                                     : BackendKind::cpu;
  const bool nominal = kind != BackendKind::cpu && args.has("target");
  if (!nominal && !backend_available(kind, 0)) {
    if (json) std::printf("%s\n", out.dump().c_str());  // "planner": null, no backend to rank for
    return 0;
  }
  // The planner sees the index type it would plan for (int64: the matrix as read, no copy).
  HostCsr<int32_t, double> i32;
  if (index == IndexType::i32) i32 = a.cast<int32_t, double>();
  const CsrRef ref = index == IndexType::i32 ? i32.ref() : a.ref();
  TargetInfo t;
  if (nominal && kind == BackendKind::cuda)
    t.backend = BackendKind::cuda, t.target = args.get("target"), t.simd_bytes = 0;
  else if (nominal)  // HIP: the compiler for that target knows its wavefront
    t = backend_compiler(kind, args.get("target").c_str()).target();
  else
    t = get_backend(kind, 0).target();
  // --device-input: ranked as a plan of device-resident CSR is, from the statistics and the row
  // sample alone, among the formats the device builds.
  const bool device_input = args.has("device-input") && kind != BackendKind::cpu;
  CsrRef shape = ref;
  if (device_input) shape.row_ptr = shape.col_idx = shape.val = nullptr;
  ChoiceOptions options;
  options.device_input = device_input;
  const PlanChoice c = choose_format(shape, s, t, nullptr, options);
  // --time N: statistics and choice again, each choice from the fresh sample its statistics made
  // (the sample's memo, which estimates fill, starts empty as in a plan).
  const int64_t repeats = args.get_int("time", 0, 0);
  Json timing = nullptr;
  if (repeats > 0) {
    std::vector<double> stats_s, choice_s;
    for (int64_t i = 0; i < repeats; ++i) {
      const auto t0 = std::chrono::steady_clock::now();
      const MatrixStats fresh = compute_stats(ref);
      const auto t1 = std::chrono::steady_clock::now();
      (void)choose_format(shape, fresh, t, nullptr, options);
      const auto t2 = std::chrono::steady_clock::now();
      stats_s.push_back(std::chrono::duration<double>(t1 - t0).count());
      choice_s.push_back(std::chrono::duration<double>(t2 - t1).count());
    }
    auto summary = [](std::vector<double> v) {
      std::sort(v.begin(), v.end());
      return Json::object({{"median_seconds", v[v.size() / 2]}, {"min_seconds", v.front()}});
    };
    timing = Json::object({{"repeats", repeats}, {"stats", summary(stats_s)}, {"choice", summary(choice_s)}});
  }
  if (json) {
    out["planner"] = Json::object({{"backend", to_string(kind)},
                                   {"target", t.target},
                                   {"index", to_string(index)},
                                   {"value", "double"},
                                   {"format", c.format->name()},
                                   {"params", params_json(c.params)},
                                   {"why", c.why},
                                   {"candidates", c.considered_json()}});
    if (repeats > 0) out["timing"] = timing;
    std::printf("%s\n", out.dump().c_str());
    return 0;
  }
  std::printf("planner (%s %s, %s/double): %s %s\n  %s\nranking (cost in byte-equivalents):\n",
              to_string(kind), t.target.c_str(), to_string(index), c.format->name().c_str(),
              params_json(c.params).dump().c_str(), c.why.c_str());
  for (const Candidate& k : c.considered)
    std::printf("  %-12s %-26s %12.4g  %s\n", k.format->name().c_str(), params_json(k.params).dump().c_str(),
                k.score, k.estimate.reason.c_str());
  if (repeats > 0)
    std::printf(
        "timing (%lld repeats): statistics %.3f ms median, %.3f fastest; choice %.3f ms median, %.3f "
        "fastest\n",
        (long long)repeats, timing["stats"]["median_seconds"].as_double() * 1e3,
        timing["stats"]["min_seconds"].as_double() * 1e3,
        timing["choice"]["median_seconds"].as_double() * 1e3,
        timing["choice"]["min_seconds"].as_double() * 1e3);
  return 0;
}

int cmd_gen(int argc, char** argv) {
  Args args(argc, argv, 2, {"help"}, {"seed", "output"});
  if (args.has("help") || args.positional().empty()) {
    std::printf("usage: spmvjit gen SPEC[@random|@few|@ones] -o FILE.mtx [--seed N]\nspecs:\n%s",
                generator_help().c_str());
    return args.has("help") ? 0 : 2;
  }
  if (!args.has("output")) usage_error("gen needs -o FILE.mtx");
  const auto a = generate_matrix(args.positional()[0], uint64_t(args.get_int("seed", 1, 0)));
  write_matrix_market(args.get("output"), a);
  std::printf("wrote %s: %lld x %lld, %lld nonzeros\n", args.get("output").c_str(), (long long)a.rows,
              (long long)a.cols, (long long)a.nnz());
  return 0;
}

int cmd_warmup(int argc, char** argv) {
  Args args(argc, argv, 2, {"help"}, {"backend", "target", "cache-dir", "bundle"});
  if (args.has("help")) {
    std::fputs(
        "usage: spmvjit warmup [--backend cpu|cuda|hip] [--target native|sm_90|gfx90a|...]\n"
        "                      [--cache-dir DIR]\n"
        "       spmvjit warmup --bundle FILE\n"
        "  compiles every kernel a plan may ask for into the disk cache, on every core this\n"
        "  process may use (progress on stderr when it is a terminal; SPMVJIT_PROGRESS=0|1).\n"
        "  --bundle: the CPU kernel bundle instead (every kernel's run-time epilogue variant\n"
        "  for a portable x86-64-v3 processor, a plan's first tier; the build makes it)\n",
        stdout);
    return 0;
  }
  const std::string dir = args.get("cache-dir"), target = args.get("target", "native");
  // What spmv_warmup does, with the progress line: the same function, given a callback.
  const spmv_backend_t backend = backend_from(args.get("backend", "cpu"));
  const BackendKind kind = backend == SPMV_BACKEND_CUDA  ? BackendKind::cuda
                           : backend == SPMV_BACKEND_HIP ? BackendKind::hip
                                                         : BackendKind::cpu;
  Backend& b = backend_compiler(kind, target.c_str());
  const auto t0 = std::chrono::steady_clock::now();
  Progress progress;
  WarmupProgress show;
  if (progress.on())
    show = [&](int done, int total) {
      progress.update("warmup: kernels compiled " + std::to_string(done) + "/" + std::to_string(total));
    };
  if (args.has("bundle")) {
    if (kind != BackendKind::cpu) usage_error("--bundle is for the CPU backend");
    const BundleBuild built = build_cpu_kernel_bundle(b, args.get("bundle"), show);
    progress.done();
    std::printf("warmup: %d kernels in the bundle %s, %d compiled (%.1f s)\n", built.kernels,
                args.get("bundle").c_str(), built.compiled,
                std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    return 0;
  }
  const int count = warmup_kernels(b, resolve_cache_dir(args.has("cache-dir") ? dir.c_str() : nullptr), show);
  progress.done();
  std::printf("warmup: %d kernels in the cache (%.1f s)\n", count,
              std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  return 0;
}

}  // namespace spmvjit::cli
