// The format registry: every format registers itself from its own file (SPMVJIT_REGISTER_FORMAT).
#include <algorithm>

#include "engine/formats/format.hpp"

namespace spmvjit {
namespace {

std::vector<const Format*>& registered() {
  static std::vector<const Format*> formats;
  return formats;
}

}  // namespace

bool register_format(const Format& f) {
  std::vector<const Format*>& all = registered();
  SPMVJIT_ASSERT(std::none_of(all.begin(), all.end(), [&](const Format* g) { return g->name() == f.name(); }),
                 "format " + f.name() + " registered twice");
  // Sorted by name as they arrive: static initialization order differs between links.
  all.insert(std::upper_bound(all.begin(), all.end(), &f,
                              [](const Format* x, const Format* y) { return x->name() < y->name(); }),
             &f);
  return true;
}

const std::vector<const Format*>& all_formats() { return registered(); }

const Format* find_format(const std::string& name) {
  for (const Format* f : all_formats())
    if (f->name() == name) return f;
  return nullptr;
}

}  // namespace spmvjit
