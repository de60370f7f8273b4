// Shared converter helpers: names, JSON of parameters, balanced partitions, byte totals.
#include <algorithm>
#include <cstring>

#include "core/parallel.hpp"
#include "engine/formats/device_converter.hpp"
#include "engine/formats/format.hpp"
#include "engine/formats/partition.hpp"

namespace spmvjit {

Json params_json(const FormatParams& p) {
  Json out = Json::object();
  for (const auto& [k, v] : p) out[k] = v;
  return out;
}

std::vector<int64_t> value_slot_bases(const FormatData& d) {
  std::vector<int64_t> bases(d.arrays.size() + 1, -1);
  int64_t next = 0;
  for (size_t i = 0; i < d.arrays.size(); ++i)
    if (d.arrays[i].is_values()) bases[i] = next, next += d.arrays[i].count;
  bases.back() = next;
  return bases;
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
    if (!h.host_only()) b += h.count * int64_t(h.elem);
  return b;
}

void FormatData::declare(const std::string& format_name, const FormatParams& p, std::span<const ArraySlot> slots,
                         IndexType i, ValueType v) {
  SPMVJIT_ASSERT(slots.size() <= size_t(kMaxArrays), format_name + " declares more than kMaxArrays arrays");
  format = format_name;
  params = p;
  index = i;
  value = v;
  arrays.clear();
  arrays.resize(slots.size());
  for (size_t k = 0; k < slots.size(); ++k) arrays[k].name = slots[k].name, arrays[k].kind = slots[k].kind;
}

HostArray& FormatData::at(int slot, size_t elem_bytes) {
  SPMVJIT_ASSERT(slot >= 0 && size_t(slot) < arrays.size(), format + ": no array slot " + std::to_string(slot));
  HostArray& h = arrays[size_t(slot)];
  // Value slots also take one-byte codes (Format::convert_codes).
  SPMVJIT_ASSERT(element_bytes(h.kind, index, value) == elem_bytes || (h.is_values() && elem_bytes == 1),
                 format + "." + h.name + ": " + std::to_string(elem_bytes) + "-byte elements in a slot of " +
                     std::to_string(element_bytes(h.kind, index, value)) + "-byte ones");
  h.elem = elem_bytes;
  return h;
}

void FormatData::put(int slot, HostArray a) {
  HostArray& h = at(slot, a.elem);
  a.name = h.name;
  a.kind = h.kind;
  h = std::move(a);
}

void set_cpu_parts(FormatData& d, int slot, const std::vector<int64_t>& bounds) {
  int64_t* p = d.make<int64_t>(slot, int64_t(bounds.size()));
  std::copy(bounds.begin(), bounds.end(), p);
  d.steps.push_back({"spmvjit_part", int64_t(bounds.size()) - 1, 1, 0});
}

void copy_csr_arrays(FormatData& d, const CsrRef& a, int64_t padded, bool copy_col_idx) {
  SPMVJIT_ASSERT(padded >= a.nnz, "CSR padding below nnz");
  const size_t is = size_of(a.index), vs = size_of(a.value);
  HostArray& rp = d.at(kCsrRowPtrSlot, is);
  HostArray& ci = d.at(kCsrColIdxSlot, is);
  HostArray& va = d.at(kCsrValuesSlot, vs);
  SPMVJIT_ASSERT(rp.name == "row_ptr" && ci.name == "col_idx" && va.name == "values",
                 d.format + ": slots 0-2 are not the CSR arrays");
  rp.count = a.rows + 1, va.count = padded;
  rp.buf = AlignedBuffer(is * size_t(a.rows + 1));
  va.buf = AlignedBuffer(vs * size_t(padded));
  parallel_copy(rp.buf.data(), a.row_ptr, rp.buf.bytes());
  parallel_copy(va.buf.data(), a.val, vs * size_t(a.nnz));
  if (padded > a.nnz)
    std::memset(static_cast<char*>(va.buf.data()) + vs * size_t(a.nnz), 0, vs * size_t(padded - a.nnz));
  if (!copy_col_idx) return;
  ci.count = padded;
  ci.buf = AlignedBuffer(is * size_t(padded));
  parallel_copy(ci.buf.data(), a.col_idx, is * size_t(a.nnz));
  if (padded > a.nnz)
    std::memset(static_cast<char*>(ci.buf.data()) + is * size_t(a.nnz), 0, is * size_t(padded - a.nnz));
}

void put_device_csr_arrays(FormatData& d, DeviceConverter& dc, int64_t padded) {
  d.put(kCsrRowPtrSlot, dc.row_ptr());
  d.put(kCsrColIdxSlot, dc.col_idx(padded));
  d.put(kCsrValuesSlot, dc.values(padded));
}

void csr_layout_to_triplets(const FormatData& d, const CsrRef& shape, std::vector<Triplet>& out) {
  dispatch_types_complex(shape.index, shape.value, [&]<class I, class V>() {
    const I* rp = d.arrays[0].buf.template as<I>();
    const I* ci = d.arrays[1].buf.template as<I>();
    const V* va = d.arrays[2].buf.template as<V>();
    for (int64_t r = 0; r < shape.rows; ++r)
      for (int64_t k = rp[r]; k < rp[r + 1]; ++k)
        if (va[k] != V(0)) out.push_back(make_triplet(r, int64_t(ci[k]), va[k]));
  });
}

}  // namespace spmvjit
