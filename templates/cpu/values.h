// Reading a format's values through the plan's value codec (templates/contract/values.h). A CPU
// template declares its value arrays with SPMVJIT_DECLARE_VALUES(name, args, slot) (or passes
// SPMVJIT_VALUES_AT(args, slot) as a spmvjit_values_t) and reads them
// as it reads a plain `const V*`: name[k] and name + k work. With plain values the declaration is
// exactly that pointer, so the code is what it was before compression existed. Included by the
// CPU prelude.
#ifndef SPMVJIT_CPU_VALUES_H
#define SPMVJIT_CPU_VALUES_H
#include "../contract/values.h"

#ifndef SPMVJIT_VALUE_CODEC
#define SPMVJIT_VALUE_CODEC 0
#endif

#if SPMVJIT_VALUE_CODEC == SPMVJIT_VALUES_PLAIN
typedef const V* spmvjit_values_t;
// Restrict-qualifies a spmvjit_values_t derived from a declared array (a plain pointer only).
#define SPMVJIT_VALUES_RESTRICT SPMVJIT_RESTRICT
#define SPMVJIT_VALUES_AT(args, slot) ((const V*)(args).a[slot])
#define SPMVJIT_DECLARE_VALUES(name, args, slot) \
  const V* SPMVJIT_RESTRICT name = SPMVJIT_VALUES_AT(args, slot)
#else
#define SPMVJIT_VALUES_RESTRICT
// A position in a compressed value array: the code pointer (CODE8) and the table, or the one
// value (UNIFORM).
struct spmvjit_values_t {
#if SPMVJIT_VALUE_CODEC == SPMVJIT_VALUES_UNIFORM
  V v;
  inline V operator[](i64) const { return v; }
  inline spmvjit_values_t operator+(i64) const { return *this; }
#elif SPMVJIT_VALUE_CODEC == SPMVJIT_VALUES_CODE8
  const unsigned char* c;
  const V* t;
  inline V operator[](i64 k) const { return t[c[k]]; }
  inline spmvjit_values_t operator+(i64 k) const { return spmvjit_values_t{c + k, t}; }
#else
#error "unknown SPMVJIT_VALUE_CODEC"
#endif
};
static inline spmvjit_values_t spmvjit_values_at(const void* array, const void* table) {
#if SPMVJIT_VALUE_CODEC == SPMVJIT_VALUES_UNIFORM
  (void)array;
  return spmvjit_values_t{*(const V*)table};
#else
  return spmvjit_values_t{(const unsigned char*)array, (const V*)table};
#endif
}
#define SPMVJIT_VALUES_AT(args, slot) spmvjit_values_at((args).a[slot], (args).values_table)
#define SPMVJIT_DECLARE_VALUES(name, args, slot) const spmvjit_values_t name = SPMVJIT_VALUES_AT(args, slot)
#endif

#endif  // SPMVJIT_CPU_VALUES_H
