// The kernel contract: every format declares its arrays once (templates/contract/<format>.h), its
// converters fill exactly those slots with the declared element kinds, and its templates compile
// against the same declaration. A converter that puts an array in another slot, or with another
// element type, than its kernels read fails here.
#include <catch2/catch.hpp>
#include <set>
#include <string>

#include "codegen/kernel_spec.hpp"
#include "engine/formats/format.hpp"
#include "engine/gen/generators.hpp"
#include "engine/stats.hpp"

namespace {

using namespace spmvjit;

TargetInfo target_of(BackendKind b) {
  TargetInfo t;
  t.backend = b;
  t.target = b == BackendKind::cpu ? "x86_64-test" : "sm_90";
  t.threads = b == BackendKind::cpu ? 3 : 1;
  t.sm_count = b == BackendKind::cpu ? 0 : 132;
  t.simd_bytes = b == BackendKind::cpu ? 32 : 0;
  return t;
}

// Returns how many candidates converted.
// `symmetric`: the matrix (symmetric) is planned as declared so (sym_diag's candidates need it).
template <class I, class V>
int check_format_on(const Format& f, const HostCsr<I, V>& a, const TargetInfo& t, bool symmetric = false) {
  int converted = 0;
  MatrixStats s = compute_stats(a.ref());
  s.symmetric = symmetric;
  const auto slots = f.contract_arrays();
  for (const FormatParams& p : f.candidates(a.ref(), s, t)) {
    INFO(f.name() << " " << params_json(p).dump() << " on " << to_string(t.backend) << ", "
                  << to_string(index_type_of<I>()) << "/" << to_string(value_type_of<V>()));
    FormatData d;
    try {
      d = f.convert(a.ref(), p, t);
    } catch (const Error& e) {
      CHECK(e.status() == SPMV_STATUS_UNSUPPORTED);
      continue;
    }
    CHECK(d.format == f.name());
    CHECK(d.index == index_type_of<I>());
    CHECK(d.value == value_type_of<V>());
    REQUIRE(d.arrays.size() == slots.size());
    for (size_t k = 0; k < slots.size(); ++k) {
      const HostArray& h = d.arrays[k];
      INFO("slot " << k << " (" << slots[k].name << ")");
      CHECK(h.name == slots[k].name);
      CHECK(h.kind == slots[k].kind);
      CHECK(h.buf.bytes() == size_t(h.count) * h.elem);
      const bool offsets16 = col_bits16(d.params) && h.name == "col_idx";  // index compression
      if (h.count) CHECK(h.elem == (offsets16 ? 2 : element_bytes(slots[k].kind, d.index, d.value)));
      // Thread-pool ranges exist on the CPU only; GPU launches never read them.
      if (h.host_only() && t.gpu()) CHECK(h.count == 0);
      if (h.host_only() && !t.gpu()) CHECK(h.count > 0);
    }
    CHECK(d.matrix_bytes == sum_matrix_bytes(d));
    ++converted;
  }
  return converted;
}

}  // namespace

TEST_CASE("every converter fills exactly its contract's slots with the declared element kinds",
          "[contract]") {
  const auto m = generate_matrix("powerlaw:3000:1.8", 5);
  const auto band = generate_matrix("poisson2d:30", 5);
  // Block-structured (3D FEM, 2 unknowns per node): formats that apply only to such matrices
  // (bsr) get candidates too.
  const auto fem = generate_matrix("blockfem:5:2", 5);
  int checked = 0;
  for (const Format* f : all_formats()) {
    INFO(f->name());
    REQUIRE_FALSE(f->contract_arrays().empty());
    for (BackendKind b : {BackendKind::cpu, BackendKind::cuda}) {
      if (!f->supports(b)) continue;
      const TargetInfo t = target_of(b);
      int converted = check_format_on(*f, m, t);
      converted += check_format_on(*f, band.template cast<int32_t, float>(), t);
      converted += check_format_on(*f, fem.template cast<int64_t, double>(), t);
      converted += check_format_on(*f, band, t, true);  // poisson2d is symmetric
      CHECK(converted > 0);                             // every format is checked on something
    }
    ++checked;
  }
  CHECK(checked == int(all_formats().size()));
}

TEST_CASE("every format's templates include its contract header", "[contract]") {
  for (const Format* f : all_formats()) {
    for (BackendKind b : {BackendKind::cpu, BackendKind::cuda}) {
      if (!f->supports(b)) continue;
      INFO(f->name() << " on " << to_string(b));
      const std::string text = generate_source(spec_for(target_of(b), f->name(), f->template_name(),
                                                        IndexType::i32, ValueType::f64))
                                   .text;
      CHECK(text.find("#line 1 \"contract/" + f->name() + ".h\"") != std::string::npos);
    }
  }
}

TEST_CASE("formats register themselves once, in name order", "[contract]") {
  const auto& all = all_formats();
  REQUIRE(all.size() >= 13);
  for (size_t i = 1; i < all.size(); ++i) CHECK(all[i - 1]->name() < all[i]->name());
  for (const Format* f : all) CHECK(find_format(f->name()) == f);
  CHECK(find_format("no_such_format") == nullptr);
}
