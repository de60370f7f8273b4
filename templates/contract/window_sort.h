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

#endif  // SPMVJIT_CONTRACT_WINDOW_SORT_H
