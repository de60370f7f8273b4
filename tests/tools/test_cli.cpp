// Tests of the spmvjit command line as a user runs it: non-finite and subnormal values,
// duplicate entries, oversized files and the automatic index type.
#include <catch2/catch.hpp>
#include <cstdio>
#include <fstream>
#include <string>

#include "../test_support.hpp"

#ifdef SPMVJIT_CLI_PATH
namespace spmvjit {
namespace {

std::string cli() { return std::string("'") + SPMVJIT_CLI_PATH + "'"; }

std::string write_file(const test::TempDir& dir, const std::string& name, const std::string& text) {
  const std::string path = dir.path() + "/" + name;
  std::ofstream(path) << text;
  return path;
}

// A 16 x 16 matrix whose entries are `scale` times numbers in [0.5, 4): every product with x in
// [-1, 1) and every result is subnormal when scale is 1e-310 (double) or 1e-40 (float).
std::string subnormal_matrix(const char* scale) {
  std::string body;
  int count = 0;
  for (int i = 1; i <= 16; ++i)
    for (int j = 1; j <= 16; ++j)
      if ((i + j) % 3 == 0 || i == j) {
        char line[64];
        std::snprintf(line, sizeof line, "%d %d %.4f%s\n", i, j,
                      0.5 + 3.5 * double((i * 7 + j * 13) % 17) / 17.0, scale);
        body += line;
        ++count;
      }
  return "%%MatrixMarket matrix coordinate real general\n16 16 " + std::to_string(count) + "\n" + body;
}

}  // namespace

TEST_CASE("run verifies matrices with inf, NaN and subnormal values", "[cli][reference]") {
  if (!test::require_cpu_backend()) return;
  test::TempDir dir;
  const std::string inf = write_file(dir, "inf.mtx",
                                     "%%MatrixMarket matrix coordinate real general\n2 2 3\n"
                                     "1 1 inf\n1 2 1.0\n2 2 -Infinity\n");
  const std::string nan = write_file(dir, "nan.mtx",
                                     "%%MatrixMarket matrix coordinate real general\n3 3 4\n"
                                     "1 1 nan\n1 2 1.0\n2 2 2.5\n3 1 1e-310\n");
  const std::string sub = write_file(dir, "subnormal.mtx", subnormal_matrix("e-310"));
  const std::string subf = write_file(dir, "subnormal_float.mtx", subnormal_matrix("e-40"));
  const std::pair<std::string, std::string> runs[] = {
      {inf, ""}, {nan, ""}, {sub, ""}, {subf, " --value float"}, {inf, " --value float --format csr"}};
  for (const auto& [path, extra] : runs) {
    INFO(path << extra);
    std::string out;
    const int rc = test::run_command(cli() + " run '" + path + "' --backend cpu --iters 1" + extra, &out);
    INFO(out);
    CHECK(rc == 0);
    CHECK(out.find("verified yes") != std::string::npos);
  }
}

}  // namespace spmvjit
#endif
