// Warp shuffles and atomic adds of complex values (SPMVJIT_COMPLEX), from the real ones of the
// backend's prelude (prelude_cuda.h, prelude_hip.h), which includes this file after defining them:
// a value moves as its two parts.
#ifndef SPMVJIT_GPU_COMPLEX_OPS_CUH
#define SPMVJIT_GPU_COMPLEX_OPS_CUH

// More specialized than the preludes' templates of T, so overload resolution takes these.
template <class T>
SPMVJIT_DEVICE spmvjit_complex<T> spmvjit_shfl_down(spmvjit_complex<T> v, int d) {
  return spmvjit_complex<T>(spmvjit_shfl_down(v.re, d), spmvjit_shfl_down(v.im, d));
}
template <class T>
SPMVJIT_DEVICE spmvjit_complex<T> spmvjit_shfl_up(spmvjit_complex<T> v, int d) {
  return spmvjit_complex<T>(spmvjit_shfl_up(v.re, d), spmvjit_shfl_up(v.im, d));
}
template <class T>
SPMVJIT_DEVICE spmvjit_complex<T> spmvjit_shfl(spmvjit_complex<T> v, int lane) {
  return spmvjit_complex<T>(spmvjit_shfl(v.re, lane), spmvjit_shfl(v.im, lane));
}
template <class T>
SPMVJIT_DEVICE spmvjit_complex<T> spmvjit_shfl_xor(spmvjit_complex<T> v, int mask) {
  return spmvjit_complex<T>(spmvjit_shfl_xor(v.re, mask), spmvjit_shfl_xor(v.im, mask));
}
// Two atomic adds: each part is exact as a real atomic add is; a reader between them (none: y is
// read only after the launch) could see one part added.
SPMVJIT_DEVICE void spmvjit_atomic_add(V* p, V v) {
  atomicAdd(&p->re, v.re);
  atomicAdd(&p->im, v.im);
}

#endif  // SPMVJIT_GPU_COMPLEX_OPS_CUH
