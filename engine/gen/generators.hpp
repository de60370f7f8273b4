// Deterministic synthetic sparse matrices described by a short text spec ("poisson2d:1000").
#pragma once

#include <cstdint>
#include <string>

#include "engine/csr.hpp"

namespace spmvjit {

// Builds the matrix a spec names: "kind:param:param...[@values]", empty or missing parameters
// take their defaults (see generator_help()). The result depends only on spec and seed, on every
// platform and standard library and on any number of threads: the random numbers come from our
// own splitmix64 and each row (R-MAT: each chunk of edges) draws from its own stream. Columns are
// sorted within rows and never repeated. Without a suffix each kind keeps its own values: random
// ones lie in [-1, 1), stencils use their usual coefficients, rmat is all ones, replicate copies
// the file's. "@random" (uniform in [-1, 1)), "@few" (one of -4..-1, 1..4) and "@ones" replace
// them, row by row from a stream of their own. Throws Error(SPMV_STATUS_INVALID_VALUE) for an
// unknown kind or suffix, a bad parameter, or a matrix of more than 2^34 nonzeros; replicate
// also throws the Matrix Market reader's errors (its PATH may contain neither ':' nor '@').
HostCsr<int64_t, double> generate_matrix(const std::string& spec, uint64_t seed = 1);

// One line per generator kind: its spec with defaults, and what it builds.
std::string generator_help();

}  // namespace spmvjit
