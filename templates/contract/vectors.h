// Multiple vectors (spmm_execute): which vector counts are kernel constants. Plain C++ with no
// includes, shared by the host (core/kernel_args.hpp) and the multi-vector formats' kernels.
#ifndef SPMVJIT_CONTRACT_VECTORS_H
#define SPMVJIT_CONTRACT_VECTORS_H

// The kernel constant VECTORS of a plan for k vectors (spmm_execute): k itself up to
// SPMVJIT_EXACT_VECTORS, then the power of two at or above it up to SPMVJIT_MAX_BAKED_VECTORS (the
// kernel takes the exact k from args.vectors and masks the rest), 0 beyond (any k, in blocks).
// Few constants, so `warmup` compiles few modules; the common counts stay exact.
enum { SPMVJIT_EXACT_VECTORS = 8, SPMVJIT_MAX_BAKED_VECTORS = 32 };
#define SPMVJIT_BAKED_VECTORS(K) \
  ((K) <= SPMVJIT_EXACT_VECTORS ? (K) : (K) <= 16 ? 16 : (K) <= SPMVJIT_MAX_BAKED_VECTORS ? 32 : 0)

#endif  // SPMVJIT_CONTRACT_VECTORS_H
