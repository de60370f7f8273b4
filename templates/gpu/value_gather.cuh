// What a format's update gather (templates/contract/value_gather.h) does with each slot: the
// unsigned integer as wide as V that stands for a value's bits, the CODE8 table's search, and the
// sink that writes a slot's value, its code, or compares its computed position with the map.
#ifndef SPMVJIT_GPU_VALUE_GATHER_CUH
#define SPMVJIT_GPU_VALUE_GATHER_CUH
#include "../contract/value_gather.h"

namespace vg {

template <int Bytes>
struct CodeOf {
  typedef unsigned long long type;
};
template <>
struct CodeOf<4> {
  typedef unsigned type;
};
typedef CodeOf<sizeof(V)>::type Code;

// The first of the n sorted table patterns >= v (n when none): v's code when table[it] == v.
SPMVJIT_DEVICE int table_position(const Code* SPMVJIT_RESTRICT table, int n, Code v) {
  int lo = 0, hi = n;
  while (lo < hi) {
    const int mid = (lo + hi) >> 1;
    if (spmvjit_ldg(table + mid) < v)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

// v's CODE8 code (its place among the n sorted table patterns) as a byte at out[slot]; a value the
// table lacks adds one to bad.
SPMVJIT_DEVICE void put_code(void* out, i64 slot, Code v, const Code* SPMVJIT_RESTRICT table, int n,
                             long long& bad) {
  const int c = table_position(table, n, v);
  bad += c == n || spmvjit_ldg(table + c) != v;
  ((unsigned char*)out)[slot] = (unsigned char)c;
}

struct Sink {
  const Code* SPMVJIT_RESTRICT values;  // the new values, CSR order
  const Code* table;
  int mode, n;
  long long bad;

  SPMVJIT_METHOD explicit Sink(const SpmvArgs& a)
      : values((const Code*)a.x),
        table((const Code*)a.values_table),
        mode(int(a.n[VG_N_MODE])),
        n(int(a.n[VG_N_TABLE])),
        bad(0) {}
  // The slot's value into out[slot] (VG_GATHER), or its code (VG_CODES).
  SPMVJIT_METHOD void put(void* out, i64 slot, Code v) {
    if (mode == VG_GATHER)
      ((Code*)out)[slot] = v;
    else
      put_code(out, slot, v, table, n, bad);
  }
  // The value at position p (-1: padding): a batch's loads go out together, its puts after them.
  SPMVJIT_METHOD Code load(i64 p) const { return p < 0 ? Code(0) : spmvjit_ldg(values + p); }
  // A slot at computed position p (-1: padding).
  SPMVJIT_METHOD void at(void* out, i64 slot, i64 p, const I* map) {
    if (mode == VG_CHECK) {
      bad += i64(spmvjit_ldg(map + slot)) != p;
      return;
    }
    put(out, slot, p < 0 ? Code(0) : spmvjit_ldg(values + p));
  }
  // A slot the map places (nothing to compare in VG_CHECK).
  SPMVJIT_METHOD void mapped(void* out, i64 slot, const I* map) {
    if (mode == VG_CHECK) return;
    const I m = spmvjit_ld_stream(map + slot);
    put(out, slot, m < 0 ? Code(0) : spmvjit_ldg(values + m));
  }
  SPMVJIT_METHOD void finish(const SpmvArgs& a) const {
    if (bad) spmvjit_atomic_add_u64((unsigned long long*)a.scratch, (unsigned long long)bad);
  }
};

}  // namespace vg

#endif  // SPMVJIT_GPU_VALUE_GATHER_CUH
