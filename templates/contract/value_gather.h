// Update gathers of a format's own (Format::device_gather, engine/value_map.cpp): a device value
// map's kernel that computes the slots of rows whose placement follows from the layout and the
// pattern (a stencil's interior row, a full block row) and reads the map only for the others.
// The arguments, the same for every format; the layout's arrays and sizes are the format's own.
#ifndef SPMVJIT_CONTRACT_VALUE_GATHER_H
#define SPMVJIT_CONTRACT_VALUE_GATHER_H

// SpmvArgs::x: the new values (nnz, in the pattern's CSR order); values_table: the sorted CODE8
// table (VG_CODES); scratch: an unsigned 64-bit count the kernel adds its errors to (values the
// table lacks, computed positions that differ from the map).
// a[VG_ROW_PTR]: the pattern's zero-based row_ptr; a[VG_MAP0 + i]: the map of the layout's value
// array i (in array order; index type, -1 for padding); a[VG_OUT0 + i]: what the gather writes
// for it; a[VG_LAYOUT0 + k]: the layout arrays the format names.
enum { VG_ROW_PTR, VG_MAP0, VG_MAP1, VG_OUT0, VG_OUT1, VG_LAYOUT0 };  // a[]
enum { VG_MAX_VALUE_ARRAYS = 2, VG_MAX_LAYOUT = 3 };
// n[VG_N_MODE]: what the kernel does with each slot; n[VG_N_TABLE]: the table's patterns;
// n[VG_N_PARAM0 + k]: the sizes the format names.
enum { VG_N_MODE, VG_N_TABLE, VG_N_PARAM0 };
enum {
  VG_GATHER,  // out[slot] = the slot's new value (0 for padding), as wide as V
  VG_CODES,   // out[slot] = its CODE8 code (a byte)
  VG_CHECK    // nothing written: each computed position compared with the map, differences counted
};

#endif  // SPMVJIT_CONTRACT_VALUE_GATHER_H
