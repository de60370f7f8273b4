// Planner: enumerate candidates of every format, estimate bytes and overheads, pick the cheapest.
#include "engine/planner.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <limits>
#include <mutex>
#include <thread>

#include <time.h>

#include "core/log.hpp"
#include "core/parallel.hpp"
#include "engine/value_codec.hpp"

namespace spmvjit {

Json PlanChoice::considered_json() const {
  Json out = Json::array();
  for (const Candidate& c : considered)
    out.push_back(Json::object(
        {{"format", c.format->name()},
         {"params", params_json(c.params)},
         {"applicable", c.estimate.applicable},
         {"offered", c.estimate.offered},  // false: taken only when forced (Estimate::offered)
         {"matrix_bytes", c.estimate.matrix_bytes},
         {"cost", std::isfinite(c.score) ? Json(c.score) : Json()},  // null: not applicable, or not offered
         {"reason", c.estimate.reason}}));
  return out;
}

const Format* parse_format_option(const char* name) {
  if (!name || !*name || std::string(name) == "auto") return nullptr;
  if (const Format* f = find_format(name)) return f;
  std::string known;
  for (const Format* f : all_formats()) known += (known.empty() ? "" : ", ") + f->name();
  fail(SPMV_STATUS_INVALID_VALUE, "unknown format '" + std::string(name) + "'; known: " + known);
}

bool value_compression_enabled() {
  static const bool on = [] {
    const char* e = std::getenv("SPMVJIT_VALUE_COMPRESSION");
    return !e || std::string(e) != "0";
  }();
  return on;
}

namespace {

// Threads that share out the formats' estimates. Only on machines with at least
// kEstimateMinThreads threads: on a 2-vCPU VM two threads took 2.3-5.6 ms where one took 1.3-2.9
// (inspect of varband:300000, circuit:4000000 and dense:2000 for sm_90; a new thread's stack and
// malloc arena cost page faults there). Eight, not four: the estimates of device-resident input
// on an H200's host took 0.47 / 0.48 ms with eight threads against 0.57-0.76 / 0.61 with four
// (blockfem:40:3 / denserows:1000000:10:16, where bsr, sell, sellp and sell_diag each take
// 0.2-0.35 ms), and the same on stencil27:100 and varband:300000, whose bsr estimate is the pole.
constexpr int kEstimateThreads = 8, kEstimateMinThreads = 8;

// SPMVJIT_ESTIMATE_THREADS=N: that many threads instead (a measuring knob; 0 or unset: the rule
// above).
// This thread's CPU time in seconds, for the trace's split of an estimate's wall time into work
// and waiting (a syscall on some kernels: only taken when tracing).
double thread_cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return double(ts.tv_sec) + 1e-9 * double(ts.tv_nsec);
}

int estimate_threads_env() {
  static const int n = [] {
    const char* e = std::getenv("SPMVJIT_ESTIMATE_THREADS");
    return e ? std::clamp(std::atoi(e), 0, 64) : 0;
  }();
  return n;
}

// A candidate whose values are stored with `codec`: the value bytes it no longer reads, and on
// code8 a lookup per entry in a table that stays in cache.
Candidate compressed(Candidate c, ValueCodec codec, const ValueTable& table, const TargetInfo& t) {
  const int64_t stored = c.estimate.stored_entries;
  const int64_t saved = stored * (int64_t(size_of(table.type)) - codec_entry_bytes(codec, table.type));
  c.params = with_codec(c.params, codec);
  c.estimate.matrix_bytes -= saved;
  c.estimate.cost_bytes -= double(saved);
  if (codec == ValueCodec::code8) c.estimate.cost_bytes += kCode8LookupBytes[t.gpu()] * double(stored);
  char buf[96];
  std::snprintf(buf, sizeof buf, "; values %s (%zu distinct in the sample)", to_string(codec),
                table.bits.size());
  c.estimate.reason += buf;
  return c;
}

}  // namespace

