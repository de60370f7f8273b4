// Json: escaping, exact numbers, key order, and parsing back what dump() writes.
#include "core/json.hpp"

#include <catch2/catch.hpp>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <random>

#include "core/error.hpp"
#include "tests/test_support.hpp"

namespace {

using spmvjit::Json;

TEST_CASE("json: every control character is escaped as \\u00XX", "[json]") {
  static const char kHex[] = "0123456789abcdef";
  for (int c = 0; c < 0x20; ++c) {
    const std::string s = std::string("a") + char(c) + "b";
    const std::string expected = std::string("\"a\\u00") + kHex[c >> 4] + kHex[c & 15] + "b\"";
    CHECK(Json(s).dump() == expected);
    CHECK(spmvjit::test::json_error(Json(s).dump()) == "");
    CHECK(Json::parse(Json(s).dump()).as_string() == s);
  }
  CHECK(Json(std::string(1, '\0')).dump() == "\"\\u0000\"");
  CHECK(Json("\x7f").dump() == "\"\x7f\"");  // DEL needs no escape
}

TEST_CASE("json: quotes and backslashes are escaped, in values and keys", "[json]") {
  CHECK(Json("say \"hi\"").dump() == R"("say \"hi\"")");
  CHECK(Json("C:\\dir\\").dump() == R"("C:\\dir\\")");
  CHECK(Json("/").dump() == "\"/\"");
  const Json o = Json::object({{"we\"ird\\key", "v"}});
  CHECK(o.dump() == R"({"we\"ird\\key":"v"})");
  CHECK(Json::parse(o.dump()) == o);
  // The escapes a writer may choose and we do not are still read.
  CHECK(Json::parse(R"("\/\b\f\n\r\t\"\\")").as_string() == "/\b\f\n\r\t\"\\");
}

TEST_CASE("json: valid UTF-8 passes through, invalid bytes become U+FFFD", "[json]") {
  const std::string utf8 = "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80 \xe4\xb8\xad";  // é € 😀 中
  CHECK(Json(utf8).dump() == "\"" + utf8 + "\"");
  CHECK(Json::parse(Json(utf8).dump()).as_string() == utf8);
  CHECK(Json("a\xff"
             "b")
            .dump() == "\"a\\ufffdb\"");                                        // never a UTF-8 byte
  CHECK(Json("\xc3").dump() == "\"\\ufffd\"");                                  // truncated sequence
  CHECK(Json("\xc0\xaf").dump() == "\"\\ufffd\\ufffd\"");                       // overlong '/'
  CHECK(Json("\xed\xa0\x80").dump() == "\"\\ufffd\\ufffd\\ufffd\"");            // a surrogate
  CHECK(Json("\xf4\x90\x80\x80").dump().find("\\ufffd") != std::string::npos);  // above U+10FFFF
  // \u escapes read back as UTF-8, surrogate pairs included.
  CHECK(Json::parse(R"("\u00e9\u20ac\ud83d\ude00")").as_string() == "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80");
  CHECK_THROWS_AS(Json::parse(R"("\ud83d")"), spmvjit::Error);
}

TEST_CASE("json: int64 extremes are exact", "[json]") {
  const int64_t lo = std::numeric_limits<int64_t>::min(), hi = std::numeric_limits<int64_t>::max();
  CHECK(Json(lo).dump() == "-9223372036854775808");
  CHECK(Json(hi).dump() == "9223372036854775807");
  CHECK(Json(0).dump() == "0");
  CHECK(Json::parse(Json(lo).dump()).as_int() == lo);
  CHECK(Json::parse(Json(hi).dump()).as_int() == hi);
  CHECK(Json(uint64_t(hi)).type() == Json::Type::integer);
  CHECK(Json(uint64_t(hi) + 1).type() == Json::Type::number);  // beyond int64: a double
  CHECK(Json(size_t(42)).dump() == "42");
  CHECK(Json(int16_t(-7)).dump() == "-7");
  CHECK(Json(true).dump() == "true");
  CHECK(Json(nullptr).dump() == "null");
}

