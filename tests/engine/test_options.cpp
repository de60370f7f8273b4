// spmv_options_t versioning: struct_size says which fields the caller knows; the library reads
// only those and gives the others their defaults, and refuses options never initialized.
#include <catch2/catch.hpp>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

#include "engine/gen/generators.hpp"
#include "spmvjit/spmvjit.hpp"
#include "tests/test_support.hpp"

namespace {

using namespace spmvjit;

struct Matrix {
  HostCsr<int32_t, double> a = generate_matrix("poisson2d:120", 1).cast<int32_t, double>();
  spmv_csr_t desc() const {
    return csr_view<int32_t, double>(a.rows, a.cols, a.nnz(), a.row_ptr.data(), a.col_idx.data(),
                                     a.val.data());
  }
};

std::string g_error;  // spmv_last_error() of plan_status's spmv_plan

// spmv_plan's status for `o` (its error in g_error); destroys the plan.
spmv_status_t plan_status(const spmv_options_t& o, Json* describe = nullptr) {
  Matrix m;
  const spmv_csr_t d = m.desc();
  spmv_plan_t p = nullptr;
  const spmv_status_t s = spmv_plan(&p, &d, &o);
  g_error = spmv_last_error();
  if (s == SPMV_STATUS_SUCCESS && describe) {
    const char* json = nullptr;
    REQUIRE(spmv_plan_describe(p, &json) == SPMV_STATUS_SUCCESS);
    *describe = Json::parse(json);
  }
  spmv_plan_destroy(p);
  return s;
}

TEST_CASE("options: spmv_options_init sets struct_size; uninitialized options are refused", "[api]") {
  spmv_options_t o;
  spmv_options_init(&o);
  CHECK(o.struct_size == sizeof(spmv_options_t));
  CHECK(o.backend == SPMV_BACKEND_AUTO);
  CHECK(o.log_level == SPMV_LOG_DEFAULT);
  for (size_t bad :
       {size_t(0), size_t(4), offsetof(spmv_options_t, backend) + 2, size_t(1) << 20, SIZE_MAX}) {
    INFO("struct_size " << bad);
    o.struct_size = bad;
    CHECK(plan_status(o) == SPMV_STATUS_INVALID_VALUE);
    CHECK(g_error.find("options not initialized with spmv_options_init") != std::string::npos);
  }
}

TEST_CASE("options: an older caller's smaller struct gets defaults for the fields it lacks", "[api]") {
  if (!test::require_cpu_backend()) return;
  // A caller that knew the fields up to cache_dir: what lies beyond is not its, never read.
  spmv_options_t o;
  spmv_options_init(&o);
  o.struct_size = offsetof(spmv_options_t, format);
  o.backend = SPMV_BACKEND_CPU;
  o.threads = 1;
  o.cache_dir = "";
  o.format = "no_such_format";
  std::memset(&o.log_level, 0x7f, sizeof o.log_level);
  std::memset(&o.planning, 0x7f, sizeof o.planning);
  o.deterministic = 1;
  Json d;
  REQUIRE(plan_status(o, &d) == SPMV_STATUS_SUCCESS);
  CHECK(d["threads"].as_int() == 1);  // within struct_size: read
  CHECK(d["deterministic"].as_bool() == false);
  // A field cut by struct_size is not read either.
  spmv_options_init(&o);
  o.backend = SPMV_BACKEND_CPU;
  o.threads = -1;
  o.struct_size = offsetof(spmv_options_t, threads) + 2;
  CHECK(plan_status(o) == SPMV_STATUS_SUCCESS);
  o.struct_size = offsetof(spmv_options_t, threads) + sizeof o.threads;
  CHECK(plan_status(o) == SPMV_STATUS_INVALID_VALUE);
  CHECK(g_error.find("threads") != std::string::npos);
}

TEST_CASE("options: spmv_options_init_sized writes only the caller's bytes", "[api]") {
  // Older caller: its struct ends where the format field began.
  alignas(spmv_options_t) unsigned char buf[sizeof(spmv_options_t) + 16];
  std::memset(buf, 0xab, sizeof buf);
  auto* o = reinterpret_cast<spmv_options_t*>(buf);
  const size_t older = offsetof(spmv_options_t, format);
  spmv_options_init_sized(o, older);
  CHECK(o->struct_size == older);
  CHECK(o->backend == SPMV_BACKEND_AUTO);
  CHECK(o->cache_dir == nullptr);
  for (size_t i = older; i < sizeof buf; ++i) REQUIRE(buf[i] == 0xab);
  // Newer caller: a bigger struct, its unknown tail zeroed, and a plan still reads what it knows.
  std::memset(buf, 0xab, sizeof buf);
  spmv_options_init_sized(o, sizeof buf);
  CHECK(o->struct_size == sizeof buf);
  CHECK(o->log_level == SPMV_LOG_DEFAULT);
  for (size_t i = sizeof(spmv_options_t); i < sizeof buf; ++i) REQUIRE(buf[i] == 0);
  if (!test::require_cpu_backend()) return;
  o->backend = SPMV_BACKEND_CPU;
  o->threads = 1;
  Json d;
  REQUIRE(plan_status(*o, &d) == SPMV_STATUS_SUCCESS);
  CHECK(d["threads"].as_int() == 1);
  spmv_options_init_sized(nullptr, sizeof(spmv_options_t));  // no-op
}

}  // namespace
