// The planner: ranks every applicable (format, parameters) pair by a byte-based cost model.
#pragma once

#include <string>
#include <vector>

#include "engine/formats/format.hpp"

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
  std::string considered_json() const;
};

// forced: "" or "auto" lets the planner decide; otherwise the named format (its best params).
// device_input: the CSR is in device memory (a.row_ptr ... are device pointers, never read):
// only candidates a device can convert (Format::device_convertible) are considered.
// Throws INVALID_VALUE for an unknown format name, UNSUPPORTED if nothing applies.
PlanChoice choose_format(const CsrRef& a, const MatrixStats& s, const TargetInfo& t,
                         const std::string& forced, bool device_input = false);

}  // namespace spmvjit
