// GPU library piece shared by device builds that sort one row or slice per thread (bsr_build,
// sell_diag_build): an in-place heap sort, no memory beyond the array, any order `less` gives.
#ifndef SPMVJIT_HEAP_SORT_INCLUDED
#define SPMVJIT_HEAP_SORT_INCLUDED
#include "prelude.h"

template <class T, class Less>
SPMVJIT_DEVICE void build_sift(T* v, i64 root, i64 n, const Less& less) {
  const T x = v[root];
  for (i64 child = 2 * root + 1; child < n; child = 2 * root + 1) {
    if (child + 1 < n && less(v[child], v[child + 1])) ++child;
    if (!less(x, v[child])) break;
    v[root] = v[child];
    root = child;
  }
  v[root] = x;
}

// Sorts v[0, n) ascending by `less` (a functor: NVRTC gives generic lambdas no execution space).
template <class T, class Less>
SPMVJIT_DEVICE void build_heap_sort(T* v, i64 n, const Less& less) {
  for (i64 i = n / 2; i-- > 0;) build_sift(v, i, n, less);
  for (i64 e = n - 1; e > 0; --e) {
    const T t = v[0];
    v[0] = v[e];
    v[e] = t;
    build_sift(v, 0, e, less);
  }
}

#endif  // SPMVJIT_HEAP_SORT_INCLUDED
