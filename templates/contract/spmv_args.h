// The kernel contract every kernel of every backend shares: its one argument block and the
// epilogue variants. Declared once: the host (core/kernel_args.hpp) and the preludes include
// this file, so they cannot disagree. Plain C++ with no includes: valid for g++, clang (CPU
// kernels), NVRTC and hipRTC.
#ifndef SPMVJIT_CONTRACT_SPMV_ARGS_H
#define SPMVJIT_CONTRACT_SPMV_ARGS_H

// Format arrays (a[]) and format sizes (n[]) a kernel receives at most; each format's contract
// header (templates/contract/<format>.h) names its slots.
enum { SPMVJIT_MAX_ARRAYS = 8 };

// Passed by value as a GPU kernel's only parameter, by pointer to CPU part functions.
struct SpmvArgs {
  const void* a[SPMVJIT_MAX_ARRAYS];  // format arrays, by slot
  long long n[SPMVJIT_MAX_ARRAYS];    // format sizes, by slot
  const void* x;
  void* y;
  double alpha;
  double beta;
  long long rows;
  long long cols;
  void* scratch;  // per-plan work buffer (carries between launch steps)
  // The value table of a compressed plan (templates/contract/values.h): the uniform value, or the
  // values that 8-bit codes index; null for plain values.
  const void* values_table;
  // Multiple vectors (spmm_execute): x is cols x vectors and y rows x vectors, dense, in the
  // layout (0: column-major, element (i, j) at j * ld + i; 1: row-major, at i * ld + j) with the
  // leading dimensions ldx and ldy. One vector (spmv_execute): vectors 1, layout 0, ldx cols, ldy
  // rows.
  long long vectors;
  long long ldx;
  long long ldy;
  long long layout;
  // Imaginary parts of alpha and beta for complex values (0 for real ones); alpha and beta above
  // are the real parts. At the end, so the real kernels' layout is what it was.
  double alpha_im;
  double beta_im;
};

// Every module exports each entry point as <entry>_<e> for the four epilogues e: bit 0 means
// beta == 0 (y is not read), bit 1 alpha == 1. A module compiled with SPMVJIT_RUNTIME_EPILOGUE
// exports one variant instead, <entry>_r (e = SPMVJIT_EPILOGUE_RUNTIME), that tests alpha and
// beta at run time: a quarter of the code, so the first compile of a plan is quick, while the
// four specialized variants compile in the background.
enum {
  SPMVJIT_EPILOGUE_BETA_ZERO = 1,
  SPMVJIT_EPILOGUE_ALPHA_ONE = 2,
  SPMVJIT_EPILOGUE_VARIANTS = 4,
  SPMVJIT_EPILOGUE_RUNTIME = 4
};

#endif  // SPMVJIT_CONTRACT_SPMV_ARGS_H
