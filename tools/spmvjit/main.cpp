// spmvjit command line: inspect, run, bench, warmup, gen.
#include <cstdio>
#include <cstring>
#include <new>
#include <string>

#include "core/error.hpp"
#include "spmvjit/spmvjit.h"
#include "tools/spmvjit/commands.hpp"

namespace {

const char* kUsage =
    "usage: spmvjit <command> [options]\n"
    "commands:\n"
    "  inspect FILE|--gen SPEC   print matrix statistics and the planner's choice\n"
    "  run FILE|--gen SPEC       plan, execute, verify against the reference, print timings\n"
    "  bench FILE|--gen SPEC|--suite  every applicable format (and peers) side by side\n"
    "  warmup                    compile every kernel a plan may need into the cache\n"
    "  gen SPEC -o FILE.mtx      write a synthetic matrix as Matrix Market\n"
    "run 'spmvjit <command> --help' for the options of a command; 'spmvjit --version'\n";

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || !std::strcmp(argv[1], "--help") || !std::strcmp(argv[1], "-h")) {
    std::fputs(kUsage, argc < 2 ? stderr : stdout);
    return argc < 2 ? 2 : 0;
  }
  const std::string cmd = argv[1];
  if (cmd == "--version") {
    std::printf("spmvjit %s (library %s); backends:%s%s%s\n", SPMVJIT_VERSION_STRING, spmv_version(),
#ifdef SPMVJIT_WITH_CPU
                " cpu",
#else
                "",
#endif
#ifdef SPMVJIT_WITH_CUDA
                " cuda",
#else
                "",
#endif
#ifdef SPMVJIT_WITH_HIP
                " hip");
#else
                "");
#endif
    return 0;
  }
  try {
    if (cmd == "inspect") return spmvjit::cli::cmd_inspect(argc, argv);
    if (cmd == "run") return spmvjit::cli::cmd_run(argc, argv);
    if (cmd == "bench") return spmvjit::cli::cmd_bench(argc, argv);
    if (cmd == "warmup") return spmvjit::cli::cmd_warmup(argc, argv);
    if (cmd == "gen") return spmvjit::cli::cmd_gen(argc, argv);
    std::fprintf(stderr, "spmvjit: unknown command '%s'\n%s", cmd.c_str(), kUsage);
    return 2;
  } catch (const spmvjit::Error& e) {
    std::fprintf(stderr, "spmvjit %s: %s\n", cmd.c_str(), e.what());
    return e.status() == SPMV_STATUS_INVALID_VALUE ? 2 : 1;
  } catch (const std::bad_alloc&) {
    // The reader and run check sizes first; this is what slips past them: a message, not "std::bad_alloc".
    std::fprintf(stderr, "spmvjit %s: out of host memory\n", cmd.c_str());
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "spmvjit %s: %s\n", cmd.c_str(), e.what());
    return 1;
  }
}
