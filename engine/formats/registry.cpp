// The list of formats the planner may choose from; each lives in its own file.
#include "engine/formats/format.hpp"

namespace spmvjit {

const Format& csr_format();
const Format& sell_format();

const std::vector<const Format*>& all_formats() {
  static const std::vector<const Format*> formats = {&csr_format(), &sell_format()};
  return formats;
}

const Format* find_format(const std::string& name) {
  for (const Format* f : all_formats())
    if (f->name() == name) return f;
  return nullptr;
}

}  // namespace spmvjit
