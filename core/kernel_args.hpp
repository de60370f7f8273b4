// SpmvArgs on the host: the same declaration the kernels compile (templates/contract/spmv_args.h).
#pragma once

namespace spmvjit {
#include "templates/contract/spmv_args.h"

static_assert(sizeof(SpmvArgs) == 8 * 8 + 8 * 8 + 8 * 7, "SpmvArgs layout is ABI");
inline constexpr int kMaxArrays = SPMVJIT_MAX_ARRAYS;
inline constexpr int kEpilogueBetaZero = SPMVJIT_EPILOGUE_BETA_ZERO;
inline constexpr int kEpilogueAlphaOne = SPMVJIT_EPILOGUE_ALPHA_ONE;
inline constexpr int kEpilogueVariants = SPMVJIT_EPILOGUE_VARIANTS;
}  // namespace spmvjit
