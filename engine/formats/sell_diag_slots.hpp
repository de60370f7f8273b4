// sell_diag's value map read off its layout (Format::number_slots): where each slot's entry
// sits in the CSR, for a first update_values that converts nothing.
#pragma once

#include <cstddef>

#include "engine/formats/format.hpp"

namespace spmvjit {

// A row's entries are its held diagonal slots (offsets ascend: so do their columns) merged by
// column with its held remainder slots (entry q of row i of slice s at rem_ptr[s] + q * c + i,
// in the row's order). Writes every slot of diag_values and rem_values (-1: padding); false when
// the marks cannot be the pattern's entries.
bool sell_diag_number_slots(const FormatData& d, const CsrRef& shape, const HeldSlots& held,
                            void* const* positions, size_t pos_bytes);

}  // namespace spmvjit
