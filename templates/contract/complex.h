// The complex value type of kernels compiled with SPMVJIT_COMPLEX (the preludes make V
// spmvjit_complex<SPMVJIT_VALUE_T>): re then im, the layout of C99's _Complex, std::complex and
// cuComplex, with the arithmetic the templates use. Kernels only (the host uses std::complex).
// Plain C++ with no includes, for clang (CPU), NVRTC and hipRTC alike; SPMVJIT_METHOD is the
// prelude's function qualifier (device code on GPUs). GPU preludes set SPMVJIT_COMPLEX_ALIGNED:
// cuComplex's alignment (8 or 16 bytes), so a value loads and stores as one vector.
#ifndef SPMVJIT_CONTRACT_COMPLEX_H
#define SPMVJIT_CONTRACT_COMPLEX_H

#if SPMVJIT_COMPLEX_ALIGNED
#define SPMVJIT_COMPLEX_ALIGNAS(T) alignas(2 * sizeof(T))
#else
#define SPMVJIT_COMPLEX_ALIGNAS(T)
#endif

template <class T>
struct SPMVJIT_COMPLEX_ALIGNAS(T) spmvjit_complex {
  T re, im;
  // Trivial, so arrays of values can live in registers, local and shared memory.
  spmvjit_complex() = default;
  // From one real number (V sum = 0, V(1)): imaginary part 0.
  SPMVJIT_METHOD constexpr spmvjit_complex(T r) : re(r), im(T(0)) {}
  SPMVJIT_METHOD constexpr spmvjit_complex(T r, T i) : re(r), im(i) {}

  // Hidden friends, so `beta == 0` converts the 0 as it does for real V.
  friend SPMVJIT_METHOD spmvjit_complex operator+(spmvjit_complex a, spmvjit_complex b) {
    return spmvjit_complex(a.re + b.re, a.im + b.im);
  }
  friend SPMVJIT_METHOD spmvjit_complex operator-(spmvjit_complex a, spmvjit_complex b) {
    return spmvjit_complex(a.re - b.re, a.im - b.im);
  }
  friend SPMVJIT_METHOD spmvjit_complex operator-(spmvjit_complex a) { return spmvjit_complex(-a.re, -a.im); }
  friend SPMVJIT_METHOD spmvjit_complex operator*(spmvjit_complex a, spmvjit_complex b) {
    return spmvjit_complex(a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re);
  }
  friend SPMVJIT_METHOD bool operator==(spmvjit_complex a, spmvjit_complex b) {
    return a.re == b.re && a.im == b.im;
  }
  friend SPMVJIT_METHOD bool operator!=(spmvjit_complex a, spmvjit_complex b) { return !(a == b); }
  SPMVJIT_METHOD spmvjit_complex& operator+=(spmvjit_complex b) {
    re += b.re;
    im += b.im;
    return *this;
  }
  SPMVJIT_METHOD spmvjit_complex& operator-=(spmvjit_complex b) {
    re -= b.re;
    im -= b.im;
    return *this;
  }
  SPMVJIT_METHOD spmvjit_complex& operator*=(spmvjit_complex b) { return *this = *this * b; }
};

#endif  // SPMVJIT_CONTRACT_COMPLEX_H
