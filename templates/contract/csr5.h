// CSR5 kernel contract (engine/formats/csr5.cpp fills it on the host, templates/gpu/csr5_build.cu
// on a device; templates/*/csr5.* read it).
#ifndef SPMVJIT_CONTRACT_CSR5_H
#define SPMVJIT_CONTRACT_CSR5_H
#include "arrays.h"

// A tile is OMEGA lanes x SIGMA entries (kernel constants SPMVJIT_OMEGA, SPMVJIT_SIGMA) stored
// transposed: entry k of lane l of tile t is at t * OMEGA * SIGMA + k * OMEGA + l.
//   tile_ptr: first row of each tile, ~row when it spans empty rows, then the tail's first row
//   tile_desc: per tile and lane, bit_flag | y_offset << Y_OFFSET_SHIFT | seg_offset << SEG_OFFSET_SHIFT
//   col_idx, values: the tiles, then the CSR tail (the last nnz % (OMEGA * SIGMA) entries)
//   eo_ptr: each tile's first entry in empty_offset (n[CSR5_N_TILES] + 1)
//   aux: empty_offset (segment -> row), the empty rows before the tail, the tail's row_ptr
#define CSR5_ARRAYS(X)              \
  X(CSR5_TILE_PTR, tile_ptr, i64)   \
  X(CSR5_TILE_DESC, tile_desc, u64) \
  X(CSR5_COL_IDX, col_idx, index)   \
  X(CSR5_VALUES, values, value)     \
  X(CSR5_EO_PTR, eo_ptr, i64)       \
  X(CSR5_AUX, aux, index)
SPMVJIT_DECLARE_ARRAYS(CSR5_ARRAYS, kCsr5Arrays)

// n[] slots: tiles; CPU parts (1 on a GPU); first entry and first row of the CSR tail; entries of
// empty_offset, then empty rows, at the start of aux; rows of the CSR tail.
enum {
  CSR5_N_TILES,
  CSR5_N_PARTS,
  CSR5_N_TAIL_START,
  CSR5_N_TAIL_ROW,
  CSR5_N_EMPTY_OFFSETS,
  CSR5_N_EMPTY_ROWS,
  CSR5_N_TAIL_ROWS
};
// scratch: V head[tiles + 1], then V tail[tiles + 1] (the carries of rows that span tiles).

// Descriptor fields: bit_flag, the low 32 bits, has a bit per entry of the lane that starts a row
// (so sigma <= 32); y_offset (segments begun in earlier lanes) and seg_offset (following lanes
// without a row start) are 16 bits. omega (at most CSR5_MAX_OMEGA): SIMD lanes on the CPU; on a
// GPU a tile is one warp, omega = SPMVJIT_WARP. GPU blocks: threads of the part step (a warp per
// tile, and one for the CSR tail) and of the fixup step (a thread per tile or empty row).
enum {
  CSR5_MAX_OMEGA = 32,
  CSR5_MAX_SIGMA = 32,
  CSR5_Y_OFFSET_SHIFT = 32,
  CSR5_SEG_OFFSET_SHIFT = 48,
  CSR5_OFFSET_MASK = 0xffff,
  CSR5_GPU_BLOCK = 128,
  CSR5_GPU_FIXUP_BLOCK = 256
};

// Device build (templates/gpu/csr5_build.cu) argument slots. Its ten arrays exceed
// SPMVJIT_MAX_ARRAYS, so spmvjit_build_entries (a thread per entry: the transposed tiles, then the
// tail) has its own a[] slots; the other kernels share the second set: the input row_ptr (index
// base n[DP_N_BASE]), the outputs, and the per-window empty-row counts (i64, scanned in place, as
// are the per-tile empty_offset counts spmvjit_build_tiles leaves in eo_ptr). tile_ptr[tiles]
// (the tail's first row) is written by spmvjit_build_tiles and read by the later passes.
enum { CSR5_BUILD_COL_IDX_IN, CSR5_BUILD_VALUES_IN, CSR5_BUILD_COL_IDX, CSR5_BUILD_VALUES };
enum {
  CSR5_BUILD_ROW_PTR,
  CSR5_BUILD_TILE_PTR,
  CSR5_BUILD_TILE_DESC,
  CSR5_BUILD_EO_PTR,
  CSR5_BUILD_WINDOW_EMPTY,
  CSR5_BUILD_AUX
};
// n[] slots of every build kernel (n[DP_N_BASE] = 7 is the index base): omega, sigma, tiles and
// nonzeros; entries of empty_offset and empty rows before the tail (spmvjit_build_aux only).
enum {
  CSR5_BUILD_N_OMEGA,
  CSR5_BUILD_N_SIGMA,
  CSR5_BUILD_N_TILES,
  CSR5_BUILD_N_NNZ,
  CSR5_BUILD_N_EMPTY_OFFSETS,
  CSR5_BUILD_N_EMPTY_ROWS
};
enum { CSR5_BUILD_WINDOW = 1024 };  // rows per thread of the empty-row passes

#endif  // SPMVJIT_CONTRACT_CSR5_H
