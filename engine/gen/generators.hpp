// Deterministic synthetic sparse matrices described by a short text spec ("poisson2d:1000").
#pragma once

#include <cstdint>
#include <string>

#include "engine/csr.hpp"

namespace spmvjit {

// Builds the matrix a spec names: "kind:param:param...", empty or missing parameters take
// their defaults (see generator_help()). The result depends only on spec and seed, on every
// platform and standard library: the random numbers come from our own splitmix64 and each row
// draws from its own stream. Columns are sorted within rows and never repeated. Random values
// lie in [-1, 1); stencils use their usual coefficients. Throws Error(SPMV_STATUS_INVALID_VALUE)
// for an unknown kind, a bad parameter, or a matrix of more than 2^34 nonzeros.
HostCsr<int64_t, double> generate_matrix(const std::string& spec, uint64_t seed = 1);

// One line per generator kind: its spec with defaults, and what it builds.
std::string generator_help();

}  // namespace spmvjit
