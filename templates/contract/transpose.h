// Device transpose (templates/gpu/transpose_build.cu, launched by engine/transpose_device.cpp):
// A^T of a CSR in device memory for plans of op(A) = A^T, a stable counting sort by column.
//  1. count: each column's entries (64-bit atomics), then DeviceConverter::exclusive_scan;
//  2. row_ptr: A^T's row pointer from the scan; the scan's array becomes each column's cursor;
//  3. fill: each entry k takes a slot of its column (atomics: slots in any order) and writes k;
//  4. sort_short: each column of at most TR_SHORT entries sorted by k, one thread each (heap
//     sort); the longer ones listed;
//  5. the listed columns: long_sizes and two scans enumerate their tiles and entries; sort_tiles
//     sorts each tile of TR_TILE entries in a block's shared memory (bitonic), then merge passes
//     over all their entries double the sorted runs (perm and scratch in turn, copied back after
//     an odd count): k ascending is A's row order, so the result does not depend on the slots;
//  6. position: position[perm[p]] = p; 7. scatter: A^T's columns and values through position.
// Update: scatter_values puts new values (A's order) where A^T keeps them.
#ifndef SPMVJIT_CONTRACT_TRANSPOSE_H
#define SPMVJIT_CONTRACT_TRANSPOSE_H

enum {
  TR_SHORT = 32,        // longest column sorted by one thread
  TR_TILE = 2048,       // entries a block sorts in shared memory at once
  TR_SORT_BLOCK = 256,  // threads of sort_tiles' blocks
};

// a[] slots (each kernel reads those it names).
enum {
  TR_ROW_PTR,    // A's row_ptr (index base n[DP_N_BASE])
  TR_COL_IDX,    // A's col_idx
  TR_VALUES,     // A's values (scatter), or an update's new values (scatter_values)
  TR_COUNTS,     // i64, cols + 1: counts, scanned starts, cursors; then the list of long columns
  TR_T_ROW_PTR,  // A^T's row_ptr (I, cols + 1, zero-based)
  TR_PERM,       // I, nnz: A's entry index of each slot of A^T
  TR_POSITION,   // I, nnz: slot of each of A's entries
  TR_OUT         // merge: scratch of I, nnz; scatter: A^T's col_idx; scatter_values: A^T's values
};
// The listed (long) columns' i64 arrays, in the slots their kernels leave free: entries and tiles
// per column (scanned: starts, the total at [n]), and the longest column (one i64).
enum { TR_LONG_ENTRIES = TR_ROW_PTR, TR_LONG_TILES = TR_COL_IDX, TR_LONG_MAX = TR_VALUES };
// scatter reads no perm: its slot carries A^T's values (V, nnz) there.
enum { TR_T_VALUES = TR_PERM };
// n[] slots besides n[DP_N_BASE].
enum { TR_N_NNZ, TR_N_LONG, TR_N_RUN };

#endif  // SPMVJIT_CONTRACT_TRANSPOSE_H
