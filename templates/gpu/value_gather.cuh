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
  // The value at position p (-1: padding).
  SPMVJIT_METHOD Code load(i64 p) const { return p < 0 ? Code(0) : spmvjit_ldg(values + p); }
  // Slots base + t for t = first, first + step, ... below end, Batch of them at a time: their
  // positions (position(t), -1 for padding), then their values, then their writes, so that each
  // thread keeps Batch value loads in flight (one at a time left it waiting on DRAM every slot).
  template <int Batch, class Position>
  SPMVJIT_METHOD void gather(void* out, i64 base, i64 first, i64 end, i64 step, Position position) {
    for (i64 t0 = first; t0 < end; t0 += Batch * step) {
      i64 p[Batch];
      Code v[Batch];
#pragma unroll
      for (int u = 0; u < Batch; ++u) p[u] = t0 + u * step < end ? i64(position(t0 + u * step)) : i64(-1);
#pragma unroll
      for (int u = 0; u < Batch; ++u) v[u] = load(p[u]);
#pragma unroll
      for (int u = 0; u < Batch; ++u)
        if (t0 + u * step < end) put(out, base + t0 + u * step, v[u]);
    }
  }
  // VG_CHECK: a slot's computed position p against the map's.
  SPMVJIT_METHOD void check(i64 slot, i64 p, const I* map) { bad += i64(spmvjit_ldg(map + slot)) != p; }
  SPMVJIT_METHOD void finish(const SpmvArgs& a) const {
    if (bad) spmvjit_atomic_add_u64((unsigned long long*)a.scratch, (unsigned long long)bad);
  }
};

}  // namespace vg

#endif  // SPMVJIT_GPU_VALUE_GATHER_CUH
