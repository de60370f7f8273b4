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
  // The slot's value (VG_CHECK: its computed position, as a Code) into out[slot].
  SPMVJIT_METHOD void put(void* out, i64 slot, Code v, const I* map) {
    if (mode == VG_GATHER) {
      ((Code*)out)[slot] = v;
    } else if (mode == VG_CODES) {
      const int c = table_position(table, n, v);
      bad += c == n || spmvjit_ldg(table + c) != v;
      ((unsigned char*)out)[slot] = (unsigned char)c;
    } else {
      bad += i64(spmvjit_ldg(map + slot)) != i64(v);
    }
  }
  // A slot at computed position p (-1: padding).
  SPMVJIT_METHOD void at(void* out, i64 slot, i64 p, const I* map) {
    if (mode == VG_CHECK) {
      bad += i64(spmvjit_ldg(map + slot)) != p;
      return;
    }
    put(out, slot, p < 0 ? Code(0) : spmvjit_ldg(values + p), map);
  }
  // A slot the map places (nothing to compare in VG_CHECK).
  SPMVJIT_METHOD void mapped(void* out, i64 slot, const I* map) {
    if (mode == VG_CHECK) return;
    const I m = spmvjit_ld_stream(map + slot);
    put(out, slot, m < 0 ? Code(0) : spmvjit_ldg(values + m), map);
  }
  SPMVJIT_METHOD void finish(const SpmvArgs& a) const {
    if (bad) spmvjit_atomic_add_u64((unsigned long long*)a.scratch, (unsigned long long)bad);
  }
};

#ifndef SPMVJIT_EMULATED  // blocks cooperate: the CPU emulation runs threads one by one
// One slice of a column-major layout by one block (VG_SLICE_BLOCK threads, c <= VG_SLICE_MAX_C): rows r0 + i
// for i < c, slot t * c + i of out / map at `base` for t < slot_rows (consecutive threads take consecutive
// slots, as the map's gather does). A regular row (regular(row, length)) holds entry k at slot
// row k and padding past its length; other rows go through the map. When every row is regular,
// the slice's entries are one run of the CSR arrays: staged in shared memory when they fit, read
// coalesced instead of a row per lane.
struct SliceShared {
  i64 b[VG_SLICE_MAX_C], len[VG_SLICE_MAX_C];
  bool ok[VG_SLICE_MAX_C];
  Code stage[VG_STAGE];
};
template <class Regular>
SPMVJIT_DEVICE void column_slice(Sink& sink, const I* rp, i64 rows, i64 r0, i64 c, i64 slot_rows, i64 base,
                                 void* out, const I* map, const Regular& regular, SliceShared& sh) {
  const int tid = int(threadIdx.x), bd = int(blockDim.x);
  const i64 end = rows > 0 ? i64(spmvjit_ldg(rp + rows)) : 0;
  bool irregular = false;
  for (i64 i = tid; i < c; i += bd) {
    const i64 r = r0 + i;
    const i64 b = r < rows ? i64(spmvjit_ldg(rp + r)) : end,
              len = r < rows ? i64(spmvjit_ldg(rp + r + 1)) - b : 0;
    sh.b[i] = b;
    sh.len[i] = len;
    sh.ok[i] = regular(r, len);
    irregular |= !sh.ok[i];
  }
  const bool mixed = spmvjit_sync_block_or(irregular);
  const i64 p0 = sh.b[0], total = sh.b[c - 1] + sh.len[c - 1] - p0, n = slot_rows * c;
  const unsigned uc = unsigned(c);
  if (!mixed && total <= VG_STAGE) {
    for (i64 k = tid; k < total; k += bd)
      sh.stage[k] = sink.mode == VG_CHECK ? Code(p0 + k) : spmvjit_ld_stream(sink.values + p0 + k);
    spmvjit_sync_block();
    for (i64 j = tid; j < n; j += bd) {
      const unsigned t = unsigned(j) / uc, i = unsigned(j) - t * uc;
      if (t < sh.len[i])
        sink.put(out, base + j, sh.stage[sh.b[i] - p0 + t], map);
      else
        sink.at(out, base + j, -1, map);
    }
  } else {
    for (i64 j = tid; j < n; j += bd) {
      const unsigned t = unsigned(j) / uc, i = unsigned(j) - t * uc;
      if (sh.ok[i])
        sink.at(out, base + j, t < sh.len[i] ? sh.b[i] + t : i64(-1), map);
      else
        sink.mapped(out, base + j, map);
    }
  }
  spmvjit_sync_block();  // sh is the next slice's
}
#endif

}  // namespace vg

#endif  // SPMVJIT_GPU_VALUE_GATHER_CUH
