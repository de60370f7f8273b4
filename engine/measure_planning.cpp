// Measure-mode planning (FFTW_MEASURE for SpMV): candidates are timed on the caller's matrix.
#include "engine/measure_planning.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <limits>
#include <vector>

#include "core/digest.hpp"
#include "core/log.hpp"
#include "core/private_file.hpp"
#include "engine/reference.hpp"
#include "runtime/device_buffer.hpp"
#include "spmvjit/version.h"

namespace spmvjit {
namespace {

// How many distinct formats are timed: the estimate's best plus the runners-up.
constexpr size_t kMeasuredFormats = 4;
// Vectors up to this size are always worth timing with; beyond it, only when the matrix is not
// much smaller than they are.
constexpr int64_t kMeasureVectorFloor = int64_t(256) << 20;

using Clock = std::chrono::steady_clock;

// Median-of-batches seconds per SpMV with random x and a scratch y in the plan's memory.
double time_plan(Plan& p, Backend& b, int64_t rows, int64_t cols, ValueType v) {
  const size_t vs = size_of(v);
  std::vector<char> hx(size_t(cols) * vs), hy(size_t(rows) * vs);
  // Random values for every part (complex values are pairs of parts).
  const int64_t parts = int64_t(hx.size() / size_of(real_type(v)));
  if (real_type(v) == ValueType::f64) {
    auto x = random_vector<double>(parts, 7);
    std::copy(x.begin(), x.end(), reinterpret_cast<double*>(hx.data()));
  } else {
    auto x = random_vector<float>(parts, 7);
    std::copy(x.begin(), x.end(), reinterpret_cast<float*>(hx.data()));
  }
  void* x = hx.data();
  void* y = hy.data();
  DeviceBuffer dx, dy;  // freed on every way out, also when execute throws
  if (!b.is_host()) {
    dx = DeviceBuffer(b, hx.size());
    dy = DeviceBuffer(b, hy.size());
    if (dx) b.upload(dx.get(), hx.data(), hx.size());
    x = dx.get();
    y = dy.get();
  }
  // 1 and 0 of any value type: the real part first, the imaginary part (if any) zero.
  const double one_d[2] = {1, 0}, zero_d[2] = {0, 0};
  const float one_f[2] = {1, 0}, zero_f[2] = {0, 0};
  const bool wide = real_type(v) == ValueType::f64;
  const void* alpha = wide ? static_cast<const void*>(one_d) : one_f;
  const void* beta = wide ? static_cast<const void*>(zero_d) : zero_f;
  double best = std::numeric_limits<double>::infinity();
  p.wait_for_kernels();                   // time the specialized kernel, not its run-time epilogue stand-in
  p.execute(alpha, x, beta, y, nullptr);  // warm caches and clocks
  b.synchronize(nullptr);
  const auto start = Clock::now();
  for (int batch = 0; batch < 7; ++batch) {
    // Batches of back-to-back SpMVs: the launch and synchronization cost is amortized.
    const auto t0 = Clock::now();
    for (int i = 0; i < 4; ++i) p.execute(alpha, x, beta, y, nullptr);
    b.synchronize(nullptr);
    best = std::min(best, std::chrono::duration<double>(Clock::now() - t0).count() / 4);
    if (batch >= 2 && std::chrono::duration<double>(Clock::now() - start).count() > 0.05) break;
  }
  return best;
}

// Layout of wisdom entries: bump when an entry's meaning changes.
constexpr int64_t kWisdomLayout = 1;
// An entry is a few hundred bytes; a file beyond this is not one and is not read.
constexpr size_t kMaxWisdomBytes = size_t(1) << 20;

// Where this matrix's wisdom lives and what an entry there must say to be used.
struct WisdomSlot {
  std::string dir, path;  // path "" when this plan keeps no wisdom
  BackendKind backend = BackendKind::cpu;
  std::string target;  // the exact target (CPU features digest, sm_XY)
  Json matrix;         // sizes, types and threads: an entry for another shape is not this one's
};

// The key hashes the exact pattern (row_ptr and col_idx), sizes, types, thread option, backend and
// target. Only host arrays sane enough to hash are keyed; the plan validates the rest.
WisdomSlot wisdom_slot(const spmv_csr_t& a, const spmv_options_t& o, const std::string& cache_dir) {
  WisdomSlot w;
  const bool i32 = a.index_type == SPMV_INDEX_INT32;
  if (cache_dir.empty() || a.memory != SPMV_MEMORY_HOST || a.rows < 0 || a.cols < 0 || a.nnz < 0 ||
      !a.row_ptr || (a.nnz && !a.col_idx) || (!i32 && a.index_type != SPMV_INDEX_INT64))
    return w;
  w.backend = pick_backend(o.backend, o.device);
  Backend& backend = get_backend(w.backend, o.device);
  backend.use_cache_dir(cache_dir);
  w.target = backend.target().target;
  w.matrix = Json::object({{"rows", a.rows},
                           {"cols", a.cols},
                           {"nnz", a.nnz},
                           {"index_base", a.index_base},
                           {"index", i32 ? "int32" : "int64"},
                           {"value", a.value_type == SPMV_VALUE_FLOAT           ? "float"
                                     : a.value_type == SPMV_VALUE_DOUBLE        ? "double"
                                     : a.value_type == SPMV_VALUE_COMPLEX_FLOAT ? "complex_float"
                                                                                : "complex_double"},
                           {"threads", o.threads},
                           {"deterministic", o.deterministic != 0},
                           {"operation", int(o.operation)}});
  if (o.matrix_type != SPMV_MATRIX_GENERAL)  // general matrices keep their older keys
    w.matrix["symmetric"] = o.fill_mode == SPMV_FILL_UPPER ? "upper" : "lower";
  if (o.matrix_type == SPMV_MATRIX_HERMITIAN &&
      (a.value_type == SPMV_VALUE_COMPLEX_FLOAT || a.value_type == SPMV_VALUE_COMPLEX_DOUBLE))
    w.matrix["hermitian"] = true;  // real symmetric matrices keep theirs
  const size_t is = i32 ? 4 : 8;
  std::string key = Json::array({w.matrix, to_string(w.backend), w.target}).dump();
  key += digest_hex(a.row_ptr, is * size_t(a.rows + 1));
  if (a.nnz) key += digest_hex(a.col_idx, is * size_t(a.nnz));
  // Both directories pass the kernel cache's checks (ours, 0700 when created, not writable by
  // others), else no wisdom: the kernel cache warns about its directory, this only says why.
  w.dir = cache_dir + "/wisdom";
  for (const std::string& d : {cache_dir, w.dir})
    if (const std::string why = ensure_private_dir(d); !why.empty()) {
      log_info("wisdom: not used: " + why);
      return w;
    }
  w.path = w.dir + "/" + digest_hex(key) + ".json";
  return w;
}

// Why `e` cannot be replayed here ("" when it can). Whether its parameters still apply to this
// matrix is the plan's to say (Plan with forced parameters).
std::string wisdom_mismatch(const Json& e, const WisdomSlot& w) {
  if (e["layout"] != Json(kWisdomLayout))
    return "layout " + e["layout"].dump() + ", not " + std::to_string(kWisdomLayout);
  if (e["version"] != Json(SPMVJIT_VERSION_STRING))
    return "written by spmvjit " + e["version"].dump() + ", this is " SPMVJIT_VERSION_STRING;
  if (e["backend"] != Json(to_string(w.backend)) || e["target"] != Json(w.target))
    return "measured on " + e["backend"].dump() + " " + e["target"].dump() + ", not " + w.target;
  if (e["matrix"] != w.matrix) return "for a matrix " + e["matrix"].dump();
  const Json& f = e["format"];
  if (f.type() != Json::Type::string || !find_format(f.as_string())) return "unknown format " + f.dump();
  if (!e["params"].is_object()) return "no parameters";
  for (const auto& [k, v] : e["params"].members())
    if (v.type() != Json::Type::integer) return "parameter " + k + " is " + v.dump();
  return "";
}

// The entry at w.path when it is one to replay, else null (an unusable file is logged). Read under
// the cache's own checks: a regular file of this user's, not followed through a symlink, bounded.
Json read_wisdom(const WisdomSlot& w) {
  std::vector<char> bytes;
  std::string why;
  switch (read_private_file(w.path, kMaxWisdomBytes, &bytes, &why)) {
    case ReadStatus::absent: return nullptr;  // no wisdom yet
    case ReadStatus::rejected:
      // Not what a planner writes: someone (or something) put it there, worth a warning.
      log_warn("wisdom: ignoring " + w.path + " (" + why + "); measuring again");
      return nullptr;
    case ReadStatus::ok: break;
  }
  Json e;
  try {
    e = Json::parse(std::string(bytes.begin(), bytes.end()));
    why = wisdom_mismatch(e, w);
  } catch (const Error& err) {
    why = err.what();
  }
  if (why.empty()) return e;
  // Stale (another build, target or layout) or torn: expected now and then, measured again.
  log_info("wisdom: ignoring " + w.path + " (" + why + "); measuring again");
  return nullptr;
}

void write_wisdom(const WisdomSlot& w, const Plan& best, double seconds, const Json& measured) {
  const Json e = Json::object({{"layout", kWisdomLayout},
                               {"version", SPMVJIT_VERSION_STRING},
                               {"backend", to_string(w.backend)},
                               {"target", w.target},
                               {"matrix", w.matrix},
                               {"format", best.data().format},
                               {"params", params_json(best.data().params)},
                               {"seconds", seconds},
                               {"measured", measured}});
  const std::string text = e.dump() + "\n";
  try {
    write_file_atomically(w.path, text.data(), text.size());
  } catch (const Error& err) {
    log_warn(std::string("wisdom: ") + err.what() + "; the next plan of this matrix will measure again");
  }
}

}  // namespace

std::unique_ptr<Plan> plan_by_measurement(const spmv_csr_t& a, const spmv_options_t& options) {
  spmv_options_t o = options;
  o.planning = SPMV_PLANNING_ESTIMATE;
  o.format = nullptr;
  // Wisdom never fails a plan: a slot that cannot be computed, an entry that does not match, or
  // parameters that no longer apply all mean measuring again (a bad matrix or option then fails
  // there, with the plan's own message).
  WisdomSlot wisdom;
  Json entry;
  try {
    wisdom = wisdom_slot(a, options, resolve_cache_dir(options.cache_dir));
    if (!wisdom.path.empty()) entry = read_wisdom(wisdom);
  } catch (const Error& e) {
    log_info(std::string("wisdom: not used: ") + e.what());
  }
  if (!entry.is_null()) {
    // One plan, straight to the remembered format and parameters.
    const std::string format = entry["format"].as_string();
    FormatParams params;
    for (const auto& [k, v] : entry["params"].members()) params[k] = v.as_int();
    o.format = format.c_str();
    try {
      auto p = std::make_unique<Plan>(a, o, nullptr, &params);
      entry["file"] = wisdom.path;
      p->set_measurements(entry, "measured earlier on this matrix (wisdom: " + wisdom.path + ")");
      return p;
    } catch (const Error& e) {
      log_info("wisdom: ignoring " + wisdom.path + " (" + e.what() + "); measuring again");
    }
    o.format = nullptr;
  }
  auto best = std::make_unique<Plan>(a, o);
  Backend& backend = get_backend(best->backend_kind(), options.device);
  // Distinct formats in estimate order; each is planned with its own best parameters.
  std::vector<std::string> names;
  for (const Candidate& c : best->choice().considered) {
    if (!std::isfinite(c.score) || names.size() >= kMeasuredFormats) break;
    if (std::find(names.begin(), names.end(), c.format->name()) == names.end())
      names.push_back(c.format->name());
  }
  // Timing needs x and y of the matrix's shape: for a matrix far wider or taller than its
  // nonzeros (3 x 2^37 with 5 entries), vectors that dwarf the matrix are not worth measuring.
  const int64_t vector_bytes = (a.rows + a.cols) * int64_t(size_of(best->value_type()));
  if (vector_bytes > std::max<int64_t>(kMeasureVectorFloor, 4 * best->data().matrix_bytes)) {
    char why[200];
    std::snprintf(why, sizeof why,
                  "the estimate's choice, not measured: x and y would take %.3g MB, more than 4x the "
                  "matrix's %.3g MB",
                  double(vector_bytes) * 1e-6, double(best->data().matrix_bytes) * 1e-6);
    best->set_measurements(Json::array(), why);
    return best;
  }
  double best_time = time_plan(*best, backend, best->rows(), best->cols(), best->value_type());
  Json measured = Json::array({Json::object({{"format", best->data().format},
                                             {"params", params_json(best->data().params)},
                                             {"seconds", best_time}})});
  for (size_t i = 1; i < names.size(); ++i) {
    o.format = names[i].c_str();
    try {
      auto p = std::make_unique<Plan>(a, o);
      const double t = time_plan(*p, backend, p->rows(), p->cols(), p->value_type());
      measured.push_back(
          Json::object({{"format", names[i]}, {"params", params_json(p->data().params)}, {"seconds", t}}));
      if (t < best_time) best_time = t, best = std::move(p);
    } catch (const Error& e) {
      if (e.status() != SPMV_STATUS_UNSUPPORTED && e.status() != SPMV_STATUS_OUT_OF_MEMORY) throw;
      measured.push_back(Json::object({{"format", names[i]}, {"reason", e.what()}}));
    }
  }
  char why[160];
  std::snprintf(why, sizeof why, "fastest of %zu measured formats (%.3g us per SpMV)", names.size(),
                best_time * 1e6);
  if (!wisdom.path.empty() && best->backend_kind() == wisdom.backend)
    write_wisdom(wisdom, *best, best_time, measured);
  best->set_measurements(std::move(measured), why);
  return best;
}

}  // namespace spmvjit
