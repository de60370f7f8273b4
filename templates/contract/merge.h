// Merge-path CSR kernel contract (engine/formats/merge.cpp fills it, templates/*/merge.* read it).
#ifndef SPMVJIT_CONTRACT_MERGE_H
#define SPMVJIT_CONTRACT_MERGE_H
#include "arrays.h"

// The input's CSR arrays, unchanged and first (Format::keeps_csr_pattern):
//   row_ptr, col_idx, values: CSR
//   parts: CPU only, the merge-path coordinate (row, nonzero) of every part boundary, as pairs
//     (2 * (n[MERGE_N_SEGMENTS] + 1) values); a GPU thread searches its own coordinates
#define MERGE_ARRAYS(X)            \
  X(MERGE_ROW_PTR, row_ptr, index) \
  X(MERGE_COL_IDX, col_idx, index) \
  X(MERGE_VALUES, values, value)   \
  X(MERGE_PARTS, parts, parts)
SPMVJIT_DECLARE_ARRAYS(MERGE_ARRAYS, kMergeArrays)

// n[] slots: segments of the merge path (CPU parts, GPU threads); path items per segment (GPU).
enum { MERGE_N_SEGMENTS, MERGE_N_ITEMS };
// scratch: CPU, V carry[parts]; GPU, i64 carry_row[segments] (an even count of slots), then V
// carry_val[segments].

// Path items (row ends + nonzeros) per GPU thread (the host puts it in n[MERGE_N_ITEMS]); GPU
// threads per block of both steps.
enum { MERGE_GPU_ITEMS = 8, MERGE_GPU_BLOCK = 256 };

#endif  // SPMVJIT_CONTRACT_MERGE_H
