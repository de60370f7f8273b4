// How a format's contract header declares its arrays once, for the host and for its kernels:
//
//   #define JDS_ARRAYS(X) X(JDS_JD_PTR, jd_ptr, i64) X(JDS_PERM, perm, index) ...
//   SPMVJIT_DECLARE_ARRAYS(JDS_ARRAYS, kJdsArrays)
//
// Kernels get an enum of slots (they read a.a[JDS_PERM]). The host (SPMVJIT_HOST, defined by
// core/kernel_args.hpp) also gets the table kJdsArrays of {name, ArrayKind} by slot: converters
// allocate from it and a test checks every converter's output against it. Element kinds: index
// and value (the plan's I and V), i64, u64, u32, u16, u8, and parts (CPU thread-pool ranges,
// i64, never copied to a device).
#ifndef SPMVJIT_CONTRACT_ARRAYS_H
#define SPMVJIT_CONTRACT_ARRAYS_H

#define SPMVJIT_ARRAY_SLOT_(slot, name, kind) slot,
#ifdef SPMVJIT_HOST
#define SPMVJIT_ARRAY_ROW_(slot, name, kind) ArraySlot{#name, ArrayKind::kind},
#define SPMVJIT_DECLARE_ARRAYS(LIST, table) \
  enum { LIST(SPMVJIT_ARRAY_SLOT_) };       \
  inline constexpr ArraySlot table[] = {LIST(SPMVJIT_ARRAY_ROW_)};
#else
#define SPMVJIT_DECLARE_ARRAYS(LIST, table) \
  enum { LIST(SPMVJIT_ARRAY_SLOT_) };
#endif

#endif  // SPMVJIT_CONTRACT_ARRAYS_H
