// `spmvjit bench`: every applicable format (plus the auto plan) on one matrix or the suite.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>

#include "core/buffer.hpp"
#include "core/parallel.hpp"
#include "engine/formats/format.hpp"
#include "engine/gen/generators.hpp"
#include "engine/reference.hpp"
#include "runtime/backend.hpp"
#include "tools/spmvjit/cli.hpp"
#include "tools/spmvjit/commands.hpp"
#include "tools/spmvjit/gpu_bench.hpp"
#include "tools/spmvjit/measure.hpp"
#include "tools/spmvjit/peers_cpu.hpp"
#include "tools/spmvjit/progress.hpp"

namespace spmvjit::cli {
namespace {

const char* kHelp =
    "usage: spmvjit bench FILE.mtx|--gen SPEC[@KIND]|--suite [options]   (specs: spmvjit gen --help)\n"
    "  --formats LIST            comma list of formats to run, each once in order (default\n"
    "                            all): 'auto' = the planner's choice, 'measure' = the planner\n"
    "                            in measure mode, 'all' = auto, measure and every format, or\n"
    "                            format names; on CUDA each auto row is followed by 'device',\n"
    "                            the same for the CSR already in device memory, planned there\n"
    "                            (warm-cache plan time)\n"
    "  --timing MODES            CUDA: comma list of warm (back-to-back SpMVs), cold (the L2\n"
    "                            flushed before each SpMV), sync (one SpMV between two events,\n"
    "                            synchronized each time); default warm,cold. Every mode times\n"
    "                            spmvjit and cuSPARSE alike; warm is always measured\n"
    "  --suite                   the generated suite (--large: the GPU-sized one)\n"
    "  --values KINDS            with --suite or --gen: each matrix once per kind in the comma\n"
    "                            list of random, few, ones (SPEC@KIND, named NAME@KIND);\n"
    "                            default: each generator's own values\n"
    "  --seed N                  generator seed for --gen and --suite (default 1)\n"
    "  --backend, --index, --value, --threads, --device, --cache-dir, --duplicates,\n"
    "  --deterministic           as for run\n"
    "  --value complex_float|complex_double\n"
    "                            complex values: a complex file's, else each matrix's values as\n"
    "                            real parts with random imaginary parts (--seed); the formats\n"
    "                            that take complex values, Eigen (CPU) and cuSPARSE (CUDA) peers\n"
    "  --vectors K, --layout col|row\n"
    "                            K vectors at once (spmm_execute; cuSPARSE SpMM the GPU peer):\n"
    "                            auto, device and the formats that take several vectors\n"
    "  --transpose               y = A^T x: plans of A^T (built at plan time); cuSPARSE with its\n"
    "                            transpose operation; Eigen and librsb on A^T built apart\n"
    "  --symmetric, --hermitian, --general\n"
    "                            as for run; with a symmetric or Hermitian matrix, --formats\n"
    "                            general is the planner's choice for the same matrix planned as a\n"
    "                            general one\n"
    "                            (full storage), beside auto's\n"
    "  --iters N                 minimum timed SpMVs per format (default 20)\n"
    "  --no-peers                skip the peer libraries (Eigen, librsb on the CPU; cuSPARSE on CUDA)\n"
    "  --json FILE               write all results as JSON\n";

std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> out;
  size_t b = 0;
  while (b <= s.size()) {
    size_t e = s.find(',', b);
    if (e == std::string::npos) e = s.size();
    if (e > b) out.push_back(s.substr(b, e - b));
    b = e + 1;
  }
  return out;
}

// The --formats list: "" for auto, "measure", "device" and format names, each once, in order;
// "all" is auto, measure and every format. Unknown names are refused before any work.
// With several vectors only the formats that take them (Format::multi_vector) and the planner's
// estimate run: "all" leaves the others out and naming one is refused.
// With complex values "all" leaves out the formats that take none (Format::supports_value).
std::vector<std::string> format_list(const std::string& list, int vectors, ValueType value) {
  std::vector<std::string> out;
  auto add = [&](const std::string& f) {
    const Format* format = find_format(f);
    if (vectors > 1 && (f == "measure" || (format && !format->multi_vector()))) {
      usage_error("--formats " + f + " multiplies one vector; with --vectors " + std::to_string(vectors) +
                  " run auto, device or a format that takes several (csr_mm)");
    }
    if (std::find(out.begin(), out.end(), f) == out.end()) out.push_back(f);
  };
  for (const std::string& f : split(list)) {
    if (f == "all") {
      add("");
      if (vectors <= 1) add("measure");
      for (const Format* format : all_formats())
        if ((vectors <= 1 || format->multi_vector()) && format->supports_value(value)) add(format->name());
    } else if (f == "auto") {
      add("");
    } else if (f == "measure" || f == "device" || f == "general" || find_format(f)) {
      add(f);
    } else {
      std::string names;
      for (const Format* format : all_formats()) names += ", " + format->name();
      usage_error("unknown format '" + f + "' in --formats (all, auto, measure, device, general" + names +
                  ")");
    }
  }
  if (out.empty()) usage_error("--formats needs a comma list of formats");
  return out;
}

// The --timing list (CUDA): warm always, cold and sync on request.
TimingModes timing_modes(const Args& args) {
  TimingModes m;
  m.second_plan = true;  // bench times warm plans (the first plan's time is in the JSON)
  if (!args.has("timing")) {
    m.cold = true;  // the default: warm,cold
    return m;
  }
  for (const std::string& t : split(args.get("timing"))) {
    if (t == "cold")
      m.cold = true;
    else if (t == "sync")
      m.sync = true;
    else if (t != "warm")
      usage_error("unknown --timing mode '" + t + "' (warm, cold, sync)");
  }
  return m;
}

// The --values list: "" (the generator's own values) when absent, else each kind once.
std::vector<std::string> value_kinds(const Args& args) {
  if (!args.has("values")) return {""};
  std::vector<std::string> kinds = split(args.get("values"));
  if (kinds.empty()) usage_error("--values needs a comma list of random, few, ones");
  for (const std::string& k : kinds)
    if (k != "random" && k != "few" && k != "ones")
      usage_error("unknown --values kind '" + k + "' (random, few, ones)");
  return kinds;
}

// The matrices to run: the suite or --gen SPEC, once per value kind, or one Matrix Market file.
std::vector<std::pair<std::string, HostCsr<int64_t, double>>> bench_matrices(const Args& args,
                                                                             bool* file_symmetric) {
  std::vector<std::pair<std::string, HostCsr<int64_t, double>>> matrices;
  const std::vector<std::string> kinds = value_kinds(args);
  std::vector<std::pair<std::string, std::string>> specs;
  if (args.has("suite")) {
    specs = default_suite(args.has("large"));
  } else if (args.has("gen")) {
    specs = {{args.get("gen"), args.get("gen")}};
  } else {
    if (args.has("values")) usage_error("--values needs --suite or --gen SPEC");
    std::string name;
    auto a = load_matrix(args, &name, file_symmetric);
    matrices.emplace_back(name, std::move(a));
    return matrices;
  }
  const uint64_t seed = uint64_t(args.get_int("seed", 1, 0));
  Progress progress;
  const size_t total = specs.size() * kinds.size();
  for (const auto& [name, spec] : specs)
    for (const std::string& k : kinds) {
      const std::string suffix = k.empty() ? "" : "@" + k;
      progress.update("bench: generating matrix " + std::to_string(matrices.size() + 1) + "/" +
                      std::to_string(total) + " " + name + suffix);
      matrices.emplace_back(name + suffix, generate_matrix(spec + suffix, seed));
    }
  return matrices;
}

// The CPU counterpart of a GPU plan's upload, which issue 10's plan-cost target allows besides 20
// SpMVs: the CSR arrays (as `index` and `value` types) copied into fresh memory allocated as a
// plan allocates its arrays (AlignedBuffer: huge pages for large ones), with the plans' own
// parallel copy, page faults included. Median seconds of 5 copies.
double csr_copy_seconds(int64_t rows, int64_t nnz, IndexType index, ValueType value) {
  const size_t bytes[] = {size_t(rows + 1) * size_of(index), size_t(nnz) * size_of(index),
                          size_t(nnz) * size_of(value)};
  AlignedBuffer src(std::max({bytes[0], bytes[1], bytes[2], size_t(1)}));
  std::memset(src.data(), 0, src.bytes());
  std::vector<double> t;
  for (int i = 0; i < 5; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    for (size_t b : bytes) {
      if (!b) continue;
      AlignedBuffer dst(b);  // untouched: fresh pages, as a plan's arrays
      parallel_copy(dst.data(), src.data(), b);
    }
    t.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

// The CPU bench of the matrices (MV: double, or std::complex<double> for complex values): every
// format in `formats`, then the peers. Returns the exit code.
template <class MV>
int bench_cpu(const Args& args, const std::vector<std::pair<std::string, HostCsr<int64_t, MV>>>& matrices,
              const std::vector<std::string>& formats, const spmv_options_t& o, IndexType index,
              ValueType value) {
  std::vector<std::vector<std::string>> rows;
  Json json = Json::array();
  std::vector<std::string> copies;
  bool any_wrong = false;
  Progress progress;
  for (size_t m = 0; m < matrices.size(); ++m) {
    const auto& [name, a] = matrices[m];
    double csr_time = 0, csr_bytes = 0;
    const double copy_s = csr_copy_seconds(a.rows, a.nnz(), index, value);
    copies.push_back(name + " " + fmt(copy_s * 1e3, 2) + " ms");
    std::vector<MeasureResult> results;
    TimingModes timing;
    timing.second_plan = true;
    for (const auto& f : formats) {
      progress.update(
          bench_step(m, matrices.size(), name, results.size(), formats.size(), f.empty() ? "auto" : f));
      results.push_back(
          measure(a, index, value, o, f, int(args.get_int("iters", 20, 1, 1000000000)), 0.2, timing));
      // The CSR-equivalent bytes are the matrix's, whichever format measured them (peers' GB/s).
      if (results.back().ok && csr_bytes == 0) csr_bytes = results.back().csr_bytes;
      if (results.back().ok && results.back().format == "csr" && !f.empty()) csr_time = results.back().exec_s;
    }
    for (size_t i = 0; i < results.size(); ++i) {
      const MeasureResult& r = results[i];
      const std::string label = formats[i].empty() ? "auto:" + r.format
                                : formats[i] == "measure" || formats[i] == "general"
                                    ? formats[i] + ":" + r.format
                                    : r.format;
      if (!r.ok) {
        any_wrong |= r.error.rfind("WRONG", 0) == 0;
        rows.push_back({name, label, "-", "-", "-", "-", "-", "-", "-", "-", "-", r.error.substr(0, 60)});
      } else {
        rows.push_back({name, label, fmt(r.exec_s * 1e3, 4), fmt(r.gbs(), 1), fmt(r.csr_gbs(), 1),
                        fmt(r.plan_s * 1e3, 2), fmt(r.plan_s / r.exec_s, 0),
                        fmt(std::max(0.0, r.plan_s - copy_s) / r.exec_s, 0), fmt(r.convert_s * 1e3, 2),
                        r.update_s > 0 ? fmt(r.update_s / r.exec_s, 1) : "-",
                        csr_time > 0 ? fmt(csr_time / r.exec_s, 2) : "-", r.params.dump()});
      }
      Json row = Json::object({{"matrix", name}, {"format", label}, {"ok", r.ok}});
      if (!r.ok) {
        row["reason"] = r.error;
      } else {
        row["spmv_seconds"] = r.exec_s;
        row["gbs"] = r.gbs();
        row["csr_gbs"] = r.csr_gbs();
        row["convert_seconds"] = r.convert_s;
        row["plan_seconds"] = r.plan_s;
        if (r.plan_first_s > 0) row["plan_first_seconds"] = r.plan_first_s;
        row["plan_spmvs"] = r.plan_s / r.exec_s;
        row["csr_copy_seconds"] = copy_s;
        row["plan_beyond_copy_spmvs"] = std::max(0.0, r.plan_s - copy_s) / r.exec_s;
        if (r.update_s > 0) {
          row["update_seconds"] = r.update_s;
          row["update_first_seconds"] = r.update_first_s;
          row["update_spmvs"] = r.update_s / r.exec_s;
        }
        row["params"] = r.params;
        row["timings"] = r.describe["timings"];
      }
      json.push_back(std::move(row));
    }
    // Peers on the same matrix in the same process (CPU backend only).
    const bool on_cpu = o.backend == SPMV_BACKEND_CPU ||
                        (o.backend == SPMV_BACKEND_AUTO && !backend_available(BackendKind::cuda, o.device));
    if (on_cpu && !args.has("no-peers")) {
      progress.update(bench_step(m, matrices.size(), name, 0, 0, "peers"));
      // --transpose: the peers multiply A^T built apart (their setup excludes building it).
      const bool transpose = o.operation != SPMV_OPERATION_NON_TRANSPOSE;
      for (PeerResult p : run_cpu_peers(transpose ? reference_transpose(a) : a, value, o.threads,
                                        int(args.get_int("iters", 20, 1, 1000000000)), 0.2, o.vectors,
                                        o.layout == SPMV_LAYOUT_ROW_MAJOR)) {
        if (transpose) p.name += " (A^T built apart)";
        if (!p.ok) {
          // A wrong result (check_spmv's "row ...", check_vectors' "vector j, row ..."), not a
          // peer that could not run.
          any_wrong |= p.error.rfind("row", 0) == 0 || p.error.rfind("vector ", 0) == 0;
          rows.push_back({name, p.name, "-", "-", "-", "-", "-", "-", "-", "-", "-", p.error.substr(0, 60)});
          json.push_back(
              Json::object({{"matrix", name}, {"format", p.name}, {"ok", false}, {"reason", p.error}}));
          continue;
        }
        const double csr_gbs = csr_bytes / p.exec_s * 1e-9;
        rows.push_back({name, p.name, fmt(p.exec_s * 1e3, 4), fmt(csr_gbs, 1), fmt(csr_gbs, 1),
                        fmt(p.setup_s * 1e3, 2), fmt(p.setup_s / p.exec_s, 0), "-", "-", "-",
                        csr_time > 0 ? fmt(csr_time / p.exec_s, 2) : "-", "peer (plan = setup)"});
        json.push_back(Json::object({{"matrix", name},
                                     {"format", p.name},
                                     {"ok", true},
                                     {"spmv_seconds", p.exec_s},
                                     {"csr_gbs", csr_gbs},
                                     {"setup_seconds", p.setup_s}}));
      }
    }
  }
  progress.done();
  // "beyond copy": the plan's SpMVs after one copy of the CSR arrays (csr_copy_seconds, printed
  // per matrix below the table).
  std::fputs(format_table({"matrix", "format", "ms", "GB/s", "CSR-eq GB/s", "plan ms", "plan/SpMV",
                           "beyond copy", "convert ms", "upd/SpMV", "vs csr", "params"},
                          rows)
                 .c_str(),
             stdout);
  std::string line =
      "CSR arrays copied into fresh memory (the CPU's counterpart of an upload; 'beyond copy' is the plan's "
      "time after it):";
  for (const std::string& c : copies) line += "\n  " + c;
  std::puts(line.c_str());
  if (args.has("json")) write_json_file(args.get("json"), json);
  return any_wrong ? 1 : 0;
}

}  // namespace

int cmd_bench(int argc, char** argv) {
  Args args(argc, argv, 2,
            {"help", "suite", "large", "no-peers", "deterministic", "transpose", "symmetric", "hermitian",
             "general"},
            {"formats", "backend", "index", "value", "threads", "device", "cache-dir", "iters", "json", "gen",
             "seed", "values", "timing", "duplicates", "vectors", "layout"});
  if (args.has("help")) {
    std::fputs(kHelp, stdout);
    return 0;
  }
  spmv_options_t o = options_from(args);
  // A complex file benches complex values unless --value says otherwise (which the reader refuses).
  const bool complex_file = file_is_complex(args);
  const ValueType value = args.has("value") ? value_from(args.get("value"))
                          : complex_file    ? ValueType::c64
                                            : ValueType::f64;
  const std::vector<std::string> formats = format_list(args.get("formats", "all"), o.vectors, value);
  const TimingModes timing = timing_modes(args);
  const std::string cache_dir = args.get("cache-dir");
  if (args.has("cache-dir")) o.cache_dir = cache_dir.c_str();
  const bool on_cuda = o.backend == SPMV_BACKEND_CUDA ||
                       (o.backend == SPMV_BACKEND_AUTO && backend_available(BackendKind::cuda, o.device));
  const bool on_gpu = on_cuda || o.backend == SPMV_BACKEND_HIP;
  if (!on_gpu && args.has("timing")) usage_error("--timing is for GPUs (the CPU times wall clock)");
  const int iters = int(args.get_int("iters", 20, 1, 1000000000));
  const bool peers = !args.has("no-peers");
  const BackendKind gpu = on_cuda ? BackendKind::cuda : BackendKind::hip;
  // One index type for every matrix (the GPU bench takes one): int64 when any needs it.
  IndexType index = IndexType::i32;
  if (is_complex(value)) {
    // Complex values: a complex file as it is (symmetric or hermitian ones declared so unless
    // --general), else each matrix's values as real parts with random imaginary parts.
    std::vector<std::pair<std::string, HostCsr<int64_t, std::complex<double>>>> matrices;
    Symmetry file = Symmetry::general;
    if (complex_file) {
      std::string name;
      matrices.emplace_back(std::string(), load_matrix_complex(args, &name, &file));
      matrices.back().first = name;
    } else {
      bool file_symmetric = false;
      const uint64_t seed = uint64_t(args.get_int("seed", 1, 0));
      for (const auto& [name, a] : bench_matrices(args, &file_symmetric))
        matrices.emplace_back(name, with_random_imaginary(a, seed));
    }
    for (auto& m : matrices) apply_symmetry(args, file, m.second, o);
    for (const auto& [name, a] : matrices)
      if (index_for(args, a.rows, a.cols, a.nnz()) == IndexType::i64) index = IndexType::i64;
    for (const auto& [name, a] : matrices) check_run_memory(a.rows, a.cols, a.nnz(), index, value);
    if (on_gpu)
      return bench_gpu(gpu, matrices, formats, o, index, value, iters, timing, peers, args.get("json"));
    return bench_cpu(args, matrices, formats, o, index, value);
  }
  bool file_symmetric = false;
  auto matrices = bench_matrices(args, &file_symmetric);
  for (auto& m : matrices)
    apply_symmetry(args, file_symmetric ? Symmetry::symmetric : Symmetry::general, m.second, o);
  for (const auto& m : matrices)
    if (index_for(args, m.second) == IndexType::i64) index = IndexType::i64;
  for (const auto& m : matrices) check_run_memory(m.second, index, value);
  if (on_gpu)  // device-event timing, copy bandwidth and the vendor peer (bench_gpu.cpp)
    return bench_gpu(gpu, matrices, formats, o, index, value, iters, timing, peers, args.get("json"));
  return bench_cpu(args, matrices, formats, o, index, value);
}

}  // namespace spmvjit::cli
