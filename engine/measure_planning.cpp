// Measure-mode planning (FFTW_MEASURE for SpMV): candidates are timed on the caller's matrix.
#include "engine/measure_planning.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <limits>
#include <vector>

#include "core/digest.hpp"
#include "core/log.hpp"
#include "engine/reference.hpp"

namespace spmvjit {
namespace {

// How many distinct formats are timed: the estimate's best plus the runners-up.
constexpr size_t kMeasuredFormats = 4;

using Clock = std::chrono::steady_clock;

// Median-of-batches seconds per SpMV with random x and a scratch y in the plan's memory.
double time_plan(Plan& p, Backend& b, int64_t rows, int64_t cols, ValueType v) {
  const size_t vs = size_of(v);
  std::vector<char> hx(size_t(cols) * vs), hy(size_t(rows) * vs);
  if (v == ValueType::f64) {
    auto x = random_vector<double>(cols, 7);
    std::copy(x.begin(), x.end(), reinterpret_cast<double*>(hx.data()));
  } else {
    auto x = random_vector<float>(cols, 7);
    std::copy(x.begin(), x.end(), reinterpret_cast<float*>(hx.data()));
  }
  void* x = hx.data();
  void* y = hy.data();
  if (!b.is_host()) {
    x = cols ? b.alloc(hx.size()) : nullptr;
    y = rows ? b.alloc(hy.size()) : nullptr;
    if (x) b.upload(x, hx.data(), hx.size());
  }
  const double one_d = 1, zero_d = 0;
  const float one_f = 1, zero_f = 0;
  const void* alpha = v == ValueType::f64 ? static_cast<const void*>(&one_d) : &one_f;
  const void* beta = v == ValueType::f64 ? static_cast<const void*>(&zero_d) : &zero_f;
  double best = std::numeric_limits<double>::infinity();
  try {
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
  } catch (...) {
    if (!b.is_host()) {
      if (x) b.free(x);
      if (y) b.free(y);
    }
    throw;
  }
  if (!b.is_host()) {
    if (x) b.free(x);
    if (y) b.free(y);
  }
  return best;
}

// Wisdom key: the exact pattern (row_ptr and col_idx digests), sizes, types and target.
std::string wisdom_path(const spmv_csr_t& a, const Plan& p, const std::string& dir) {
  if (dir.empty() || a.memory != SPMV_MEMORY_HOST) return "";
  const size_t is = a.index_type == SPMV_INDEX_INT32 ? 4 : 8;
  std::string key = std::to_string(a.rows) + "x" + std::to_string(a.cols) + ":" + std::to_string(a.nnz) +
                    ":" + std::to_string(a.index_base) + ":" + std::to_string(int(a.index_type)) + ":" +
                    std::to_string(int(a.value_type)) + ":" + to_string(p.backend_kind()) + ":" +
                    p.choice().format->name();  // the estimate's pick stands in for the target
  key += digest_hex(a.row_ptr, is * size_t(a.rows + 1));
  if (a.nnz) key += digest_hex(a.col_idx, is * size_t(a.nnz));
  return dir + "/wisdom/" + digest_hex(key.data(), key.size()) + ".txt";
}

}  // namespace

std::unique_ptr<Plan> plan_by_measurement(const spmv_csr_t& a, const spmv_options_t& options) {
  spmv_options_t o = options;
  o.planning = SPMV_PLANNING_ESTIMATE;
  o.format = nullptr;
  auto best = std::make_unique<Plan>(a, o);
  Backend& backend = get_backend(best->backend_kind(), options.device);
  const std::string dir = resolve_cache_dir(options.cache_dir);
  const std::string wisdom = wisdom_path(a, *best, dir);
  std::string remembered;
  if (!wisdom.empty()) {
    std::ifstream in(wisdom);
    std::getline(in, remembered);
  }
  if (!remembered.empty() && find_format(remembered)) {
    if (remembered != best->data().format) {
      o.format = remembered.c_str();
      auto p = std::make_unique<Plan>(a, o);
      p->set_measurements("wisdom", "measured earlier on this matrix (wisdom: " + wisdom + ")");
      return p;
    }
    best->set_measurements("wisdom", "measured earlier on this matrix (wisdom: " + wisdom + ")");
    return best;
  }
  // Distinct formats in estimate order; each is planned with its own best parameters.
  std::vector<std::string> names;
  for (const Candidate& c : best->choice().considered) {
    if (!std::isfinite(c.score) || names.size() >= kMeasuredFormats) break;
    if (std::find(names.begin(), names.end(), c.format->name()) == names.end()) names.push_back(c.format->name());
  }
  double best_time = time_plan(*best, backend, a.rows, a.cols, best->value_type());
  Json measured = Json::array({Json::object({{"format", best->data().format}, {"seconds", best_time}})});
  for (size_t i = 1; i < names.size(); ++i) {
    o.format = names[i].c_str();
    try {
      auto p = std::make_unique<Plan>(a, o);
      const double t = time_plan(*p, backend, a.rows, a.cols, p->value_type());
      measured.push_back(Json::object({{"format", names[i]}, {"seconds", t}}));
      if (t < best_time) best_time = t, best = std::move(p);
    } catch (const Error& e) {
      if (e.status() != SPMV_STATUS_UNSUPPORTED && e.status() != SPMV_STATUS_OUT_OF_MEMORY) throw;
      measured.push_back(Json::object({{"format", names[i]}, {"reason", e.what()}}));
    }
  }
  char why[160];
  std::snprintf(why, sizeof why, "fastest of %zu measured formats (%.3g us per SpMV)", names.size(), best_time * 1e6);
  best->set_measurements(std::move(measured), why);
  if (!wisdom.empty()) {
    ::mkdir((dir + "/wisdom").c_str(), 0755);
    std::ofstream out(wisdom + ".tmp");
    out << best->data().format << "\n";
    out.close();
    if (!out || std::rename((wisdom + ".tmp").c_str(), wisdom.c_str()) != 0)
      log_warn("wisdom: cannot write " + wisdom + "; the next plan of this matrix will measure again");
  }
  return best;
}

}  // namespace spmvjit
