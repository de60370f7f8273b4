// Json: the project's one JSON value type (RFC 8259), built by describe, tools and wisdom alike.
#pragma once

#include <concepts>
#include <cstdint>
#include <initializer_list>
#include <ostream>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

namespace spmvjit {

// A JSON value: null, bool, int64, double, string, array, or object. Objects keep their members
// in insertion order (describe reads top-down), and integers stay int64 so counts and byte totals
// print exactly. Build values at call sites as
//   Json j = Json::object({{"format", name}, {"bytes", n}});
//   j["timings"]["total"] = seconds;            // operator[] creates members (and objects) as needed
//   j["measured"].push_back(Json::object(...));  // push_back turns null into an array
// and read them back with find / operator[] const / as_*().
class Json {
 public:
  using Array = std::vector<Json>;
  using Member = std::pair<std::string, Json>;
  using Object = std::vector<Member>;
  enum class Type { null, boolean, integer, number, string, array, object };

  Json() = default;  // null
  Json(std::nullptr_t) {}
  Json(bool b) : v_(b) {}
  // Every integer type but bool; unsigned values beyond int64 become doubles.
  template <std::integral T>
  requires(!std::same_as<T, bool>) Json(T i) {
    if constexpr (std::unsigned_integral<T> && sizeof(T) >= sizeof(int64_t)) {
      if (i > T(INT64_MAX)) {
        v_ = double(i);
        return;
      }
    }
    v_ = int64_t(i);
  }
  Json(double d) : v_(d) {}
  Json(const char* s) : v_(std::string(s)) {}
  Json(std::string s) : v_(std::move(s)) {}
  Json(std::string_view s) : v_(std::string(s)) {}

  static Json array(std::initializer_list<Json> items = {}) { return Json(Array(items)); }
  static Json object(std::initializer_list<Member> members = {});

  Type type() const { return Type(v_.index()); }
  bool is_null() const { return type() == Type::null; }
  bool is_object() const { return type() == Type::object; }
  bool is_array() const { return type() == Type::array; }

  // Object member `key`, appended as null when absent; a null value becomes an empty object first.
  Json& operator[](std::string_view key);
  // Object member `key`, or a null value when absent or when this is not an object.
  const Json& operator[](std::string_view key) const;
  // Object member `key`, or nullptr when absent or when this is not an object.
  const Json* find(std::string_view key) const;
  // Appends to an array; a null value becomes an empty array first.
  Json& push_back(Json item);
  // Elements of an array or members of an object; 0 for scalars.
  size_t size() const;

  // Typed reads. Each throws Error(PARSE_ERROR) on a value of another type (as_double also
  // takes integers), so code reading a file it did not write can catch one kind of error.
  bool as_bool() const;
  int64_t as_int() const;
  double as_double() const;
  const std::string& as_string() const;
  const Array& items() const;
  const Object& members() const;

  // Compact text: no whitespace, strings fully escaped (control characters as \u00XX, invalid
  // UTF-8 bytes as \ufffd), integers exact, doubles in the shortest form that reads back to the
  // same bits, non-finite doubles as null.
  std::string dump() const;
  void dump_to(std::string& out) const;
  // Strict RFC 8259 text to a value; throws Error(PARSE_ERROR) saying what is wrong and where.
  static Json parse(std::string_view text);

  friend bool operator==(const Json& a, const Json& b) { return a.v_ == b.v_; }

 private:
  explicit Json(Array a) : v_(std::move(a)) {}
  explicit Json(Object o) : v_(std::move(o)) {}
  // Alternatives in Type's order: type() is the variant's index.
  std::variant<std::nullptr_t, bool, int64_t, double, std::string, Array, Object> v_;
};

// Streams dump(): messages and test diagnostics print values directly.
inline std::ostream& operator<<(std::ostream& os, const Json& j) { return os << j.dump(); }

}  // namespace spmvjit