TEST_CASE("json: doubles round-trip exactly through strtod", "[json]") {
  for (double d : {1.72e-05, 17.2e-6, 0.1, 1.0 / 3.0, 2.0 / 3.0, 1e300, 5e-324, 2.2250738585072014e-308,
                   std::numeric_limits<double>::max(), -123456.789, 0.0, -0.0, 1e21, 123.0}) {
    const std::string s = Json(d).dump();
    INFO(s);
    CHECK(spmvjit::test::json_error(s) == "");
    const double back = std::strtod(s.c_str(), nullptr);
    CHECK(std::memcmp(&back, &d, sizeof d) == 0);
    CHECK(Json::parse(s).as_double() == d);
    CHECK(Json::parse(s).type() == Json::Type::number);  // "123.0", not the integer 123
  }
  CHECK(Json(1.72e-05).dump() == "1.72e-05");  // shortest form: every digit, no noise
  std::mt19937_64 rng(5);
  for (int i = 0; i < 20000; ++i) {
    uint64_t bits = rng();
    double d;
    std::memcpy(&d, &bits, sizeof d);
    if (!std::isfinite(d)) continue;
    const double back = std::strtod(Json(d).dump().c_str(), nullptr);
    REQUIRE(std::memcmp(&back, &d, sizeof d) == 0);
  }
}

TEST_CASE("json: non-finite doubles are written as null", "[json]") {
  CHECK(Json(std::numeric_limits<double>::quiet_NaN()).dump() == "null");
  CHECK(Json(std::numeric_limits<double>::infinity()).dump() == "null");
  CHECK(Json(-std::numeric_limits<double>::infinity()).dump() == "null");
  CHECK(Json::array({1.0, std::nan(""), 2.0}).dump() == "[1.0,null,2.0]");
}

TEST_CASE("json: nested objects and arrays keep insertion order", "[json]") {
  Json j = Json::object({{"zeta", 1}, {"alpha", "a"}, {"mid", Json::array({1, 2.5, "x", nullptr, false})}});
  j["nested"]["b"] = 2;  // operator[] creates the object
  j["nested"]["a"] = Json::object();
  j["list"].push_back(Json::object({{"k", 1}}));  // push_back turns null into an array
  j["list"].push_back(Json::array());
  j["zeta"] = 3;  // assigning an existing key keeps its place
  const std::string s = j.dump();
  CHECK(s ==
        R"({"zeta":3,"alpha":"a","mid":[1,2.5,"x",null,false],"nested":{"b":2,"a":{}},"list":[{"k":1},[]]})");
  CHECK(spmvjit::test::json_error(s) == "");
  const Json back = Json::parse(s);
  CHECK(back == j);
  CHECK(back.dump() == s);
  CHECK(back["nested"]["b"].as_int() == 2);
  CHECK(back["missing"]["deeper"].is_null());
  CHECK(back.find("missing") == nullptr);
  CHECK(back["mid"].size() == 5);
  CHECK(back["mid"].items()[1].as_double() == 2.5);
  CHECK(Json::object().dump() == "{}");
  CHECK(Json::array().dump() == "[]");
  CHECK(Json().dump() == "null");
}

TEST_CASE("json: wrong types and malformed text fail with PARSE_ERROR", "[json]") {
  CHECK_THROWS_AS(Json("s").as_int(), spmvjit::Error);
  CHECK_THROWS_AS(Json(1.5).as_int(), spmvjit::Error);
  CHECK_THROWS_AS(Json(1).as_string(), spmvjit::Error);
  Json scalar = 1;
  CHECK_THROWS_AS(scalar["k"], spmvjit::Error);
  CHECK_THROWS_AS(scalar.push_back(2), spmvjit::Error);
  for (const char* bad :
       {"", "{", "[1,]", "{\"a\":1,}", "{\"a\" 1}", "01", "1.", ".5", "-", "1e", "nul", "\"abc", "\"a\nb\"",
        "\"\\x\"", "[1] 2", "{'a':1}", "NaN", "Infinity", "\"\\u12\""}) {
    INFO(bad);
    try {
      Json::parse(bad);
      FAIL("parsed");
    } catch (const spmvjit::Error& e) {
      CHECK(e.status() == SPMV_STATUS_PARSE_ERROR);
    }
  }
  CHECK(Json::parse(" {\"a\" : [ 1 , -2.5e+3 , true ] }\n")["a"].items()[1].as_double() == -2500.0);
  CHECK(Json::parse("99999999999999999999").as_double() == 1e20);  // beyond int64: a double
}

}  // namespace
