// Tests of the spmvjit command line as a user runs it: non-finite and subnormal values,
// duplicate entries, oversized files and the automatic index type.
#include <sys/stat.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "../test_support.hpp"

#ifdef SPMVJIT_CLI_PATH
namespace spmvjit {
namespace {

std::string cli() { return std::string("'") + SPMVJIT_CLI_PATH + "'"; }

// A subshell whose address space is capped at 16 GB, so "beyond memory" holds on machines with
// more; not under AddressSanitizer, whose shadow memory cannot start in that (the limit is then
// physical memory, which the 128 GiB requests below still exceed on test machines).
std::string with_memory_cap() {
#if defined(__SANITIZE_ADDRESS__)
  return "(";
#else
  return "(ulimit -v 16000000; ";
#endif
}

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

TEST_CASE("the command line sums duplicates with a warning or refuses them (--duplicates error)",
          "[cli][io]") {
  test::TempDir dir;
  const std::string dup = write_file(dir, "dup.mtx",
                                     "%%MatrixMarket matrix coordinate real general\n2 2 3\n"
                                     "1 1 1\n2 2 1\n1 1 2\n");
  std::string out;
  CHECK(test::run_command(cli() + " inspect '" + dup + "' --backend cpu", &out) == 0);
  CHECK(
      out.find(
          "dup.mtx: 1 duplicate entry summed; the first, line 5: entry (1, 1) repeats (1, 1) from line 3") !=
      std::string::npos);
  for (const char* cmd : {" inspect ", " run ", " bench "}) {
    INFO(cmd);
    CHECK(test::run_command(cli() + cmd + "'" + dup + "' --backend cpu --duplicates error", &out) == 1);
    CHECK(out.find("dup.mtx:5: duplicate entry (1, 1) repeats (1, 1) from line 3 (duplicates are refused)") !=
          std::string::npos);
  }
  CHECK(test::run_command(cli() + " inspect '" + dup + "' --duplicates maybe", &out) == 2);
  CHECK(out.find("unknown --duplicates policy 'maybe' (sum, error)") != std::string::npos);
}

TEST_CASE("the command line takes int64 indices by itself when the matrix needs them", "[cli][io]") {
  test::TempDir dir;
  // 3 x 2^34 with 5 nonzeros, one in the last column: read and planned in well under a second.
  const std::string wide = write_file(dir, "wide.mtx",
                                      "%%MatrixMarket matrix coordinate real general\n3 17179869184 5\n"
                                      "1 1 1\n1 17179869184 2\n2 3 1.5\n3 8589934592 -1\n3 2 4\n");
  std::string out;
  const std::string note =
      "note: int64 indices: the matrix is 3 x 17179869184 with 5 nonzeros, beyond int32 indices";
  if (test::require_cpu_backend()) {
    CHECK(test::run_command(cli() + " inspect '" + wide + "' --backend cpu", &out) == 0);
    CHECK(out.find(note) != std::string::npos);
    CHECK(out.find(", int64/double): ") != std::string::npos);
    CHECK(test::run_command("(" + cli() + " inspect '" + wide + "' --backend cpu --json 2>/dev/null)",
                            &out) == 0);
    REQUIRE(test::json_error(out) == "");
    CHECK(Json::parse(out)["planner"]["index"] == Json("int64"));
  }
  // An explicit --index int32 is refused, as a usage error.
  const std::string refused =
      "--index int32: the matrix is 3 x 17179869184 with 5 nonzeros, beyond int32 indices (at most "
      "2147483647)";
  for (const char* cmd : {" inspect ", " run "}) {
    CHECK(test::run_command(cli() + cmd + "'" + wide + "' --backend cpu --index int32", &out) == 2);
    CHECK(out.find(refused) != std::string::npos);
  }
  // run picks int64 too, then finds x (128 GiB) beyond memory and says so before allocating it
  // (ulimit -v keeps that true on machines with more memory).
  CHECK(test::run_command(with_memory_cap() + cli() + " run '" + wide + "' --backend cpu)", &out) == 1);
  CHECK(out.find(note) != std::string::npos);
  CHECK(out.find("matrix needs about 128.0 GiB to plan, run and verify (x alone is 128.0 GiB)") !=
        std::string::npos);
  CHECK(out.find("bad_alloc") == std::string::npos);
}

TEST_CASE("oversized and non-regular inputs are refused at once with what is wrong", "[cli][io]") {
  test::TempDir dir;
  // 60 bytes declaring 2^34 empty rows: 128 GiB of row_ptr.
  const std::string rows =
      write_file(dir, "rows.mtx", "%%MatrixMarket matrix coordinate real general\n17179869184 1 0\n");
  std::string out;
  const auto t0 = std::chrono::steady_clock::now();
  CHECK(test::run_command(with_memory_cap() + cli() + " inspect '" + rows + "')", &out) == 1);
  CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(10));
  CHECK(out.find("rows.mtx:2: reading this 17179869184 x 1 matrix with 0 entries needs about 128.0 GiB") !=
        std::string::npos);
  CHECK(out.find("bad_alloc") == std::string::npos);
  CHECK(test::run_command(cli() + " inspect /dev/zero", &out) == 1);
  CHECK(out.find("cannot read '/dev/zero': a character device, not a regular file") != std::string::npos);
  // run peeks at the banner first (complex or real): neither that nor the reader reads a device
  // without end or waits on a FIFO no one writes.
  CHECK(test::run_command(with_memory_cap() + "timeout 20 " + cli() + " run /dev/zero)", &out) == 1);
  CHECK(out.find("cannot read '/dev/zero': a character device, not a regular file") != std::string::npos);
  const std::string fifo = dir.path() + "/fifo.mtx";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  CHECK(test::run_command("timeout 20 " + cli() + " run '" + fifo + "'", &out) == 1);
  CHECK(out.find("a FIFO or pipe, not a regular file") != std::string::npos);
}

TEST_CASE("command-line numbers out of range and unknown log levels are named", "[cli]") {
  const std::pair<std::string, std::string> bad[] = {
      {" --iters -5", "--iters must be in [1, "},
      {" --device -3", "--device must be in [0, "},
      {" --threads 99999999999", "--threads must be in [0, "},
      {" --seed 99999999999999999999", "--seed must be in [0, "}};
  for (const auto& [arg, want] : bad) {
    INFO(arg);
    std::string out;
    CHECK(test::run_command(cli() + " run --gen poisson2d:5 --backend cpu" + arg, &out) == 2);
    CHECK(out.find(want) != std::string::npos);
  }
  if (!test::require_cpu_backend()) return;
  std::string out;
  CHECK(test::run_command(
            "SPMVJIT_LOG_LEVEL=loud " + cli() + " run --gen poisson2d:5 --backend cpu --iters 1", &out) == 0);
  CHECK(out.find("ignoring SPMVJIT_LOG_LEVEL=loud") != std::string::npos);
}

TEST_CASE("progress lines go to stderr on a terminal or with SPMVJIT_PROGRESS=1, never otherwise", "[cli]") {
  if (!test::require_cpu_backend()) return;
  test::TempDir dir;
  const std::string m = write_file(dir, "m.mtx", subnormal_matrix(""));
  // stderr alone (stdout to /dev/null inside the subshell); popen's pipe is not a terminal.
  auto stderr_of = [&](const std::string& env, const std::string& args) {
    std::string err;
    CHECK(test::run_command("(" + env + " " + cli() + args + " >/dev/null)", &err) == 0);
    return err;
  };
  const std::string inspect = " inspect '" + m + "' --backend cpu";
  const std::string bench = " bench --gen poisson2d:5 --backend cpu --formats csr,auto --iters 1 --no-peers";
  for (const char* env : {"env -u SPMVJIT_PROGRESS", "SPMVJIT_PROGRESS=0"})
    for (const std::string& args : {inspect, bench}) {
      INFO(env << args);
      CHECK(stderr_of(env, args) == "");
    }
  // Forced on into a pipe: each Progress's first state at once, its last one when it ends, then a
  // newline (a terminal would get the line erased instead).
  char kb[32];
  std::snprintf(kb, sizeof kb, "%.0f", double(std::filesystem::file_size(m)) / 1e3);
  std::string err = stderr_of("SPMVJIT_PROGRESS=1", inspect);
  INFO(err);
  CHECK(err.rfind(
            std::string("\rreading m.mtx: 0 / ") + kb + " KB\rreading m.mtx: " + kb + " / " + kb + " KB\n",
            0) == 0);
  err = stderr_of("SPMVJIT_PROGRESS=1", bench);
  INFO(err);
  CHECK(
      err.rfind("\rbench: generating matrix 1/1 poisson2d:5\n\rbench: matrix 1/1 poisson2d:5, format 1/2 csr",
                0) == 0);
  const std::string last = "\rbench: matrix 1/1 poisson2d:5, format 2/2 auto\n";
  CHECK((err.size() >= last.size() && err.compare(err.size() - last.size(), last.size(), last) == 0));
}

TEST_CASE("run --transpose multiplies by A^T and says what building it cost", "[cli][transpose]") {
  if (!test::require_cpu_backend()) return;
  for (const char* extra : {"", " --vectors 3 --layout row", " --format ell --value float"}) {
    INFO(extra);
    std::string out;
    const int rc = test::run_command(
        cli() + " run --gen lpwide:100:7 --backend cpu --iters 1 --transpose --describe" + extra, &out);
    INFO(out);
    CHECK(rc == 0);
    CHECK(out.find("op       A^T: its layout built at plan time") != std::string::npos);
    CHECK(out.find("\"operation\":\"A^T\"") != std::string::npos);
    CHECK(out.find("verified yes") != std::string::npos);
  }
  // bench: the plan of A^T verified against the reference's transpose, the peers on A^T.
  std::string out;
  const int rc = test::run_command(
      cli() + " bench --gen lpwide:100:7 --backend cpu --iters 1 --transpose --formats auto,csr", &out);
  INFO(out);
  CHECK(rc == 0);
  CHECK(out.find("auto:") != std::string::npos);
  CHECK(out.find("WRONG") == std::string::npos);
  CHECK(out.find("eigen (A^T built apart)") != std::string::npos);
}

TEST_CASE("run plans complex matrices: complex files, --value complex_*, --gen", "[cli][complex]") {
  if (!test::require_cpu_backend()) return;
  test::TempDir dir;
  const std::string herm = write_file(dir, "herm.mtx",
                                      "%%MatrixMarket matrix coordinate complex hermitian\n4 4 6\n1 1 4 0\n"
                                      "2 1 -1 0.5\n2 2 4 0\n3 2 -1 -2\n3 3 4 0\n4 1 0.25 1\n");
  const std::string real = write_file(dir, "real.mtx",
                                      "%%MatrixMarket matrix coordinate real general\n3 3 4\n"
                                      "1 1 1.5\n1 2 1.0\n2 2 2.5\n3 1 -2\n");
  const std::pair<std::string, std::string> runs[] = {
      {"'" + herm + "'", "complex_double"},
      {"'" + herm + "' --value complex_float --format sell", "complex_float"},
      {"'" + herm + "' --transpose --format ell --index int64", "complex_double"},
      {"'" + real + "' --value complex_float", "complex_float"},
      {"--gen powerlaw:300 --value complex_double --format csr_vector", "complex_double"},
      {"--gen random:200 --value complex_float --measure", "complex_float"},
      {"--gen lpwide:50:3 --value complex_double --conjugate-transpose --format coo", "complex_double"}};
  for (const auto& [input, value] : runs) {
    INFO(input);
    std::string out;
    const int rc = test::run_command(cli() + " run " + input + " --backend cpu --iters 1", &out);
    INFO(out);
    CHECK(rc == 0);
    CHECK(out.find(std::string("nonzeros, ") + value + " values") != std::string::npos);
    CHECK(out.find("verified yes") != std::string::npos);
    CHECK(out.find("complex alpha and beta") != std::string::npos);
    if (input.find("conjugate-transpose") != std::string::npos)
      CHECK(out.find("op       A^H: its layout built at plan time") != std::string::npos);
  }
  std::string out;
  CHECK(test::run_command(cli() + " run '" + herm + "' --backend cpu --transpose --conjugate-transpose",
                          &out) == 2);
  CHECK(out.find("--transpose and --conjugate-transpose: one of them") != std::string::npos);
  // A hermitian file is declared so (sym_diag then stores one triangle), --general plans it as a
  // general matrix, --symmetric makes a complex symmetric one of its lower triangle.
  CHECK(test::run_command(cli() + " run '" + herm + "' --backend cpu --iters 1", &out) == 0);
  CHECK(out.find("matrix   hermitian (the file says so)") != std::string::npos);
  CHECK(out.find("verified yes") != std::string::npos);
  CHECK(test::run_command(cli() + " run '" + herm + "' --backend cpu --iters 1 --general", &out) == 0);
  CHECK(out.find("hermitian file: both triangles stored, planned as a general matrix") != std::string::npos);
  CHECK(test::run_command(cli() + " run '" + herm + "' --backend cpu --iters 1 --symmetric", &out) == 0);
  CHECK(out.find("matrix   symmetric (made so from its lower triangle)") != std::string::npos);
  CHECK(out.find("verified yes") != std::string::npos);
  CHECK(test::run_command(
            cli() + " run --gen poisson2d:20 --value complex_float --hermitian --backend cpu --iters 1 "
                    "--format sym_diag",
            &out) == 0);
  CHECK(out.find("matrix   hermitian (made so from its lower triangle): one triangle stored (sym_diag)") !=
        std::string::npos);
  CHECK(out.find("verified yes") != std::string::npos);
  CHECK(test::run_command(cli() + " run '" + herm + "' --backend cpu --symmetric --general", &out) == 2);
  CHECK(out.find("exclude each other") != std::string::npos);
  // A complex file read into real values: refused.
  CHECK(test::run_command(cli() + " run '" + herm + "' --backend cpu --value double", &out) == 1);
  CHECK(out.find("a complex matrix cannot be read into real values") != std::string::npos);
  CHECK(test::run_command(cli() + " run '" + real + "' --backend cpu --value complex", &out) == 2);
  CHECK(out.find("unknown value type 'complex' (float, double, complex_float, complex_double)") !=
        std::string::npos);
}

// Complex values with k vectors (csr_mm) verified by run and bench (engine/reference_complex.hpp);
// bench on complex values (a real file's values with random imaginary parts, a complex file).
TEST_CASE("run and bench verify complex values with k vectors", "[cli][complex][spmm]") {
  if (!test::require_cpu_backend()) return;
  test::TempDir dir;
  const std::string cplx = write_file(dir, "c.mtx",
                                      "%%MatrixMarket matrix coordinate complex general\n4 3 5\n1 1 4 -1\n"
                                      "2 1 -1 0.5\n2 3 4 0\n3 2 -1 -2\n4 1 0.25 1\n");
  const std::string real = write_file(dir, "real.mtx",
                                      "%%MatrixMarket matrix coordinate real general\n3 3 4\n"
                                      "1 1 1.5\n1 2 1.0\n2 2 2.5\n3 1 -2\n");
  for (const std::string& input :
       {"'" + cplx + "' --vectors 3", "'" + cplx + "' --vectors 33 --layout row --transpose",
        std::string("--gen poisson2d:30 --value complex_float --vectors 8 --layout row"),
        std::string("--gen random:300:0:9 --value complex_double --vectors 2 --index int64")}) {
    INFO(input);
    std::string out;
    const int rc = test::run_command(cli() + " run " + input + " --backend cpu --iters 1", &out);
    INFO(out);
    CHECK(rc == 0);
    CHECK(out.find("format csr_mm") != std::string::npos);
    CHECK(out.find("verified yes") != std::string::npos);
    CHECK(out.find("complex alpha and beta") != std::string::npos);
  }
  for (const std::string& input :
       {"'" + real + "' --value complex_float", "'" + cplx + "' --vectors 8 --layout row",
        std::string("--gen poisson2d:20 --value complex_double --vectors 3 --formats auto,csr_mm")}) {
    INFO(input);
    std::string out;
    const int rc = test::run_command(cli() + " bench " + input + " --backend cpu --iters 1", &out);
    INFO(out);
    CHECK(rc == 0);
    CHECK(out.find("auto:") != std::string::npos);
    CHECK(out.find("WRONG") == std::string::npos);
    CHECK(out.find("does not support") == std::string::npos);  // "all": the formats that take them
  }
}

TEST_CASE("run and bench of a symmetric matrix: --symmetric, a symmetric file, --general",
          "[cli][symmetric]") {
  if (!test::require_cpu_backend()) return;
  std::string out;
  int rc =
      test::run_command(cli() + " run --gen poisson2d:60@random --backend cpu --iters 1 --symmetric", &out);
  INFO(out);
  CHECK(rc == 0);
  CHECK(out.find("format sym_diag") != std::string::npos);
  CHECK(out.find("symmetric (made so from its lower triangle): one triangle stored") != std::string::npos);
  CHECK(out.find("verified yes") != std::string::npos);
  // A symmetric Matrix Market file is declared so; --general plans it as a general matrix.
  test::TempDir dir;
  const std::string path =
      write_file(dir, "sym.mtx",
                 "%%MatrixMarket matrix coordinate real symmetric\n4 4 6\n1 1 4\n2 1 -1\n"
                 "2 2 4\n3 2 -1\n3 3 4\n4 4 2\n");
  rc = test::run_command(cli() + " run " + path + " --backend cpu --iters 1", &out);
  CHECK(rc == 0);
  CHECK(out.find("symmetric (the file says so)") != std::string::npos);
  rc = test::run_command(cli() + " run " + path + " --backend cpu --iters 1 --general", &out);
  CHECK(rc == 0);
  CHECK(out.find("symmetric (") == std::string::npos);
  rc = test::run_command(cli() + " run " + path + " --backend cpu --symmetric --general", &out);
  CHECK(rc != 0);
  CHECK(out.find("exclude each other") != std::string::npos);
  rc = test::run_command(cli() + " run --gen random:30:1:3:40 --backend cpu --symmetric", &out);
  CHECK(rc != 0);
  CHECK(out.find("square") != std::string::npos);
  // bench: the declared plan beside the general one, both verified.
  rc = test::run_command(cli() +
                             " bench --gen poisson2d:60@random --backend cpu --iters 1 --symmetric --formats "
                             "auto,general --no-peers",
                         &out);
  CHECK(rc == 0);
  CHECK(out.find("auto:sym_diag") != std::string::npos);
  CHECK(out.find("general:") != std::string::npos);
  CHECK(out.find("WRONG") == std::string::npos);
}

TEST_CASE("inspect --time repeats the statistics and the choice and reports their times", "[cli]") {
  std::string out;
  // A GPU target needs no GPU: the choice runs on the host.
  REQUIRE(test::run_command("(" + cli() +
                                " inspect --gen poisson2d:60 --backend cuda --target sm_90 --device-input "
                                "--time 3 --json 2>/dev/null)",
                            &out) == 0);
  REQUIRE(test::json_error(out) == "");
  const Json j = Json::parse(out);
  CHECK(j["timing"]["repeats"] == Json(3));
  for (const char* step : {"stats", "choice"}) {
    const double med = j["timing"][step]["median_seconds"].as_double();
    const double fastest = j["timing"][step]["min_seconds"].as_double();
    CHECK(fastest > 0);
    CHECK(fastest <= med);
  }
  CHECK(test::run_command(cli() + " inspect --gen poisson2d:60 --backend cuda --target sm_90 --time 2",
                          &out) == 0);
  CHECK(out.find("timing (2 repeats): statistics ") != std::string::npos);
  CHECK(test::run_command(cli() + " inspect --gen poisson2d:60 --backend cuda --target sm_90 --time -1",
                          &out) == 2);
}

}  // namespace spmvjit
#endif
