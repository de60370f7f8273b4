// Json: writing (escaping, exact numbers) and strict parsing.
#include "core/json.hpp"

#include <charconv>
#include <cmath>
#include <utility>

#include "core/error.hpp"

namespace spmvjit {
namespace {

[[noreturn]] void type_error(const char* wanted) {
  fail(SPMV_STATUS_PARSE_ERROR, std::string("JSON: expected ") + wanted);
}

// Length of the valid UTF-8 sequence starting at s[i] (RFC 3629: no overlong forms, no
// surrogates, nothing above U+10FFFF), or 0 when the byte there starts none.
size_t utf8_length(std::string_view s, size_t i) {
  const auto b = [&](size_t k) { return i + k < s.size() ? static_cast<unsigned char>(s[i + k]) : 0u; };
  const unsigned c = b(0);
  const auto cont = [&](size_t k) { return (b(k) & 0xC0) == 0x80; };
  if (c >= 0xC2 && c <= 0xDF) return cont(1) ? 2 : 0;
  if (c >= 0xE0 && c <= 0xEF) {
    const unsigned lo = c == 0xE0 ? 0xA0 : 0x80, hi = c == 0xED ? 0x9F : 0xBF;
    return b(1) >= lo && b(1) <= hi && cont(2) ? 3 : 0;
  }
  if (c >= 0xF0 && c <= 0xF4) {
    const unsigned lo = c == 0xF0 ? 0x90 : 0x80, hi = c == 0xF4 ? 0x8F : 0xBF;
    return b(1) >= lo && b(1) <= hi && cont(2) && cont(3) ? 4 : 0;
  }
  return 0;
}

void dump_string(std::string_view s, std::string& out) {
  static const char kHex[] = "0123456789abcdef";
  out += '"';
  for (size_t i = 0; i < s.size();) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if (c == '"' || c == '\\') {
      out += '\\', out += char(c), ++i;
    } else if (c < 0x20) {
      out += "\\u00", out += kHex[c >> 4], out += kHex[c & 15], ++i;
    } else if (c < 0x80) {
      out += char(c), ++i;
    } else if (const size_t n = utf8_length(s, i)) {
      out.append(s, i, n), i += n;
    } else {
      out += "\\ufffd", ++i;  // JSON text is UTF-8: a stray byte (a Latin-1 file name) is replaced
    }
  }
  out += '"';
}

// Recursive-descent reader over RFC 8259's grammar.
class Parser {
 public:
  explicit Parser(std::string_view s) : s_(s) {}
  Json document() {
    Json v = value(0);
    ws();
    if (i_ != s_.size()) error("trailing characters");
    return v;
  }

