// The list of formats the planner may choose from; each lives in its own file.
#include "engine/formats/format.hpp"

namespace spmvjit {

const Format& csr_format();
const Format& sell_format();
const Format& coo_format();
const Format& csr_vector_format();
const Format& ell_format();
const Format& hyb_format();
const Format& jds_format();
const Format& merge_format();
const Format& sellp_format();
const Format& sell_block_format();
const Format& sell_diag_format();
const Format& csr5_format();
const Format& csr_adaptive_format();

const std::vector<const Format*>& all_formats() {
  static const std::vector<const Format*> formats = {&csr_format(), &sell_format(),
      &coo_format(), &csr_vector_format(), &ell_format(), &hyb_format(), &jds_format(), &merge_format(),
      &sellp_format(), &sell_block_format(), &sell_diag_format(), &csr5_format(), &csr_adaptive_format()};
  return formats;
}

const Format* find_format(const std::string& name) {
  for (const Format* f : all_formats())
    if (f->name() == name) return f;
  return nullptr;
}

}  // namespace spmvjit
