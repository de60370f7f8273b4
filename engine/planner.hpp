// The planner: ranks every applicable (format, parameters) pair by a byte-based cost model.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "engine/formats/format.hpp"
#include "engine/value_codec.hpp"

namespace spmvjit {

struct Candidate {
  const Format* format = nullptr;
  FormatParams params;
  Estimate estimate;
  double score = 0;  // lower is better; infinity when not applicable
};

struct PlanChoice {
  const Format* format = nullptr;
  FormatParams params;
  Estimate estimate;
  std::string why;
  std::vector<Candidate> considered;  // sorted best first
  double seconds = 0;
  // The sample's distinct values when few enough to compress (engine/value_codec.hpp).
  std::optional<ValueTable> sample_values;
  Json considered_json() const;  // every candidate, best first, with its cost and reason
};

// $SPMVJIT_VALUE_COMPRESSION: 0 turns compressed value arrays off (comparisons); on by default.
bool value_compression_enabled();

// Byte-equivalents a CODE8 table lookup costs per stored entry, on the CPU and on GPUs: set by
// hand (small against the 3 or 7 bytes a code saves), not fitted to measurements yet.
inline constexpr double kCode8LookupBytes[2] = {1.0, 0.5};

// The format a caller names (options.format): null for null, "" or "auto"; throws INVALID_VALUE,
// listing the known names, for an unknown one.
const Format* parse_format_option(const char* name);

// What a choice is restricted to. device_input: the CSR is in device memory (a.row_ptr ... are
// device pointers, never read): only candidates a device can convert (Format::device_convertible).
// only: consider just these parameters of the forced format (wisdom replays a measured choice).
// deterministic: only candidates whose sums have a fixed order (Format::make_deterministic); the
// others stay in the ranking as not applicable, with the reason.
struct ChoiceOptions {
  bool device_input = false;
  const FormatParams* only = nullptr;
  bool deterministic = false;
  int vectors = 1;         // k: above 1, only formats that multiply several vectors (Format::multi_vector)
  bool row_major = false;  // their layout
  // Threads that share out the formats' estimates; 0: the planner decides (engine/planner.cpp).
  int estimate_threads = 0;
};

// Why format f refuses values of type v, naming the formats that take them (UNSUPPORTED's message).
std::string value_type_refusal(const Format& f, ValueType v);

// forced: null lets the planner decide; otherwise that format (its best params). Throws
// UNSUPPORTED if nothing applies.
PlanChoice choose_format(const CsrRef& a, const MatrixStats& s, const TargetInfo& t, const Format* forced,
                         const ChoiceOptions& o = {});

}  // namespace spmvjit
