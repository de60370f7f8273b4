// `spmvjit bench --backend cuda|hip`: our formats vs the vendor library and the device's copy
// bandwidth.
#include <algorithm>
#include <cmath>
#include <cstdio>

#include "tools/spmvjit/cli.hpp"
#include "tools/spmvjit/gpu_bench.hpp"
#include "tools/spmvjit/measure.hpp"
#include "tools/spmvjit/progress.hpp"

#ifdef SPMVJIT_WITH_HIP
#include "runtime/hip/hip_backend.hpp"
#endif

namespace spmvjit::cli {
namespace {

// Buffer size of the copy-bandwidth probe: far beyond any L2.
constexpr size_t kCopyBytes = size_t(1) << 30;

std::string pct(double part, double whole) {
  return whole > 0 && part > 0 ? fmt(100.0 * part / whole, 1) : "-";
}

// The number of SpMVs after which plan + N * t costs no more than the peer's setup + N * its time:
// -1 when never (not faster per SpMV).
double break_even(double plan, double t, double setup, double peer_t) {
  if (t >= peer_t) return -1;
  return std::max(0.0, std::ceil((plan - setup) / (peer_t - t)));
}

}  // namespace

template <class M>
int bench_gpu(BackendKind kind, const std::vector<std::pair<std::string, HostCsr<int64_t, M>>>& matrices,
              const std::vector<std::string>& formats, const spmv_options_t& options, IndexType index,
              ValueType value, int iters, TimingModes timing, bool peers, const std::string& json_path) {
  const int device = options.device;
  const bool hip = kind == BackendKind::hip;
  // k vectors (spmm_execute): cuSPARSE's SpMM the peer, its fastest algorithm the yardstick.
  const int64_t vectors = std::max(options.vectors, 1);
  const bool row_major = options.layout == SPMV_LAYOUT_ROW_MAJOR;
  const bool transpose = options.operation != SPMV_OPERATION_NON_TRANSPOSE;
  if (hip && (vectors > 1 || transpose || is_complex_v<M>))
    peers = false;  // rocSPARSE's SpMM, transpose and complex types are not wired as peers
  if (!gpu_timing_available(kind, device)) {
    std::string why = "no CUDA device/driver for --backend cuda";
#ifdef SPMVJIT_WITH_HIP
    if (hip && !hip_runtime_loaded(&why)) fail(SPMV_STATUS_NO_DEVICE, why);
#endif
    fail(SPMV_STATUS_NO_DEVICE, hip ? "no HIP device for --backend hip" : why);
  }
  const std::string device_name = gpu_device_name(kind, device);
  std::string peer_name;
  if (peers) {
    // The peer library is loaded at run time: without it, said once, and every matrix runs
    // without it.
    std::string why;
    peer_name = hip ? rocsparse_peer(&why) : cusparse_peer(&why);
    if (peer_name.empty())
      std::fprintf(stderr, "spmvjit bench: %s not compared: %s\n", hip ? "rocSPARSE" : "cuSPARSE",
                   why.c_str());
    peers = !peer_name.empty();
  }
  const double copy_gbs = gpu_copy_bandwidth_gbs(kind, device, kCopyBytes);
  std::printf("device %d: %s\ndevice-to-device copy: %.1f GB/s (%s of %zu bytes, read + written)\n", device,
              device_name.c_str(), copy_gbs, hip ? "hipMemcpy" : "cuMemcpyDtoD", kCopyBytes);
  if (peers) std::printf("peer: %s\n", peer_name.c_str());
  if (vectors > 1)
    std::printf(
        "%lld vectors, %s (spmm_execute; cuSPARSE SpMM CSR ALG1-3; 'vs best' is against the "
        "fastest of them)\n",
        (long long)vectors, row_major ? "row-major" : "column-major");
  if (transpose)
    std::printf(
        "op(A) = A^T: spmvjit plans build A^T (their plan time includes it); cuSPARSE multiplies A with "
        "CUSPARSE_OPERATION_TRANSPOSE\n");
  std::printf(
      "index %s, value %s; times are medians of %s-event intervals: 'ms' between back-to-back SpMVs%s%s\n",
      to_string(index), to_string(value), hip ? "HIP" : "CUDA",
      timing.cold ? ", 'cold ms' with the L2 flushed before each SpMV" : "",
      timing.sync ? ", 'sync ms' one SpMV per synchronization" : "");
  std::fflush(stdout);
  std::vector<std::vector<std::string>> rows;
  Json json = Json::object({{"device", device_name},
                            {"peer", peers ? Json(peer_name) : Json()},
                            {"copy_gbs", copy_gbs},
                            {"index", to_string(index)},
                            {"vectors", vectors},
                            {"layout", row_major ? "row" : "col"},
                            {"value", to_string(value)},
                            {"timing", Json::array()},
                            {"results", Json::array()}});
  for (const char* m : {"warm", timing.cold ? "cold" : "", timing.sync ? "sync" : ""})
    if (*m) json["timing"].push_back(m);
  Json& results = json["results"];
  bool any_wrong = false;
  // "break-even": SpMVs after which plan + N SpMVs beats cuSPARSE's setup (upload, descriptors,
  // workspace, preprocess) + N SpMVs, with whichever of ALG1/ALG2 is faster; for the CSR already
  // in device memory ("device:" rows) without either upload. Warm times throughout.
  // A row: matrix, format, then ms, cold ms, sync ms, then the rest; the optional timing columns
  // dropped when not run.
  auto row = [&](std::vector<std::string> r) {
    if (!timing.cold) r.erase(r.begin() + 8);  // from the back: the indices before stay put
    if (!timing.sync) r.erase(r.begin() + 4);
    if (!timing.cold) r.erase(r.begin() + 3);
    return r;
  };
  const std::vector<std::string> header =
      row({"matrix", "format", "ms", "cold ms", "sync ms", "CSR-eq GB/s", "% copy",
           hip           ? "vs stream"
           : vectors > 1 ? "vs best"
                         : "vs ALG1",
           hip           ? "cold vs stream"
           : vectors > 1 ? "cold vs best"
                         : "cold vs ALG1",
           "plan ms", "plan/SpMV", "break-even", "upd/SpMV", "compile ms", "params"});
  auto failed = [&](const std::string& name, const std::string& label, const std::string& why) {
    std::vector<std::string> r(15, "-");
    r[0] = name, r[1] = label, r[14] = why.substr(0, 70);
    return row(r);
  };
  auto ms = [](double s) { return s > 0 ? fmt(s * 1e3, 4) : std::string("-"); };
  auto ratio = [](double peer, double s) { return peer > 0 && s > 0 ? fmt(peer / s, 2) : std::string("-"); };
  auto opt = [](double v) { return v > 0 ? Json(v) : Json(); };
  // After the planner's own pick: the same for the CSR already in device memory ("device:").
  std::vector<std::string> runs;
  for (const std::string& f : formats) {
    runs.push_back(f == "auto" ? "" : f);
    if (runs.back().empty() && std::find(formats.begin(), formats.end(), "device") == formats.end())
      runs.push_back("device");
  }
  Progress progress;
  for (size_t m = 0; m < matrices.size(); ++m) {
    const auto& [name, a] = matrices[m];
    const size_t first_row = rows.size();
    CusparseResult peer;
    if (peers) {
      progress.update(bench_step(m, matrices.size(), name, 0, 0, hip ? "rocSPARSE" : "cuSPARSE"));
      if constexpr (!is_complex_v<M>)
        if (hip) peer = rocsparse_spmv(device, a, index, value, iters, 0.2, timing);
      if (!hip)
        peer = cusparse_spmv(device, a, index, value, iters, 0.2, timing, vectors, row_major, transpose);
    }
    if (!peer.ok && peer.error.find("WRONG") != std::string::npos) any_wrong = true;
    // The yardstick: ALG1 for one vector (rocSPARSE: stream), the fastest algorithm for several.
    const int faster = std::max(peer.fastest(), 0), yard = vectors > 1 ? faster : 0;
    const double alg1 = peer.ok ? peer.s[yard] : 0, alg1_cold = peer.ok ? peer.cold_s[yard] : 0;
    const double peer_s = peer.s[faster], peer_setup_s = peer.setup_s[faster];
    double csr_bytes = 0, best_s = 0, best_cold_s = 0;
    std::string best, best_cold;
    for (size_t k = 0; k < runs.size(); ++k) {
      const std::string& f = runs[k];
      progress.update(bench_step(m, matrices.size(), name, k, runs.size(), f.empty() ? "auto" : f));
      const MeasureResult r = measure(a, index, value, options, f, iters, 0.2, timing);
      const std::string label = f.empty() || f == "measure" || f == "device" || f == "general"
                                    ? (f.empty() ? "auto" : f) + ":" + r.format
                                    : r.format;
      if (!r.ok) {
        any_wrong |= r.error.rfind("WRONG", 0) == 0;
        rows.push_back(failed(name, label, r.error));
        results.push_back(
            Json::object({{"matrix", name}, {"format", label}, {"ok", false}, {"reason", r.error}}));
        continue;
      }
      csr_bytes = r.csr_bytes;
      if (best_s == 0 || r.exec_s < best_s) best_s = r.exec_s, best = label;
      if (r.exec_cold_s > 0 && (best_cold_s == 0 || r.exec_cold_s < best_cold_s))
        best_cold_s = r.exec_cold_s, best_cold = label;
      const double even =
          peer.ok ? break_even(r.plan_s, r.exec_s, peer_setup_s - (f == "device" ? peer.upload_s : 0), peer_s)
                  : -2;
      rows.push_back(
          row({name, label, ms(r.exec_s), ms(r.exec_cold_s), ms(r.exec_sync_s), fmt(r.csr_gbs(), 1),
               pct(r.csr_gbs(), copy_gbs), ratio(alg1, r.exec_s), ratio(alg1_cold, r.exec_cold_s),
               fmt(r.plan_s * 1e3, 1), fmt(r.plan_s / r.exec_s, 0),
               even == -2 ? "-"
               : even < 0 ? "never"
                          : fmt(even, 0),
               r.update_s > 0 ? fmt(r.update_s / r.exec_s, 1) : "-",
               r.cache == "compiled" ? fmt(r.compile_s * 1e3, 1) : r.cache, r.params.dump()}));
      results.push_back(
          Json::object({{"matrix", name},
                        {"format", label},
                        {"ok", true},
                        {"spmv_seconds", r.exec_s},
                        {"spmv_cold_seconds", opt(r.exec_cold_s)},
                        {"spmv_sync_seconds", opt(r.exec_sync_s)},
                        {"csr_gbs", r.csr_gbs()},
                        {"gbs", r.gbs()},
                        {"pct_copy", copy_gbs > 0 ? 100 * r.csr_gbs() / copy_gbs : 0},
                        {"vs_cusparse_alg1", alg1 > 0 ? alg1 / r.exec_s : 0},
                        {"vs_cusparse_alg1_cold",
                         alg1_cold > 0 && r.exec_cold_s > 0 ? Json(alg1_cold / r.exec_cold_s) : Json()},
                        {"plan_spmvs", r.plan_s / r.exec_s},
                        {"plan_seconds", r.plan_s},
                        {"plan_first_seconds", r.plan_first_s > 0 ? Json(r.plan_first_s) : Json()},
                        {"break_even_spmvs", even == -2 ? Json() : Json(even)},
                        {"compile_seconds", r.compile_s},
                        {"update_seconds", opt(r.update_s)},
                        {"update_first_seconds", r.update_s > 0 ? Json(r.update_first_s) : Json()},
                        {"update_spmvs", r.update_s > 0 ? Json(r.update_s / r.exec_s) : Json()},
                        {"cache", r.cache},
                        {"params", r.params},
                        {"timings", r.describe["timings"]}}));
    }
    if (peers) {
      if (!peer.ok) {
        rows.push_back(failed(name, hip ? "rocsparse" : "cusparse", peer.error));
        results.push_back(Json::object({{"matrix", name},
                                        {"format", hip ? "rocsparse" : "cusparse"},
                                        {"ok", false},
                                        {"reason", peer.error}}));
      } else {
        for (int k = 0; k < peer.count; ++k) {
          const double s = peer.s[k], setup = peer.setup_s[k];
          const double gbs = csr_bytes > 0 && s > 0 ? csr_bytes / s * 1e-9 : 0;
          const std::string label =
              hip ? (k ? "rocsparse-adaptive" : "rocsparse-stream")
                  : (vectors > 1 ? "cusparse-mm-alg" : "cusparse-alg") + std::to_string(k + 1);
          if (s == 0) {
            rows.push_back(failed(name, label, peer.skipped[k]));
            results.push_back(Json::object(
                {{"matrix", name}, {"format", label}, {"ok", false}, {"reason", peer.skipped[k]}}));
            continue;
          }
          rows.push_back(row({name, label, ms(s), ms(peer.cold_s[k]), ms(peer.sync_s[k]), fmt(gbs, 1),
                              pct(gbs, copy_gbs), ratio(alg1, s), ratio(alg1_cold, peer.cold_s[k]),
                              fmt(setup * 1e3, 1), fmt(setup / s, 0), "-", "-", "-", "peer (plan = setup)"}));
          results.push_back(Json::object({{"matrix", name},
                                          {"format", label},
                                          {"ok", true},
                                          {"spmv_seconds", s},
                                          {"spmv_cold_seconds", opt(peer.cold_s[k])},
                                          {"spmv_sync_seconds", opt(peer.sync_s[k])},
                                          {"csr_gbs", gbs},
                                          {"setup_seconds", setup},
                                          {"upload_seconds", peer.upload_s},
                                          {"pct_copy", copy_gbs > 0 ? 100 * gbs / copy_gbs : 0}}));
        }
      }
    }
    if (best_s > 0) {
      std::string label = "= best: " + best;
      if (best_cold_s > 0 && best_cold != best) label += " (cold: " + best_cold + ")";
      rows.push_back(row({name, label, ms(best_s), ms(best_cold_s), "", fmt(csr_bytes / best_s * 1e-9, 1),
                          pct(csr_bytes / best_s * 1e-9, copy_gbs), ratio(alg1, best_s),
                          ratio(alg1_cold, best_cold_s), "", "", "", "", "", ""}));
    }
    // One table per matrix as it completes: a long suite shows progress and survives a timeout.
    progress.clear();
    std::fputs(format_table(header, {rows.begin() + long(first_row), rows.end()}).c_str(), stdout);
    std::fflush(stdout);
  }
  progress.done();
  if (matrices.size() > 1) std::fputs(("\nall matrices:\n" + format_table(header, rows)).c_str(), stdout);
  if (!json_path.empty()) write_json_file(json_path, json);
  return any_wrong ? 1 : 0;
}

template int bench_gpu(BackendKind, const std::vector<std::pair<std::string, HostCsr<int64_t, double>>>&,
                       const std::vector<std::string>&, const spmv_options_t&, IndexType, ValueType, int,
                       TimingModes, bool, const std::string&);
template int bench_gpu(BackendKind,
                       const std::vector<std::pair<std::string, HostCsr<int64_t, std::complex<double>>>>&,
                       const std::vector<std::string>&, const spmv_options_t&, IndexType, ValueType, int,
                       TimingModes, bool, const std::string&);

}  // namespace spmvjit::cli
