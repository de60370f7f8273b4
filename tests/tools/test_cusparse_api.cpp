// The bench's cuSPARSE table (tools/spmvjit/cusparse_api.cpp): every function or none, and a
// message naming the files looked for when the library is missing.
#include <catch2/catch.hpp>

#ifdef SPMVJIT_BENCH_CUSPARSE
#include "tools/spmvjit/cusparse_api.hpp"

namespace spmvjit::cli {

TEST_CASE("the cuSPARSE peer is loaded at run time, or bench says which files it looked for", "[cli][cuda]") {
  CusparseApi api;
  std::string why;
  CHECK_FALSE(load_cusparse({"libspmvjit_no_such_cusparse.so.12"}, &api, &why));
  CHECK(why.find("cannot load cuSPARSE (looked for libspmvjit_no_such_cusparse.so.12 (") !=
        std::string::npos);
  // A library that loads but is not cuSPARSE: named with what it lacks, nothing half-resolved kept.
  CHECK_FALSE(load_cusparse({"libm.so.6"}, &api, &why));
  CHECK(why.find("libm.so.6 lacks cusparseGetProperty, cusparseGetErrorString") != std::string::npos);
  CHECK(api.cusparseSpMV == nullptr);

  const std::vector<std::string> names = cusparse_library_names();
  REQUIRE(names.size() >= 2);
  CHECK(names[0] == "libcusparse.so." + std::to_string(CUSPARSE_VER_MAJOR));
  CHECK(names.back() == "libcusparse.so");
  why.clear();
  const CusparseApi* sp = cusparse_api(&why);
  if (!sp) {
    // A machine without cuSPARSE: the message names the soname looked for first.
    CHECK(why.find(names[0]) != std::string::npos);
    WARN("cuSPARSE not loadable here: " << why);
    return;
  }
  CHECK(sp->library != "libcusparse.so");  // a versioned file loads first
  CHECK(sp->version.rfind(std::to_string(CUSPARSE_VER_MAJOR) + ".", 0) == 0);
#define SPMVJIT_CHECK_RESOLVED(fn) CHECK(sp->fn != nullptr);
  SPMVJIT_CUSPARSE_FUNCTIONS(SPMVJIT_CHECK_RESOLVED)
#undef SPMVJIT_CHECK_RESOLVED
  CHECK(std::string(sp->cusparseGetErrorString(CUSPARSE_STATUS_SUCCESS)).size() > 0);
  CHECK(sp == cusparse_api());  // loaded once
}

}  // namespace spmvjit::cli
#endif
