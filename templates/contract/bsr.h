// BSR (r x c register blocks) kernel contract (engine/formats/bsr.cpp fills it, templates/*/bsr.*
// read it). Baked: SPMVJIT_R, SPMVJIT_C (block shape) and SPMVJIT_COL_EDGE (cols % C != 0: the
// last block column reaches past x). The GPU's lanes per block row, G, is an argument.
#ifndef SPMVJIT_CONTRACT_BSR_H
#define SPMVJIT_CONTRACT_BSR_H
#include "arrays.h"

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
enum { BSR_GPU_BLOCK = 256 };  // GPU threads per block (G of them per block row)

#endif  // SPMVJIT_CONTRACT_BSR_H
