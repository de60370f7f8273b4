// BSR (r x c register blocks) kernel contract (engine/formats/bsr.cpp fills it, templates/*/bsr.*
// read it; templates/gpu/bsr_build.cu builds it on a device). Baked: SPMVJIT_R, SPMVJIT_C (block
// shape) and SPMVJIT_COL_EDGE (cols % C != 0: the last block column reaches past x). The GPU's
// lanes per block row, G, is an argument.
#ifndef SPMVJIT_CONTRACT_BSR_H
#define SPMVJIT_CONTRACT_BSR_H
#include "arrays.h"
#include "value_gather.h"

// Block row b covers rows [b*R, b*R + R) (the last one may reach past the matrix: those rows are
// never written). block_ptr: first block of each block row (n[BSR_N_BLOCK_ROWS] + 1);
// block_col: the block's first column / C (blocks are aligned to multiples of C), ascending
// within a block row (a repeated column, for duplicate entries, repeats the block);
// values: R*C per block, row-major within the block, zeros where the pattern has none;
// parts: CPU block-row ranges balanced by blocks + 1.
#define BSR_ARRAYS(X)                \
  X(BSR_BLOCK_PTR, block_ptr, index) \
  X(BSR_BLOCK_COL, block_col, index) \
  X(BSR_VALUES, values, value)       \
  X(BSR_PARTS, parts, parts)
SPMVJIT_DECLARE_ARRAYS(BSR_ARRAYS, kBsrArrays)

// n[] slots: block rows; log2(G) on a GPU (0 on the CPU).
enum { BSR_N_BLOCK_ROWS, BSR_N_GROUP_LOG2 };
enum {
  BSR_GPU_BLOCK = 256,  // GPU threads per block (G of them per block row)
  BSR_MAX_SIDE = 8,     // R and C are at most this
  // The device build's warp kernels take block rows of at most this many blocks (the walk of
  // one thread takes the rest): three lists of it in shared memory per warp.
  BSR_WARP_BLOCKS = 256
};

// The update gather (templates/contract/value_gather.h, spmvjit_update_gather): layout array
// block_ptr, sizes R, C and the block rows; BSR_UPD_LANES threads per block row, blocks of
// BSR_UPD_BLOCK threads.
enum { BSR_UPD_BLOCK_PTR = VG_LAYOUT0 };
enum { BSR_UPD_N_R = VG_N_PARAM0, BSR_UPD_N_C, BSR_UPD_N_BLOCK_ROWS };
// BSR_UPD_BATCH: the slots a thread loads before it writes any.
enum { BSR_UPD_LANES = 32, BSR_UPD_BLOCK = 256, BSR_UPD_BATCH = 4 };

// Device build (templates/gpu/bsr_build.cu) argument slots: the input arrays (index base
// n[DP_N_BASE]), blocks per block row (i64, scanned in place; [block_rows] first counts the block
// rows holding a row out of column order), each such row's entries in column order (index
// type, one per nonzero, only when there are some), and the outputs.
enum {
  BSR_BUILD_ROW_PTR,
  BSR_BUILD_COL_IDX_IN,
  BSR_BUILD_VALUES_IN,
  BSR_BUILD_COUNTS,
  BSR_BUILD_ORDER,
  BSR_BUILD_BLOCK_PTR,
  BSR_BUILD_BLOCK_COL,
  BSR_BUILD_VALUES
};
enum { BSR_BUILD_N_R, BSR_BUILD_N_C, BSR_BUILD_N_BLOCK_ROWS, BSR_BUILD_N_LANES_LOG2 };
// Regular block rows (bsr_build.cu's spmvjit_build_regular_*): an i64 flag per block row after
// the counts (counts + block_rows + 1), set where every row of it holds the same L columns in
// aligned runs of C consecutive ones, strictly ascending (no fill; its blocks are the runs);
// BSR_BUILD_N_LANES_LOG2: log2 of the threads per row that check the entries. Block rows of such
// rows are written in slot order, BSR_BUILD_LANES threads each.
enum { BSR_BUILD_LANES = 32 };
// Entries (spmvjit_build_regular_entries) and slots (spmvjit_build_write_regular) a thread loads
// before it checks or writes any.
enum { BSR_BUILD_BATCH = 4 };

#endif  // SPMVJIT_CONTRACT_BSR_H
