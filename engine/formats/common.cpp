// Shared converter helpers: names, JSON of parameters, balanced partitions, byte totals.
#include <algorithm>

#include "engine/formats/format.hpp"
#include "engine/formats/partition.hpp"

namespace spmvjit {

std::string params_json(const FormatParams& p) {
  std::string out = "{";
  for (const auto& [k, v] : p) out += (out.size() > 1 ? ",\"" : "\"") + k + "\":" + std::to_string(v);
  return out + "}";
}

std::vector<int64_t> balance_rows(const CsrRef& a, int parts, int64_t granule) {
  const int64_t units = (a.rows + granule - 1) / granule;
  return split_prefix(units, parts, [&](int64_t u) {
    const int64_t r = std::min(a.rows, u * granule);
    return a.row_begin(r) + r;  // nonzeros plus one per row (the y write and row overhead)
  });
}

FormatData Format::convert_device(DeviceConverter&, const FormatParams&, const TargetInfo&) const {
  fail(SPMV_STATUS_UNSUPPORTED, name() + ": no device conversion");
}

int64_t sum_matrix_bytes(const FormatData& d) {
  int64_t b = 0;
  for (const auto& h : d.arrays)
    if (h.name != "parts") b += h.count * int64_t(h.elem);
  return b;
}

void csr_layout_to_triplets(const FormatData& d, const CsrRef& shape, std::vector<Triplet>& out) {
  dispatch_types(shape.index, shape.value, [&]<class I, class V>() {
    const I* rp = d.arrays[0].buf.template as<I>();
    const I* ci = d.arrays[1].buf.template as<I>();
    const V* va = d.arrays[2].buf.template as<V>();
    for (int64_t r = 0; r < shape.rows; ++r)
      for (int64_t k = rp[r]; k < rp[r + 1]; ++k)
        if (va[k] != V(0)) out.push_back({r, int64_t(ci[k]), double(va[k])});
  });
}

}  // namespace spmvjit
