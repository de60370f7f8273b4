// Value compression: how a format's value arrays are stored, baked into its kernels as the
// constant SPMVJIT_VALUE_CODEC (the format parameter VALUE_CODEC; absent means plain). Many
// matrices hold few distinct values (graph adjacency: all ones; constant-coefficient stencils;
// FEM with repeated element matrices): a kernel that reads one byte, or nothing, per stored entry
// instead of a double moves far fewer bytes. The table (SpmvArgs::values_table) is data, not
// code, so the kernel space stays finite. engine/value_codec.hpp chooses and encodes.
#ifndef SPMVJIT_CONTRACT_VALUES_H
#define SPMVJIT_CONTRACT_VALUES_H

// Macros, not an enum: templates choose their code with #if.
#define SPMVJIT_VALUES_PLAIN 0        // one V per stored entry
#define SPMVJIT_VALUES_UNIFORM 1      // no array: every stored entry is values_table[0] (no padding)
#define SPMVJIT_VALUES_CODE8 2        // one byte per stored entry: an index into values_table
#define SPMVJIT_VALUES_CODES 3        // codec ids are 0 .. SPMVJIT_VALUES_CODES - 1
#define SPMVJIT_VALUES_TABLE_MAX 256  // entries of a CODE8 table

#endif  // SPMVJIT_CONTRACT_VALUES_H