 private:
  [[noreturn]] void error(const std::string& what) {
    fail(SPMV_STATUS_PARSE_ERROR, "JSON: " + what + " at offset " + std::to_string(i_));
  }
  void ws() {
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\t' || s_[i_] == '\n' || s_[i_] == '\r')) ++i_;
  }
  bool eat(char c) {
    ws();
    if (i_ < s_.size() && s_[i_] == c) return ++i_, true;
    return false;
  }
  void expect(char c) {
    if (!eat(c)) error(std::string("expected '") + c + "'");
  }
  bool literal(std::string_view w) {
    if (s_.substr(i_, w.size()) != w) return false;
    return i_ += w.size(), true;
  }
  Json value(int depth) {
    if (depth > 256) error("nesting too deep");
    ws();
    if (i_ >= s_.size()) error("unexpected end");
    const char c = s_[i_];
    if (c == '{') {
      ++i_;
      Json o = Json::object();
      if (eat('}')) return o;
      do {
        ws();
        if (i_ >= s_.size() || s_[i_] != '"') error("expected a key");
        std::string key = string();
        expect(':');
        o[key] = value(depth + 1);
      } while (eat(','));
      expect('}');
      return o;
    }
    if (c == '[') {
      ++i_;
      Json a = Json::array();
      if (eat(']')) return a;
      do a.push_back(value(depth + 1));
      while (eat(','));
      expect(']');
      return a;
    }
    if (c == '"') return string();
    if (literal("true")) return true;
    if (literal("false")) return false;
    if (literal("null")) return nullptr;
    return number();
  }
  unsigned hex4() {
    unsigned u = 0;
    for (int k = 0; k < 4; ++k, ++i_) {
      const char h = i_ < s_.size() ? s_[i_] : 0;
      const int d = h >= '0' && h <= '9'                 ? h - '0'
                    : (h | 32) >= 'a' && (h | 32) <= 'f' ? (h | 32) - 'a' + 10
                                                         : -1;
      if (d < 0) error("bad \\u escape");
      u = u * 16 + unsigned(d);
    }
    return u;
  }
  std::string string() {
    std::string out;
    for (++i_; i_ < s_.size();) {
      const unsigned char c = static_cast<unsigned char>(s_[i_++]);
      if (c == '"') return out;
      if (c < 0x20) error("control character in a string");
      if (c != '\\') {
        out += char(c);
        continue;
      }
      const char e = i_ < s_.size() ? s_[i_++] : 0;
      const std::string_view plain = "\"\\/bfnrt", meant = "\"\\/\b\f\n\r\t";
      if (const size_t k = plain.find(e); e && k != plain.npos) {
        out += meant[k];
        continue;
      }
      if (e != 'u') error("bad escape");
      unsigned u = hex4();
      if (u >= 0xD800 && u <= 0xDBFF && s_.substr(i_, 2) == "\\u") {  // a surrogate pair
        i_ += 2;
        const unsigned lo = hex4();
        if (lo < 0xDC00 || lo > 0xDFFF) error("unpaired surrogate");
        u = 0x10000 + ((u - 0xD800) << 10) + (lo - 0xDC00);
      } else if (u >= 0xD800 && u <= 0xDFFF) {
        error("unpaired surrogate");
      }
      if (u < 0x80) {
        out += char(u);
      } else if (u < 0x800) {
        out += char(0xC0 | u >> 6), out += char(0x80 | (u & 63));
      } else if (u < 0x10000) {
        out += char(0xE0 | u >> 12), out += char(0x80 | (u >> 6 & 63)), out += char(0x80 | (u & 63));
      } else {
        out += char(0xF0 | u >> 18), out += char(0x80 | (u >> 12 & 63));
        out += char(0x80 | (u >> 6 & 63)), out += char(0x80 | (u & 63));
      }
    }
    error("unterminated string");
  }
  Json number() {
    const size_t start = i_;
    const auto digits = [&] {
      const size_t b = i_;
      while (i_ < s_.size() && s_[i_] >= '0' && s_[i_] <= '9') ++i_;
      return i_ > b;
    };
    const auto at = [&](char c) { return i_ < s_.size() && s_[i_] == c; };
    if (at('-')) ++i_;
    if (at('0'))
      ++i_;
    else if (!digits())
      error("unexpected character");
    bool integral = true;
    if (at('.')) {
      ++i_, integral = false;
      if (!digits()) error("bad fraction");
    }
    if (at('e') || at('E')) {
      ++i_, integral = false;
      if (at('+') || at('-')) ++i_;
      if (!digits()) error("bad exponent");
    }
    // from_chars, unlike strtod, ignores the C locale's decimal separator.
    const char *b = s_.data() + start, *e = s_.data() + i_;
    int64_t n = 0;
    if (integral && std::from_chars(b, e, n).ec == std::errc()) return n;
    double d = 0;  // beyond int64, or with a fraction or exponent
    if (std::from_chars(b, e, d).ec == std::errc::result_out_of_range) {
      const std::string_view t(b, size_t(e - b));
      const bool tiny = t.find("e-") != t.npos || t.find("E-") != t.npos;  // underflow, else overflow
      d = std::copysign(tiny ? 0.0 : HUGE_VAL, *b == '-' ? -1.0 : 1.0);
    }
    return d;
  }