std::string value_type_refusal(const Format& f, ValueType v) {
  std::string which;
  for (const Format* g : all_formats())
    if (g->supports_value(v)) which += (which.empty() ? "" : ", ") + g->name();
  return "format '" + f.name() + "' does not support " + to_string(v) + " values (formats that do: " + which +
         ")";
}

PlanChoice choose_format(const CsrRef& a, const MatrixStats& s, const TargetInfo& t, const Format* forced,
                         const ChoiceOptions& o) {
  const bool device_input = o.device_input;
  const FormatParams* only = o.only;
  const auto t0 = std::chrono::steady_clock::now();
  const bool automatic = forced == nullptr;
  PlanChoice choice;
  TraceSteps trace("estimate");
  const bool many = o.vectors > 1;
  if (many && forced && !forced->multi_vector())
    fail(SPMV_STATUS_UNSUPPORTED, "format '" + forced->name() +
                                      "' multiplies one vector at a time; a plan for " +
                                      std::to_string(o.vectors) +
                                      " vectors takes a format that multiplies several "
                                      "(csr_mm, or auto)");
  // Compressed values are real only (stage 1 of complex support: complex values are stored plain).
  if (value_compression_enabled() && s.sample && !is_complex(a.value))
    choice.sample_values = sample_values(*s.sample);
  trace.step("sample values");
  // The formats to estimate, in registry order.
  std::vector<const Format*> formats;
  for (const Format* f : all_formats()) {
    if (!f->supports(t.backend) || (!automatic && f != forced)) continue;
    // Several vectors: the formats that multiply them; one: the others (a forced one takes k = 1).
    if (automatic && f->multi_vector() != many) continue;
    if (device_input && !f->converts_on_device()) continue;
    if (!f->supports_value(a.value) && !automatic)
      fail(SPMV_STATUS_UNSUPPORTED, value_type_refusal(*f, a.value));
    formats.push_back(f);
  }
  // Each format's candidates, then each candidate's estimates, as separate tasks shared out among
  // a few threads (they read the statistics and the sample only): first the formats' independent
  // parts (estimate_parts: bsr's census, a task per block height) and their candidates(), then
  // every candidate's estimate. The candidates are kept in registry order, so the choice does
  // not depend on the thread count. One format's estimates took up to 0.9 ms (bsr's census on
  // dense:2000), all of them together 0.7-1.8 ms of a 3-5 ms device plan on the large suite (H200
  // host, 2026-11-28); with a task per format, bsr's census, sell's four candidates and sellp's
  // six each ran on one thread.
  using Clock = std::chrono::steady_clock;
  struct Listed {
    FormatParams params;
    std::string nondeterministic;
    std::vector<Candidate> found;  // its estimate, then the same with compressed values
    double seconds = 0, cpu = 0;
  };
  std::vector<std::vector<Listed>> listed(formats.size());
  std::vector<std::vector<Candidate>> refused(formats.size());  // formats without these values
  std::vector<double> seconds(formats.size()), cpu(formats.size());
  // Traced plans also split each format's time into CPU time and the rest (waiting: for a lock,
  // another thread's part, a core): on an H200's host the estimates took several times what they
  // take on one thread of the 2-vCPU VM.
  const bool timed = log_enabled(SPMV_LOG_TRACE);
  auto list_format = [&](size_t i) {
    const auto f0 = Clock::now();
    const double c0 = timed ? thread_cpu_seconds() : 0;
    const Format* f = formats[i];
    if (!f->supports_value(a.value)) {  // listed, so describe says why it was not taken
      Candidate c{f, {}, Estimate{}, std::numeric_limits<double>::infinity()};
      c.estimate.applicable = false;
      c.estimate.reason = std::string("no ") + to_string(a.value) + " values";
      refused[i].push_back(c);
      return;
    }
    for (FormatParams p : f->candidates(a, s, t)) {
      if (f->multi_vector()) {  // k and the layout are kernel constants (k beyond 32: blocks of vectors)
        p[kVectorsParam] = baked_vectors(o.vectors);
        p[kLayoutParam] = o.row_major ? 1 : 0;
      }
      if (device_input && !f->device_convertible(p)) continue;
      std::string nondeterministic = o.deterministic ? f->make_deterministic(p, t) : "";
      if (only && p != with_codec(*only, ValueCodec::plain)) continue;
      listed[i].push_back(Listed{std::move(p), std::move(nondeterministic), {}, 0});
    }
    seconds[i] = std::chrono::duration<double>(Clock::now() - f0).count();
    if (timed) cpu[i] = thread_cpu_seconds() - c0;
  };
  auto estimate_one = [&](size_t i, Listed& l) {
    const auto f0 = Clock::now();
    const double c0 = timed ? thread_cpu_seconds() : 0;
    const Format* f = formats[i];
    Candidate c{f, l.params, f->estimate(a, s, l.params, t), 0};
    if (!l.nondeterministic.empty()) {
      c.estimate.applicable = false;
      c.estimate.reason = "not deterministic: " + l.nondeterministic;
    }
    auto add = [&](Candidate c) {
      if (only && c.params != *only) return;
      c.score = c.estimate.applicable && (c.estimate.offered || only)
                    ? c.estimate.cost_bytes * std::max(1.0, c.estimate.imbalance)
                    : std::numeric_limits<double>::infinity();
      c.score *= f->efficiency(s, t);
      l.found.push_back(c);
    };
    add(c);
    // The same candidate with compressed values, when the sample says they may be.
    ValueTable table;
    const ValueCodec codec = choice.sample_values && c.estimate.applicable
                                 ? codec_for(*choice.sample_values, c.estimate.stored_entries, a.nnz, &table)
                                 : ValueCodec::plain;
    if (codec != ValueCodec::plain) add(compressed(c, codec, table, t));
    l.seconds = std::chrono::duration<double>(Clock::now() - f0).count();
    if (timed) l.cpu = thread_cpu_seconds() - c0;
  };
  const int wanted = o.estimate_threads > 0                     ? o.estimate_threads
                     : estimate_threads_env() > 0               ? estimate_threads_env()
                     : process_threads() >= kEstimateMinThreads ? kEstimateThreads
                                                                : 1;
  const int workers = std::max(1, wanted);
  // Parts only where other threads can take them, and not for one forced candidate (the parts
  // would count what it does not need).
  std::vector<std::function<void()>> parts;
  if (workers > 1 && !only)
    for (const Format* f : formats)
      if (f->supports_value(a.value))
        for (auto& part : f->estimate_parts(a, s, t)) parts.push_back(std::move(part));
  // One pass on the workers: each takes the next part or format to list, and once those are all
  // taken, the next candidate to estimate that a listing has queued (bsr's candidates() waits
  // for a census part another worker runs, through the census' once flag). Two passes (every listing,
  // then every estimate) waited at their join for the slowest listing, and woke the workers twice.
  const size_t listings = parts.size() + formats.size();
  std::atomic<size_t> next_listing{0}, listed_count{0};
  std::mutex queue_mutex;
  double parts_seconds = 0, parts_cpu = 0;        // traced: the parts' wall and CPU time (under queue_mutex)
  std::vector<std::pair<size_t, Listed*>> queue;  // estimates, in the order their formats were listed
  size_t queue_next = 0;
  auto take_estimate = [&]() -> std::pair<size_t, Listed*> {
    std::lock_guard<std::mutex> lk(queue_mutex);
    return queue_next < queue.size() ? queue[queue_next++] : std::pair<size_t, Listed*>{0, nullptr};
  };
  auto worker = [&] {
    for (size_t k; (k = next_listing.fetch_add(1)) < listings;) {
      // Counted however it ends: a listing that throws must not leave the others waiting for it
      // (parallel_for rethrows its exception once every worker has returned).
      struct Counted {
        std::atomic<size_t>& n;
        ~Counted() { n.fetch_add(1, std::memory_order_release); }
      } counted{listed_count};
      if (k < parts.size()) {
        const auto p0 = Clock::now();
        const double c0 = timed ? thread_cpu_seconds() : 0;
        parts[k]();
        if (timed) {
          std::lock_guard<std::mutex> lk(queue_mutex);
          parts_seconds += std::chrono::duration<double>(Clock::now() - p0).count();
          parts_cpu += thread_cpu_seconds() - c0;
        }
      } else {
        const size_t i = k - parts.size();
        list_format(i);
        std::lock_guard<std::mutex> lk(queue_mutex);
        for (Listed& l : listed[i]) queue.push_back({i, &l});
      }
    }
    // Every listing is taken: estimate what is queued until the last listing has queued its own.
    for (;;) {
      const bool all_listed = listed_count.load(std::memory_order_acquire) == listings;
      auto [i, l] = take_estimate();
      if (l) {
        estimate_one(i, *l);
      } else if (all_listed) {
        return;
      } else {
        std::this_thread::yield();
      }
    }
  };
  const int w = int(std::clamp<size_t>(listings, 1, size_t(workers)));
  parallel_for(w, w, [&](int64_t, int64_t, int) { worker(); });
  for (size_t i = 0; i < formats.size(); ++i) {
    choice.considered.insert(choice.considered.end(), refused[i].begin(), refused[i].end());
    for (const Listed& l : listed[i]) {
      choice.considered.insert(choice.considered.end(), l.found.begin(), l.found.end());
      seconds[i] += l.seconds;
      cpu[i] += l.cpu;
    }
    if (log_enabled(SPMV_LOG_TRACE))
      log_message(SPMV_LOG_TRACE,
                  "estimate: " + formats[i]->name() + " " + std::to_string(seconds[i] * 1e3) + " ms");
  }
  if (timed) {
    for (size_t i = 0; i < formats.size(); ++i)
      log_message(SPMV_LOG_TRACE,
                  "estimate cpu: " + formats[i]->name() + " " + std::to_string(cpu[i] * 1e3) + " ms");
    if (!parts.empty()) {
      log_message(SPMV_LOG_TRACE, "estimate: parts " + std::to_string(parts_seconds * 1e3) + " ms");
      log_message(SPMV_LOG_TRACE, "estimate cpu: parts " + std::to_string(parts_cpu * 1e3) + " ms");
    }
  }
  trace.step("formats (" + std::to_string(workers) + " threads)");
  std::stable_sort(choice.considered.begin(), choice.considered.end(),
                   [](const Candidate& x, const Candidate& y) { return x.score < y.score; });
  if (choice.considered.empty() || !std::isfinite(choice.considered.front().score)) {
    std::string why = automatic ? "no format applies to this matrix on " + std::string(to_string(t.backend))
                                : "format '" + forced->name() + "' does not apply";
    if (only) why += " with parameters " + params_json(*only).dump();
    if (only && choice.considered.empty()) why += ": not a candidate for this matrix";
    if (device_input) why += " (device-resident input: formats the device can convert)";
    if (!choice.considered.empty()) why += ": " + choice.considered.front().estimate.reason;
    fail(SPMV_STATUS_UNSUPPORTED, why);
  }
  const Candidate& best = choice.considered.front();
  choice.format = best.format;
  choice.params = best.params;
  choice.estimate = best.estimate;
  char buf[256];
  if (!automatic) {
    choice.why = "format forced by the caller";
  } else if (choice.considered.size() > 1 && std::isfinite(choice.considered[1].score)) {
    const Candidate& next = choice.considered[1];
    std::snprintf(buf, sizeof buf, "lowest modeled cost: %.3g byte-equivalents vs %.3g for %s %s (%s)",
                  best.score, next.score, next.format->name().c_str(),
                  params_json(next.params).dump().c_str(), best.estimate.reason.c_str());
    choice.why = buf;
  } else {
    choice.why = "only applicable candidate (" + best.estimate.reason + ")";
  }
  choice.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return choice;
}

}  // namespace spmvjit
