// Value maps and value compression on a device (engine/value_map.cpp, engine/value_codec.cpp):
// the position codes a map is read off, the map itself, the gathers an update runs through it
// (plain values, or CODE8 codes in the same pass) and the encoding of CSR-order values. Every
// kernel is grid-stride, takes any block size and no block-wide step, so the CPU emulation
// (templates/gpu/prelude_emu.h) runs them as they are. Contract: templates/contract/device_plan.h
// (DP_VM_*, DP_VC_*).
#include "../contract/device_plan.h"
#include "prelude.h"
#include "value_gather.cuh"

namespace vm {
typedef vg::Code Code;  // the unsigned integer as wide as V: value codes and bitwise comparisons
typedef unsigned long long u64;
}  // namespace vm

// Value map, pass 0: a[DP_VM_OUT][k] = k + 1 for k < n[DP_VM_N_NNZ], as a V-wide code.
extern "C" __global__ void __launch_bounds__(DP_BLOCK) spmvjit_vm_codes(const SpmvArgs a) {
  vm::Code* out = (vm::Code*)a.a[DP_VM_OUT];
  for (i64 k = i64(blockIdx.x) * blockDim.x + threadIdx.x; k < a.n[DP_VM_N_NNZ];
       k += i64(gridDim.x) * blockDim.x)
    out[k] = vm::Code(k + 1);
}

// Value map, pass 1: positions from the codes a conversion stored.
extern "C" __global__ void __launch_bounds__(DP_BLOCK) spmvjit_vm_map(const SpmvArgs a) {
  const vm::Code* SPMVJIT_RESTRICT code = (const vm::Code*)a.a[DP_VM_VALUES];
  I* SPMVJIT_RESTRICT map = (I*)a.a[DP_VM_MAP];
  const vm::Code nnz = vm::Code(a.n[DP_VM_N_NNZ]);
  i64 bad = 0;
  for (i64 j = i64(blockIdx.x) * blockDim.x + threadIdx.x; j < a.n[DP_VM_N_COUNT];
       j += i64(gridDim.x) * blockDim.x) {
    const vm::Code c = code[j];
    bad += c > nnz;
    map[j] = c == 0 || c > nnz ? I(-1) : I(c - 1);
  }
  if (bad) spmvjit_atomic_add_u64((vm::u64*)a.a[DP_VM_ERRORS], vm::u64(bad));
}

// The map's gathers, DP_VM_SLOTS slots a thread per step: their map entries first, then their
// values, so that each thread keeps that many independent value reads in flight. One slot a step
// left every thread waiting on a dependent pair of DRAM reads (map, then value): on an H200 the
// CODE8 gather of stencil27-1M's sell_diag plan took 0.140 ms. A step of T threads covers
// DP_VM_SLOTS * T consecutive slots, thread i taking slots i, i + T, ...: every load and store of a
// warp stays coalesced (a thread's slots side by side made its 8-byte stores strided, and the plain
// gather slower than one slot a step). visit(j, T, v, k) gets the thread's slots j, j + T, ... (k of
// them: DP_VM_SLOTS but at the end) with their values, 0 for padding.
template <class Visit>
SPMVJIT_DEVICE void vm_gather_steps(const SpmvArgs& a, Visit visit) {
  const vm::Code* SPMVJIT_RESTRICT values = (const vm::Code*)a.a[DP_VM_VALUES];
  const I* SPMVJIT_RESTRICT map = (const I*)a.a[DP_VM_MAP];
  const i64 count = a.n[DP_VM_N_COUNT], threads = i64(gridDim.x) * blockDim.x;
  for (i64 j = i64(blockIdx.x) * blockDim.x + threadIdx.x; j < count; j += threads * DP_VM_SLOTS) {
    const i64 left = (count - j + threads - 1) / threads;  // slots of this thread still to go
    const int k = left < DP_VM_SLOTS ? int(left) : DP_VM_SLOTS;
    I m[DP_VM_SLOTS];
    vm::Code v[DP_VM_SLOTS];
#pragma unroll
    for (int t = 0; t < DP_VM_SLOTS; ++t) m[t] = t < k ? spmvjit_ld_stream(map + j + t * threads) : I(-1);
#pragma unroll
    for (int t = 0; t < DP_VM_SLOTS; ++t) v[t] = m[t] < 0 ? vm::Code(0) : spmvjit_ldg(values + m[t]);
    visit(j, threads, v, k);
  }
}