  std::string_view s_;
  size_t i_ = 0;
};

}  // namespace

Json Json::object(std::initializer_list<Member> members) {
  Json o{Object{}};
  for (const Member& m : members) o[m.first] = m.second;
  return o;
}

Json& Json::operator[](std::string_view key) {
  if (is_null()) v_ = Object{};
  if (!is_object()) type_error("an object");
  Object& o = std::get<Object>(v_);
  for (Member& m : o)
    if (m.first == key) return m.second;
  return o.emplace_back(std::string(key), Json()).second;
}

const Json& Json::operator[](std::string_view key) const {
  static const Json kNull;
  const Json* v = find(key);
  return v ? *v : kNull;
}

const Json* Json::find(std::string_view key) const {
  if (!is_object()) return nullptr;
  for (const Member& m : std::get<Object>(v_))
    if (m.first == key) return &m.second;
  return nullptr;
}

Json& Json::push_back(Json item) {
  if (is_null()) v_ = Array{};
  if (!is_array()) type_error("an array");
  return std::get<Array>(v_).emplace_back(std::move(item));
}

size_t Json::size() const {
  if (is_array()) return std::get<Array>(v_).size();
  return is_object() ? std::get<Object>(v_).size() : 0;
}

bool Json::as_bool() const {
  return type() == Type::boolean ? std::get<bool>(v_) : (type_error("a boolean"), false);
}
int64_t Json::as_int() const {
  return type() == Type::integer ? std::get<int64_t>(v_) : (type_error("an integer"), 0);
}
double Json::as_double() const {
  if (type() == Type::integer) return double(std::get<int64_t>(v_));
  return type() == Type::number ? std::get<double>(v_) : (type_error("a number"), 0.0);
}
const std::string& Json::as_string() const {
  if (type() != Type::string) type_error("a string");
  return std::get<std::string>(v_);
}
const Json::Array& Json::items() const {
  if (!is_array()) type_error("an array");
  return std::get<Array>(v_);
}
const Json::Object& Json::members() const {
  if (!is_object()) type_error("an object");
  return std::get<Object>(v_);
}

std::string Json::dump() const {
  std::string out;
  dump_to(out);
  return out;
}

void Json::dump_to(std::string& out) const {
  char buf[32];
  switch (type()) {
    case Type::null: out += "null"; return;
    case Type::boolean: out += std::get<bool>(v_) ? "true" : "false"; return;
    case Type::integer:
      out.append(buf, std::to_chars(buf, buf + sizeof buf, std::get<int64_t>(v_)).ptr);
      return;
    case Type::number: {
      const double d = std::get<double>(v_);
      if (!std::isfinite(d)) return void(out += "null");
      // Shortest text that reads back to the same double (std::to_chars' guarantee); a ".0"
      // keeps integral values doubles when read back.
      const std::string_view t(buf, size_t(std::to_chars(buf, buf + sizeof buf, d).ptr - buf));
      out += t;
      if (t.find_first_of(".e") == t.npos) out += ".0";
      return;
    }
    case Type::string: dump_string(std::get<std::string>(v_), out); return;
    case Type::array: {
      out += '[';
      bool first = true;
      for (const Json& j : std::get<Array>(v_)) {
        if (!std::exchange(first, false)) out += ',';
        j.dump_to(out);
      }
      out += ']';
      return;
    }
    case Type::object: {
      out += '{';
      bool first = true;
      for (const Member& m : std::get<Object>(v_)) {
        if (!std::exchange(first, false)) out += ',';
        dump_string(m.first, out);
        out += ':';
        m.second.dump_to(out);
      }
      out += '}';
      return;
    }
  }
}

Json Json::parse(std::string_view text) { return Parser(text).document(); }

}  // namespace spmvjit
