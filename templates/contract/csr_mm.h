// CSR for k vectors (spmm_execute): the input's CSR arrays plus, on a GPU, chunks of the long
// rows (engine/formats/csr_mm.cpp fills them, templates/*/csr_mm.* read them) and the kernels'
// shape.
#ifndef SPMVJIT_CONTRACT_CSR_MM_H
#define SPMVJIT_CONTRACT_CSR_MM_H
#include "arrays.h"
#include "vectors.h"

// row_ptr, col_idx, values: the input's CSR; parts: CPU row ranges balanced by nonzeros;
// chunk_row, chunk_start: GPU, the row and first nonzero of each chunk of n[CSR_MM_N_CHUNK]
// nonzeros of a row longer than n[CSR_MM_N_LONG] (one warp each, added into Y with atomics after
// the row step applied beta to the row; none in deterministic plans).
#define CSR_MM_ARRAYS(X)                \
  X(CSR_MM_ROW_PTR, row_ptr, index)     \
  X(CSR_MM_COL_IDX, col_idx, index)     \
  X(CSR_MM_VALUES, values, value)       \
  X(CSR_MM_PARTS, parts, parts)         \
  X(CSR_MM_CHUNK_ROW, chunk_row, index) \
  X(CSR_MM_CHUNK_START, chunk_start, index)
SPMVJIT_DECLARE_ARRAYS(CSR_MM_ARRAYS, kCsrMmArrays)

// n[] slots: rows longer than n[CSR_MM_N_LONG] nonzeros are left to the chunk step, which cuts
// them into n[CSR_MM_N_CHUNKS] chunks of n[CSR_MM_N_CHUNK] nonzeros.
// Column-major with VECTORS 16 or 32: each step's grid is its blocks (n[CSR_MM_N_ROW_BLOCKS],
// n[CSR_MM_N_CHUNK_BLOCKS]) once per slice of CSR_MM_BLOCK_VECTORS vectors (templates/gpu/csr_mm.cu).
// n[CSR_MM_N_STAGED] != 0: column-major X staged row-major (below; the CPU keeps the stage step's
// parts count there).
enum {
  CSR_MM_N_LONG,
  CSR_MM_N_CHUNK,
  CSR_MM_N_CHUNKS,
  CSR_MM_N_ROW_BLOCKS,
  CSR_MM_N_CHUNK_BLOCKS,
  CSR_MM_N_STAGED
};

// Staged X (GPU, column-major X and Y, k up to 32, rows gathering scattered columns): the first
// step (spmvjit_stage_x) copies X row-major into the plan's scratch (cols x k, leading dimension
// k), so the row-major kernel (LAYOUT 1) reads one run of k values per column index instead of k
// scattered ones; it writes Y in the caller's layout (args.layout).

enum {
  CSR_MM_GPU_BLOCK = 256,    // GPU threads per block
  CSR_MM_BLOCK_VECTORS = 8,  // VECTORS = 0 (k above 32), column-major: vectors per pass over a row
  // GPU chunk of a long row: this many products (nonzeros x vectors) per warp, 256 nonzeros at
  // least: about what a warp streams in the time the row step's warps take for their rows.
  CSR_MM_CHUNK_PRODUCTS = 8192,
  CSR_MM_MIN_CHUNK = 256
};

// Device build (templates/gpu/csr_mm_build.cu) argument slots: the input row_ptr (index base
// n[DP_N_BASE]), chunks per row (i64, rows + 1, scanned in place between the passes), the chunk
// arrays; n[CSR_MM_BUILD_N_CHUNK]: nonzeros per chunk.
enum { CSR_MM_BUILD_ROW_PTR, CSR_MM_BUILD_COUNTS, CSR_MM_BUILD_CHUNK_ROW, CSR_MM_BUILD_CHUNK_START };
enum { CSR_MM_BUILD_N_CHUNK };

// GPU, row-major X and Y: a row's k results on neighbouring lanes of a group (its x loads
// coalesce). Past 8 vectors each lane takes CSR_MM_LANE_VALUES neighbouring vectors, up to 16
// bytes (2 doubles, 4 floats) as one load of x per column index where X's alignment and leading
// dimension allow it, while a group keeps at least 8 lanes: more rows per warp and fewer loads,
// so more of them in flight (measured at 32 vectors, docs/PERFORMANCE.md); up to 8 vectors a lane
// takes one (fewer lanes would leave a lane walking its row alone). Of the power of two at or
// above k vectors (32 when k is past 32: a loop over blocks of 32), a group takes that over the
// lane's values lanes (VB: bytes per value). LANES lanes per row (a kernel constant, a multiple of
// the group) make LANES / group groups that split the row's nonzeros. Column-major: LANES lanes per
// row split its nonzeros, each with the k sums.
#define CSR_MM_VECTOR_SPAN(K) ((K) == 0 || (K) > 16 ? 32 : (K) > 8 ? 16 : (K) > 4 ? 8 : (K) > 2 ? 4 : (K))
#define CSR_MM_LANE_VALUES(K, VB)                                            \
  (CSR_MM_VECTOR_SPAN(K) <= 8              ? 1                               \
   : 16 / (VB) < CSR_MM_VECTOR_SPAN(K) / 8 ? (16 / (VB) > 0 ? 16 / (VB) : 1) \
                                           : CSR_MM_VECTOR_SPAN(K) / 8)
#define CSR_MM_VECTOR_LANES(K, VB) (CSR_MM_VECTOR_SPAN(K) / CSR_MM_LANE_VALUES(K, VB))

#endif  // SPMVJIT_CONTRACT_CSR_MM_H
