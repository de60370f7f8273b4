// `spmvjit run`: plan one matrix, verify, print the plan's stage timings and the SpMV rate.
#include <cstdio>

#include "engine/plan.hpp"
#include "tools/spmvjit/cli.hpp"
#include "tools/spmvjit/commands.hpp"
#include "tools/spmvjit/measure.hpp"

namespace spmvjit::cli {
namespace {

const char* kHelp =
    "usage: spmvjit run FILE.mtx|--gen SPEC [options]\n"
    "  --backend auto|cpu|cuda   where to compute (default auto)\n"
    "  --format NAME             force a format (default: the planner decides)\n"
    "  --measure                 plan in measure mode: time the best candidates, keep the fastest\n"
    "  --deterministic           bitwise-identical results run to run (no atomic sums)\n"
    "  --index int32|int64       index type (default int32, int64 when the matrix needs it)\n"
    "  --value TYPE              float, double, complex_float or complex_double (default double;\n"
    "                            complex_double for a complex Matrix Market file; --gen with a\n"
    "                            complex type: the generator's values with random imaginary parts)\n"
    "  --threads N               CPU threads, at most the process pool's (default: all of it;\n"
    "                            $SPMVJIT_NUM_THREADS, $OMP_NUM_THREADS or the affinity mask)\n"
    "  --device N                GPU ordinal\n"
    "  --cache-dir DIR           kernel cache ('' = memory only)\n"
    "  --vectors K               multiply K vectors at once (spmm_execute; default 1)\n"
    "  --layout col|row          layout of the K vectors (default col: column-major)\n"
    "  --transpose               y = A^T x (the plan builds A^T's layout; x has A's rows entries)\n"
    "  --conjugate-transpose     y = A^H x (A^T's layout with conjugated values; A^T when real)\n"
    "  --symmetric               declare the matrix symmetric, read from its lower triangle (a\n"
    "                            matrix that is not is made so from that triangle first); a\n"
    "                            symmetric Matrix Market file is declared so without it\n"
    "  --hermitian               the same for a Hermitian matrix (complex values: the other\n"
    "                            triangle conjugated, the diagonal real); a hermitian file is\n"
    "                            declared so without it\n"
    "  --general                 plan a symmetric or hermitian file's matrix as a general one\n"
    "  --iters N                 minimum timed SpMVs (default 20)\n"
    "  --seed N                  generator seed\n"
    "  --duplicates sum|error    a file's repeated entries: summed with a warning (default) or refused\n"
    "  --describe                print the plan's JSON description\n"
    "  --json FILE               write the result as JSON\n";

}  // namespace

int cmd_run(int argc, char** argv) {
  Args args(argc, argv, 2,
            {"help", "describe", "measure", "deterministic", "transpose", "conjugate-transpose", "symmetric",
             "hermitian", "general"},
            {"backend", "format", "index", "value", "threads", "device", "cache-dir", "iters", "seed", "json",
             "gen", "duplicates", "vectors", "layout"});
  if (args.has("help")) {
    std::fputs(kHelp, stdout);
    return 0;
  }
  std::string name;
  bool file_symmetric = false;
  // A complex file plans complex values unless --value says otherwise (which the reader refuses).
  const bool complex_file = file_is_complex(args);
  const ValueType value = args.has("value") ? value_from(args.get("value"))
                          : complex_file    ? ValueType::c64
                                            : ValueType::f64;
  spmv_options_t o = options_from(args);
  const std::string cache_dir = args.get("cache-dir");
  if (args.has("cache-dir")) o.cache_dir = cache_dir.c_str();
  const std::string format = args.has("measure") ? "measure" : args.get("format");
  const int iters = int(args.get_int("iters", 20, 1, 1000000000));
  Symmetry file = Symmetry::general, declared = Symmetry::general;
  int64_t n_rows = 0, n_cols = 0, nnz = 0;
  MeasureResult r;
  if (is_complex(value)) {
    auto a = load_matrix_complex(args, &name, &file);
    declared = apply_symmetry(args, file, a, o);
    n_rows = a.rows, n_cols = a.cols, nnz = a.nnz();
    const IndexType index = index_for(args, n_rows, n_cols, nnz);
    check_run_memory(n_rows, n_cols, nnz, index, value);
    r = measure(a, index, value, o, format, iters, 0.2);
  } else {
    auto a = load_matrix(args, &name, &file_symmetric);
    if (file_symmetric) file = Symmetry::symmetric;
    declared = apply_symmetry(args, file, a, o);
    n_rows = a.rows, n_cols = a.cols, nnz = a.nnz();
    const IndexType index = index_for(args, a);
    check_run_memory(a, index, value);
    r = measure(a, index, value, o, format, iters, 0.2);
  }
  std::printf("matrix   %s: %lld x %lld, %lld nonzeros, %s values\n", name.c_str(), (long long)n_rows,
              (long long)n_cols, (long long)nnz, to_string(value));
  if (file != Symmetry::general && declared == Symmetry::general)
    std::printf("matrix   %s file: both triangles stored, planned as a general matrix (--general)\n",
                file == Symmetry::hermitian ? "hermitian" : "symmetric");
  if (!r.ok) {
    std::fprintf(stderr, "spmvjit run: %s\n", r.error.c_str());
    return 1;
  }
  std::printf("plan     format %s %s, kernel cache: %s\n", r.format.c_str(), r.params.dump().c_str(),
              r.cache.c_str());
  std::printf("why      %s\n", r.describe["planner"]["why"].as_string().c_str());
  std::vector<std::vector<std::string>> rows = {
      {"plan total", fmt(r.plan_s * 1e3)},      {"  validate", fmt(r.validate_s * 1e3)},
      {"  stats", fmt(r.stats_s * 1e3)},        {"  estimate", fmt(r.estimate_s * 1e3)},
      {"  convert", fmt(r.convert_s * 1e3)},    {"  compile", fmt(r.compile_s * 1e3)},
      {"  load", fmt(r.load_s * 1e3)},          {"  upload", fmt(r.upload_s * 1e3)},
      {"spmv (median)", fmt(r.exec_s * 1e3, 4)}};
  std::fputs(format_table({"stage", "ms"}, rows).c_str(), stdout);
  if (o.operation != SPMV_OPERATION_NON_TRANSPOSE)
    std::printf("op       %s: its layout built at plan time in %s ms (the plan total includes it)\n",
                r.describe["operation"].as_string().c_str(),
                fmt(r.describe["timings"]["transpose"].as_double() * 1e3).c_str());
  if (declared != Symmetry::general) {
    const Json& sym = r.describe["symmetric"];
    std::printf("matrix   %s%s: %s stored (%s), the full matrix built in %s ms\n",
                declared == Symmetry::hermitian ? "hermitian" : "symmetric",
                file == declared ? " (the file says so)" : " (made so from its lower triangle)",
                sym["storage"].as_string().c_str(), r.format.c_str(),
                fmt(r.describe["timings"]["symmetric"].as_double() * 1e3).c_str());
  }
  if (o.vectors > 1)
    std::printf("vectors  %d, %s (the SpMV row times all of them)\n", o.vectors,
                o.layout == SPMV_LAYOUT_ROW_MAJOR ? "row-major" : "column-major");
  std::printf("rate     %.2f GB/s on format bytes (%.1f MB), %.2f GB/s CSR-equivalent, %.2f GFLOP/s\n",
              r.gbs(), r.bytes * 1e-6, r.csr_gbs(),
              (is_complex(value) ? 8.0 : 2.0) * double(nnz) * o.vectors / r.exec_s * 1e-9);
  std::printf("verified yes (beta = 0 with NaN-poisoned y, and beta != 0, against long double%s)\n",
              is_complex(value) ? "; complex alpha and beta" : "");
  if (args.has("describe")) std::printf("%s\n", r.describe.dump().c_str());
  if (args.has("json"))
    write_json_file(args.get("json"), Json::object({{"matrix", name},
                                                    {"spmv_seconds", r.exec_s},
                                                    {"gbs", r.gbs()},
                                                    {"csr_gbs", r.csr_gbs()},
                                                    {"plan", r.describe}}));
  return 0;
}

}  // namespace spmvjit::cli
