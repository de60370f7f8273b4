// Device sort of row windows by decreasing length, stable (templates/gpu/window_sort.cu; launched
// by engine/formats/sliced_device.hpp for the SELL-C-sigma builds of sell and sellp): the order
// slice_util::window_order computes on the host, in bottom-up merge passes.
#ifndef SPMVJIT_CONTRACT_WINDOW_SORT_H
#define SPMVJIT_CONTRACT_WINDOW_SORT_H

// a[]: the input row_ptr (any index base), the order so far (sorted runs; unread on the first
// pass, whose runs are single rows), the order after the pass (index type, rows entries each).
enum { WSORT_ROW_PTR, WSORT_SRC, WSORT_DST };
// n[]: rows per window (sigma), rows per sorted run before the pass (1, 2, 4, ...).
enum { WSORT_N_SIGMA, WSORT_N_RUN };

// spmvjit_sort_tile: one block of WSORT_TILE / 2 threads sorts WSORT_TILE consecutive positions
// in shared memory, when sigma divides the tile or the tile divides sigma (every GPU sigma the
// planners offer: 32 slices of a warp or wavefront of rows). It writes what the merge passes with
// runs up to WSORT_TILE would (a[WSORT_DST]; a[WSORT_SRC] is not read); the passes go on from there.
#define WSORT_TILE 2048

#endif  // SPMVJIT_CONTRACT_WINDOW_SORT_H