// Value map, pass 2: the gather (or, with n[DP_VM_N_CHECK], its comparison with out).
extern "C" __global__ void __launch_bounds__(DP_BLOCK) spmvjit_vm_gather(const SpmvArgs a) {
  vm::Code* SPMVJIT_RESTRICT out = (vm::Code*)a.a[DP_VM_OUT];
  const bool check = a.n[DP_VM_N_CHECK] != 0;
  i64 bad = 0;
  vm_gather_steps(a, [&](i64 j, i64 step, const vm::Code* v, int k) {
#pragma unroll
    for (int t = 0; t < DP_VM_SLOTS; ++t) {
      if (t >= k) break;
      if (check)
        bad += out[j + t * step] != v[t];
      else
        out[j + t * step] = v[t];
    }
  });
  if (bad) spmvjit_atomic_add_u64((vm::u64*)a.a[DP_VM_ERRORS], vm::u64(bad));
}

// Value map and compression in one pass (a CODE8 plan's update whose table holds the values):
// reads the map and the values once and writes one byte per slot, where a gather and an encode
// wrote and read the plain values once more.
extern "C" __global__ void __launch_bounds__(DP_BLOCK) spmvjit_vm_gather_codes(const SpmvArgs a) {
  unsigned char* SPMVJIT_RESTRICT out = (unsigned char*)a.a[DP_VM_OUT];
  const vm::Code* SPMVJIT_RESTRICT table = (const vm::Code*)a.a[DP_VM_TABLE];
  const int n = int(a.n[DP_VM_N_TABLE]);
  i64 bad = 0;
  vm_gather_steps(a, [&](i64 j, i64 step, const vm::Code* v, int k) {
#pragma unroll
    for (int t = 0; t < DP_VM_SLOTS; ++t) {
      if (t >= k) break;
      const int c = vg::table_position(table, n, v[t]);
      bad += c == n || spmvjit_ldg(table + c) != v[t];
      out[j + t * step] = (unsigned char)c;
    }
  });
  if (bad) spmvjit_atomic_add_u64((vm::u64*)a.a[DP_VM_ERRORS], vm::u64(bad));
}

// Value compression: binary search of each value's bits in the sorted table (at most 256
// patterns, read through the read-only cache); one atomic per thread that found a stranger.
extern "C" __global__ void __launch_bounds__(DP_BLOCK) spmvjit_vm_encode(const SpmvArgs a) {
  const vm::Code* SPMVJIT_RESTRICT values = (const vm::Code*)a.a[DP_VC_VALUES];
  unsigned char* SPMVJIT_RESTRICT codes = (unsigned char*)a.a[DP_VC_CODES];
  const vm::Code* SPMVJIT_RESTRICT table = (const vm::Code*)a.a[DP_VC_TABLE];
  const int n = int(a.n[DP_VC_N_TABLE]);
  i64 bad = 0;
  for (i64 j = i64(blockIdx.x) * blockDim.x + threadIdx.x; j < a.n[DP_VC_N_COUNT];
       j += i64(gridDim.x) * blockDim.x) {
    const vm::Code v = spmvjit_ld_stream(values + j);
    const int lo = vg::table_position(table, n, v);
    bad += lo == n || spmvjit_ldg(table + lo) != v;
    if (codes) codes[j] = (unsigned char)lo;
  }
  if (bad) spmvjit_atomic_add_u64((vm::u64*)a.a[DP_VC_ERRORS], vm::u64(bad));
}
