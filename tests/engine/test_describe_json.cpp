// describe and the command line's JSON: valid for every format and for odd matrix file names,
// structured (read back field by field), and numbers at full precision.
#include <catch2/catch.hpp>
#include <fstream>
#include <set>

#include "core/json.hpp"
#include "engine/formats/format.hpp"
#include "engine/gen/generators.hpp"
#include "engine/io/matrix_market.hpp"
#include "engine/plan.hpp"
#include "spmvjit/spmvjit.hpp"
#include "tests/test_support.hpp"

namespace {

using namespace spmvjit;

TEST_CASE("describe is valid JSON that reads back as describe_json, for every format", "[api]") {
  if (!test::require_cpu_backend()) return;
  // Each format plans on at least one of these (sell_block wants blocks, ell regular rows).
  std::vector<HostCsr<int32_t, double>> matrices;
  for (const char* spec : {"poisson2d:30", "blocks:600:4:4", "random:2000:1:20"})
    matrices.push_back(generate_matrix(spec, 3).cast<int32_t, double>());
  for (const Format* f : all_formats()) {
    if (!f->supports(BackendKind::cpu)) continue;
    INFO("format " << f->name());
    bool planned = false;
    // The symmetric poisson2d declared so too (sym_diag plans only such matrices).
    for (size_t m = 0; m <= matrices.size(); ++m) {
      const auto& a = matrices[m % matrices.size()];
      const spmv_csr_t desc = csr_view<int32_t, double>(a.rows, a.cols, a.nnz(), a.row_ptr.data(),
                                                        a.col_idx.data(), a.val.data());
      spmv_options_t o;
      spmv_options_init(&o);
      o.backend = SPMV_BACKEND_CPU;
      if (m == matrices.size()) o.matrix_type = SPMV_MATRIX_SYMMETRIC;
      const std::string name = f->name();
      o.format = name.c_str();
      spmv_plan_t p = nullptr;
      if (spmv_plan(&p, &desc, &o) != SPMV_STATUS_SUCCESS) continue;
      planned = true;
      const char* text = nullptr;
      REQUIRE(spmv_plan_describe(p, &text) == SPMV_STATUS_SUCCESS);
      const std::string s = text;
      REQUIRE(test::json_error(s) == "");
      const Json d = Json::parse(s);
      Plan& plan = plan_impl(p);
      CHECK(d == plan.describe_json());  // nothing lost in the text: strings, int64s, doubles
      CHECK(d["format"] == Json(name));
      CHECK(d["params"] == params_json(plan.data().params));
      CHECK(d["facts"].is_object());
      CHECK(d["kernel"]["cache"] == Json(plan.cache().where));
      CHECK(d["stats"]["nnz"].as_int() == a.nnz());
      CHECK(d["timings"]["total"].as_double() == plan.timings().total);
      const Json& cands = d["planner"]["candidates"];
      REQUIRE(cands.size() >= 1);
      for (const Json& c : cands.items()) {
        CHECK(c["format"] == Json(name));
        // No cost: not applicable, or applicable but not offered (forced formats without parameters).
        CHECK(c["cost"].is_null() != (c["applicable"].as_bool() && c["offered"].as_bool()));
      }
      spmv_plan_destroy(p);
    }
    CHECK(planned);
  }
}

TEST_CASE("describe keeps every digit of a double", "[api]") {
  if (!test::require_cpu_backend()) return;
  const auto a = generate_matrix("poisson2d:20").cast<int32_t, double>();
  const spmv_csr_t desc =
      csr_view<int32_t, double>(a.rows, a.cols, a.nnz(), a.row_ptr.data(), a.col_idx.data(), a.val.data());
  Options o;
  o.backend = SPMV_BACKEND_CPU;
  SpmvPlan plan(desc, o);
  // 17.2 us: %.6g kept it, std::to_string wrote 0.000017 (two digits).
  plan_impl(plan.get())
      .set_measurements(Json::array({Json::object({{"format", "csr"}, {"seconds", 1.72e-05}}),
                                     Json::object({{"format", "sell"}, {"seconds", 1.0 / 3.0}})}),
                        "set by the test \"with quotes\"\n");
  const std::string s = plan.describe();
  REQUIRE(test::json_error(s) == "");
  CHECK(s.find("\"seconds\":1.72e-05") != std::string::npos);
  const Json d = Json::parse(s);
  CHECK(d["planner"]["measured"].items()[0]["seconds"].as_double() == 1.72e-05);
  CHECK(d["planner"]["measured"].items()[1]["seconds"].as_double() == 1.0 / 3.0);
  CHECK(d["planner"]["why"] == Json("set by the test \"with quotes\"\n"));
  const PlanTimings& t = plan_impl(plan.get()).timings();
  for (const auto& [key, value] : {std::pair<const char*, double>{"validate", t.validate},
                                   {"stats", t.stats},
                                   {"convert", t.convert},
                                   {"total", t.total}})
    CHECK(d["timings"][key].as_double() == value);
}

#ifdef SPMVJIT_CLI_PATH
// `text` as one single-quoted shell word.
std::string shell_quote(const std::string& text) {
  std::string out = "'";
  for (char c : text) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

TEST_CASE("the command line's JSON is valid for odd matrix file names", "[api]") {
  if (!test::require_cpu_backend()) return;
  test::TempDir dir;
  const auto a = generate_matrix("poisson2d:12");
  const std::string cli = shell_quote(SPMVJIT_CLI_PATH);
  // Quotes, a backslash, control characters, UTF-8, and a byte that is not UTF-8 (Latin-1 é).
  const std::vector<std::pair<std::string, std::string>> names = {
      {"we\"ird\\name.mtx", "we\"ird\\name.mtx"},
      {"tab\tnew\nline\x01.mtx", "tab\tnew\nline\x01.mtx"},
      {"it's caf\xc3\xa9 \xe2\x82\xac.mtx", "it's caf\xc3\xa9 \xe2\x82\xac.mtx"},
      {"latin1 \xe9.mtx", "latin1 \xef\xbf\xbd.mtx"},  // written as U+FFFD
  };
  for (const auto& [file, shown] : names) {
    INFO("file name " << Json(file).dump());
    const std::string path = dir.path() + "/" + file;
    write_matrix_market(path, a);
    std::string out;

    // run --json: the matrix name and the plan, with its timings at full precision.
    const std::string run_json = dir.path() + "/run.json";
    REQUIRE(test::run_command(cli + " run " + shell_quote(path) + " --backend cpu --iters 1 --json " +
                                  shell_quote(run_json),
                              &out) == 0);
    std::ifstream run_in(run_json);
    const std::string run_text{std::istreambuf_iterator<char>(run_in), {}};
    REQUIRE(test::json_error(run_text) == "");
    const Json run = Json::parse(run_text);
    CHECK(run["matrix"] == Json(shown));
    CHECK(run["spmv_seconds"].as_double() > 0);
    CHECK(find_format(run["plan"]["format"].as_string()) != nullptr);

    // inspect --json: statistics and the planner's full ranking.
    REQUIRE(test::run_command(
                "(" + cli + " inspect " + shell_quote(path) + " --backend cpu --json 2>/dev/null)", &out) ==
            0);
    REQUIRE(test::json_error(out) == "");
    const Json inspect = Json::parse(out);
    CHECK(inspect["matrix"] == Json(shown));
    CHECK(inspect["stats"]["nnz"].as_int() == a.nnz());
    const Json& cands = inspect["planner"]["candidates"];
    CHECK(cands.size() > 3);
    std::set<std::string> ranked;
    for (const Json& c : cands.items()) ranked.insert(c["format"].as_string());
    CHECK(ranked.count(inspect["planner"]["format"].as_string()) == 1);

    // bench --json: a format that does not apply says why; numbers written twice agree to the
    // last bit.
    const std::string bench_json = dir.path() + "/bench.json";
    test::run_command(cli + " bench " + shell_quote(path) +
                          " --backend cpu --formats auto,csr,sell_block --no-peers --iters 1 --json " +
                          shell_quote(bench_json),
                      &out);
    const Json bench = test::read_json_file(bench_json);
    REQUIRE(bench.size() == 3);
    for (const Json& row : bench.items()) {
      CHECK(row["matrix"] == Json(shown));
      if (row["ok"].as_bool()) {
        CHECK(row["plan_seconds"] == row["timings"]["total"]);
        CHECK(row["convert_seconds"] == row["timings"]["convert"]);
      } else {
        CHECK(row["format"] == Json("sell_block"));  // a 5-point stencil has no 1 x B blocks
        CHECK(row["reason"].as_string().find("does not apply") != std::string::npos);
      }
    }
  }
}

TEST_CASE("bench's --formats list: all beside auto, each format once, unknown names refused first", "[api]") {
  if (!test::require_cpu_backend()) return;
  test::TempDir dir;
  const std::string cli = shell_quote(SPMVJIT_CLI_PATH);
  std::string out;
  // A typo is refused before any matrix is generated or planned, naming the formats there are.
  CHECK(test::run_command(cli + " bench --gen poisson2d:8 --backend cpu --formats auto,cssr", &out) == 2);
  CHECK(out.find("unknown format 'cssr'") != std::string::npos);
  CHECK(out.find("csr_adaptive") != std::string::npos);
  CHECK(test::run_command(cli + " bench --gen poisson2d:8 --backend cpu --timing cold", &out) == 2);
  CHECK(out.find("--timing is for GPUs") != std::string::npos);
  // auto,all,csr: the planner once, measure mode once, every format once.
  const std::string json = dir.path() + "/bench.json";
  REQUIRE(test::run_command(cli +
                                " bench --gen poisson2d:8 --backend cpu --no-peers --iters 1 --formats "
                                "auto,all,csr --json " +
                                shell_quote(json),
                            &out) == 0);
  const Json bench = test::read_json_file(json);
  std::set<std::string> labels;
  for (const Json& row : bench.items()) CHECK(labels.insert(row["format"].as_string()).second);
  CHECK(labels.size() == all_formats().size() + 2);
}
#endif

}  // namespace
