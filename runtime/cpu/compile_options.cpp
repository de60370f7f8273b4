// cpu_compile_options: the one list of clang options every CPU kernel is compiled with.
#include "runtime/cpu/compile_options.hpp"

namespace spmvjit {

std::vector<std::string> cpu_compile_options(const CpuCompileTarget& target, const KernelSpec& spec,
                                             const char* first_tier_level) {
  std::vector<std::string> o = {"-triple", target.triple, "-target-cpu", target.cpu};
  for (const auto& f : target.features) {
    o.push_back("-target-feature");
    o.push_back(f);
  }
  // -mreassociate lets the vectorizer split CSR's row sums; no finite-math: NaN/Inf propagate.
  // 256-bit vectors: SELL with 16 rows per slice ran 2.2x faster than with 512-bit gathers
  // (Zen 4, single thread, 20 nonzeros/row: 12.3 vs 27.1 ms).
  // The run-time epilogue variant (a plan's first tier, replaced by the specialized module when
  // its background compile ends, or kept by SPMVJIT_TIERED_COMPILE=quick) at -O1: it is what
  // a fresh process waits for. sell_diag's took 56 against 104 ms at -O3, with the plugin's 27
  // ms load; its SpMVs ran 1.0-1.6x longer (poisson2d:300 0.13 vs 0.10 ms, stencil27:40 0.47 vs
  // 0.29, powerlaw, circuit and blockfem within noise). -O0 compiled in 21 ms and ran 3.5-13x
  // longer. The loop vectorizer still runs (-vectorize-loops), at every level.
  const auto rt = spec.constants.find("RUNTIME_EPILOGUE");
  const bool first_tier = rt != spec.constants.end() && rt->second != 0;
  o.push_back(first_tier ? first_tier_level : "-O3");
  for (const char* s :
       {"-x", "c++", "-std=c++20", "-vectorize-loops", "-vectorize-slp", "-ffp-contract=fast",
        "-mreassociate", "-mprefer-vector-width=256", "-fno-signed-zeros", "-mrelocation-model", "pic",
        "-pic-level", "2", "-nostdsysteminc", "-nobuiltininc", "-w"})
    o.push_back(s);
  return o;
}

}  // namespace spmvjit
