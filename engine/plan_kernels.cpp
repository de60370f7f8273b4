// The plan's kernels: looked up (or compiled) early beside the conversion, tiered (a run-time
// epilogue variant first, the specialized module from a background compile), bound to the
// launch steps. Plan construction and execution: plan.cpp.
#include <chrono>
#include <cstdlib>
#include <future>

#include "core/log.hpp"
#include "engine/plan.hpp"

namespace spmvjit {

namespace {

// Matrices with fewer nonzeros plus rows than this look their kernel up on the planning thread.
constexpr int64_t kInlineLookupWork = int64_t(1) << 17;

// SPMVJIT_TIERED_COMPILE: 1 or unset tiers on every backend, 0 on none, quick keeps the run-time
// variant for good (its tests; a process that plans once and runs a few products).
std::string tiered_compile_mode() {
  const char* env = std::getenv("SPMVJIT_TIERED_COMPILE");
  return env ? env : "";
}

}  // namespace

Plan::KernelLookup Plan::lookup_kernel(const KernelSpec& spec) const {
  // The specialized module (four epilogue variants) from the cache when it is there. Otherwise
  // one variant that tests alpha and beta at run time first (a quicker first compile: clang took
  // 50 against 150 ms for sell_diag) while the whole compiles in the background and takes over
  // as soon as it is ready.
  // A deterministic plan runs one kernel for good: bitwise-equal results run to run cannot
  // survive a switch between tiers (the CPU's first tier is compiled at another level).
  const std::string mode = tiered_compile_mode();
  const bool quick_only = mode == "quick";
  const bool tiered = mode != "0" && !deterministic_;
  KernelLookup k;
  if (!quick_only) k.module = get_kernel(*backend_, spec, cache_dir_, &k.outcome, !tiered);
  if (!k.module) {
    const std::string lookup_note = k.outcome.note;  // e.g. a corrupt disk entry, rejected
    KernelSpec quick = spec;
    quick.constants["RUNTIME_EPILOGUE"] = 1;
    // The quick variant from the caches, else built ahead of time (the CPU's kernel bundle: no
    // compiler to start or run), else compiled now.
    k.module = get_kernel(*backend_, quick, cache_dir_, &k.outcome, false);
    if (!k.module) {
      const auto t0 = std::chrono::steady_clock::now();
      std::string key;
      if ((k.module = backend_->prebuilt(quick, &key))) {
        k.outcome = CacheOutcome{};
        k.outcome.key = key;
        k.outcome.where = "built-in";
        k.outcome.load_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      }
    }
    if (!k.module) k.module = get_kernel(*backend_, quick, cache_dir_, &k.outcome);
    for (const std::string& n :
         {lookup_note, std::string("run-time epilogue until the specialized kernel is ready")})
      if (!n.empty()) k.outcome.note += (k.outcome.note.empty() ? "" : "; ") + n;
    k.runtime_epilogue = true;
    k.upgrade = !quick_only;
  }
  return k;
}

KernelSpec Plan::spec_with(const FormatParams& params) const {
  FormatParams constants = choice_.format->kernel_constants(with_codec(params, ValueCodec::plain));
  constants.erase(kDeterministicParam);  // a launch choice: the module exports both ways
  const ValueCodec codec = codec_of(params);
  if (codec != ValueCodec::plain) constants[kValueCodecParam] = int64_t(codec);
  return spec_for(target_, choice_.format->name(), choice_.format->template_name(), index_, value_,
                  constants);
}

void Plan::start_kernel_lookup() {
  // The kernel depends only on the choice: found (or compiled) on its own thread while the
  // conversion runs (a small matrix's right here). A fallback to another candidate during
  // conversion makes it unused.
  const KernelSpec spec = chosen_spec();
  lookup_spec_ = spec.serialize();
  if (tiered_compile_mode() != "quick") {  // loaded by this process already: no thread needed
    KernelLookup k;
    if ((k.module = find_loaded_kernel(*backend_, spec, &k.outcome))) {
      std::promise<KernelLookup> ready;
      ready.set_value(std::move(k));
      lookup_ = ready.get_future();
      return;
    }
  }
  // A small matrix converts in less time than a thread takes to start and to fault in the pages
  // of its own malloc arena (0.3-0.5 ms on the 2-vCPU VM; karate planned in 1.9 ms this way against
  // 2.5 with the thread, rajat01 in 4.3 against 5.0): its lookup runs here, before the conversion.
  if (nnz_ + rows_ < kInlineLookupWork) {
    std::promise<KernelLookup> ready;
    try {
      ready.set_value(lookup_kernel(spec));
    } catch (...) {
      ready.set_exception(std::current_exception());  // the plan's error only if it keeps this kernel
    }
    lookup_ = ready.get_future();
    return;
  }
  lookup_ = std::async(std::launch::async, [this, spec, sink = current_log_sink()] {
    LogScope scope(sink);  // the plan's messages, on this thread too
    return lookup_kernel(spec);
  });
}

void Plan::load_kernels() {
  // The early lookup when it was for this kernel (its errors are the plan's); one for a
  // candidate given up during conversion is left to finish into the cache (the destructor waits).
  const bool early = lookup_.valid() && lookup_spec_ == spec_.serialize();
  use_kernel(early ? lookup_.get() : lookup_kernel(spec_));
}

void Plan::use_kernel(KernelLookup k) {
  module_ = std::move(k.module);
  cache_ = std::move(k.outcome);
  runtime_epilogue_ = k.runtime_epilogue;
  const std::string suffix = k.runtime_epilogue ? "r" : "";
  timings_.codegen = cache_.generate_seconds;
  timings_.compile += cache_.compile_seconds;
  timings_.load += cache_.load_seconds;
  log_info("plan: " + spec_.serialize() + " (" + cache_.where +
           (suffix.empty() ? "" : ", run-time epilogue") + ")");
  bind_entries(suffix);
  if (k.upgrade) {  // queued once the quick entries are bound: a plan that throws queues nothing
    std::vector<std::string> names;
    for (const LaunchStep& s : data_.steps) names.push_back(s.entry);
    if (upgrade_) release_upgrade(*upgrade_);  // a replaced kernel's compile is not left running
    upgrade_ = std::make_shared<KernelUpgrade>();
    compile_in_background(*backend_, spec_, cache_dir_, std::move(names), upgrade_);
  }
}

void Plan::bind_entries(const std::string& suffix) {
  // An early step starts before the previous step ends; the first has no step of its own to wait
  // for (it would overlap the caller's kernels that produce x).
  SPMVJIT_ASSERT(data_.steps.empty() || !data_.steps[0].early,
                 "the first launch step of " + data_.format + " is marked early");
  if (backend_->kind() != BackendKind::cpu) {
    scale_entry_ = module_->entry("spmvjit_scale_y");
    scale_step_ = LaunchStep{"spmvjit_scale_y", (rows_ * vectors_ + 255) / 256, 256, 0};
  }
  for (int e = 0; e < kEpilogueVariants; ++e) {
    entries_[e].clear();
    for (const LaunchStep& s : data_.steps)
      entries_[e].push_back(module_->entry(s.entry + "_" + (suffix.empty() ? std::to_string(e) : suffix)));
  }
}

void Plan::wait_for_kernels() const {
  if (upgrade_) wait_for_upgrade(*upgrade_);
}

CacheOutcome Plan::cache() const {
  if (!upgrade_ || !upgrade_->ready.load(std::memory_order_acquire) || upgrade_->failed) return cache_;
  CacheOutcome o = upgrade_->outcome;
  o.note = cache_.note + (cache_.note.empty() || o.note.empty() ? "" : "; ") + o.note;
  return o;
}

std::string Plan::kernel_tier() const {
  if (!runtime_epilogue_) return "specialized";
  if (!upgrade_) return "run-time epilogue";
  if (!upgrade_->ready.load(std::memory_order_acquire)) return "run-time epilogue (specialized compiling)";
  return upgrade_->failed ? "run-time epilogue (specialized failed: " + upgrade_->error + ")" : "specialized";
}

}  // namespace spmvjit
