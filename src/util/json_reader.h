// Reads a JSON object field by field, type-checked, keeping the first error,
// which names the field by its path ("run.runtime_config.parameters",
// "runs.records[3].tasks[0].state"). Two dialects:
//  - KFP's, as its API server reads a body (protojson through grpc-gateway):
//    each field by its proto name (display_name) or its lowerCamelCase JSON
//    name (displayName), never both; enums by name or by number; int64 as a
//    number or a decimal string; and (when strict) unknown fields rejected.
//  - Plain (`JsonReader::Plain`): kfpbench's own files (results.json), each
//    field by its one name, numbers as JSON numbers, other fields ignored.
//  - Config (`JsonReader::Config`): files users write (scenario files, job
//    configs), read as Plain but strict: a field nobody read is refused as
//    "<path>.<key>: unknown field (known: <the fields read there>)", every
//    one at once. Their fields' checks are validators (util/json_checks.h),
//    so a field's name, type, check and message are one line.
#pragma once

#include <map>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include <nlohmann/json.hpp>

#include "util/result.h"
#include "util/time.h"

namespace kfpbench {

// How deep JSON kfpbench reads may nest: objects and arrays inside each
// other. Deeper text is refused before it is parsed, wherever it comes from
// (a request body, a server's answer, a file, a database row), because
// copying, comparing and writing a value recurse once per level and a
// 100,000-deep one overflows the stack. KFP's API server reads bodies with
// protojson, whose default limit is 10,000 nested messages; a level of a
// google.protobuf.Value (parameters, a pipeline spec) is two of them, so KFP
// refuses such values nested past about 5,000 levels. yaml-cpp stops at
// 2,000 (YAML::DeepRecursion) and simdjson at 1,024 on its own.
inline constexpr size_t kMaxJsonDepth = 5000;

// Whether `text` nests objects and arrays deeper than `limit` (brackets in
// strings do not count). Linear, and says nothing of whether it is JSON.
bool JsonNestsDeeperThan(std::string_view text, size_t limit);

// Every JSON text kfpbench parses goes through one of these two (a test
// keeps it so): the value, or a discarded one (is_discarded()) for text that
// is not JSON or nests deeper than kMaxJsonDepth.
nlohmann::json ParseJson(std::string_view text);
// The same with the reason it is refused (nlohmann's message, or the depth).
Result<nlohmann::json> ParseJsonText(std::string_view text);

// JSON text that never throws: a string that is not UTF-8 (bytes from
// outside that no reader checked, a step's output, a server's error page) is
// written with U+FFFD where nlohmann::json's dump() throws. For what is
// written where one bad byte must not lose the rest: results files, the
// server's store and answers.
std::string DumpJson(const nlohmann::json& value, int indent = -1);

template <typename T>
struct IsOptional : std::false_type {};
template <typename T>
struct IsOptional<std::optional<T>> : std::true_type {};

class JsonReader {
 public:
  // KFP's dialect; `strict`: unknown fields are an error.
  JsonReader(const nlohmann::json& object, std::string path, bool strict);
  // The plain dialect, lenient.
  static JsonReader Plain(const nlohmann::json& object, std::string path);
  // The config dialect, strict.
  static JsonReader Config(const nlohmann::json& object, std::string path);
  // A reader keeps a reference to the object it reads.
  JsonReader(const nlohmann::json&& object, std::string path, bool strict) = delete;
  static JsonReader Plain(const nlohmann::json&& object, std::string path) = delete;
  static JsonReader Config(const nlohmann::json&& object, std::string path) = delete;

  // Each getter leaves `out` unchanged when the field is absent or null.
  void String(const char* name, std::string& out);
  void Bool(const char* name, bool& out);
  void Int64(const char* name, int64_t& out);  // accepts a number or a decimal string
  // A JSON number only: an unsigned T takes a non-negative integer, another
  // integral T any integer, a floating-point T any number.
  template <typename T>
  void Number(const char* name, T& out) {
    const nlohmann::json* v = Take(name);
    if (!v) return;
    if constexpr (std::is_unsigned_v<T>) {
      // A parsed non-negative integer is unsigned; one built in code may not be.
      bool non_negative =
          v->is_number_unsigned() || (v->is_number_integer() && v->get<int64_t>() >= 0);
      if (!non_negative) return Fail(name, "must be a non-negative integer");
    } else if constexpr (std::is_integral_v<T>) {
      if (!v->is_number_integer()) return Fail(name, "must be an integer");
    } else {
      if (!v->is_number()) return Fail(name, "must be a number");
    }
    out = v->get<T>();
  }
  void Time(const char* name, WallTime& out);
  // A time that may be absent: nullopt then.
  void OptionalTime(const char* name, std::optional<WallTime>& out);
  // A time where "" is the zero time (results.json writes a time that never
  // came so).
  void TimeOrEmpty(const char* name, WallTime& out);
  void StringList(const char* name, std::vector<std::string>& out);
  void Object(const char* name, nlohmann::json& out);  // any JSON object
  void Any(const char* name, nlohmann::json& out);     // any JSON value
  // A map<string, string>: set (maybe empty) when present, untouched when not.
  void StringMap(const char* name, std::optional<std::map<std::string, std::string>>& out);
  // A proto enum, written by name or by number; `names[i]` is the name of
  // value i (empty for numbers the enum does not use). `out` gets the name.
  // Strict reading refuses names and numbers the enum does not have.
  void Enum(const char* name, std::string& out, std::span<const std::string_view> names);
  // A nested message: `fn(JsonReader&)` reads its fields.
  template <typename Fn>
  void Message(const char* name, Fn&& fn) {
    const nlohmann::json* v = Take(name);
    if (!v) return;
    if (!v->is_object()) return Fail(name, "must be an object");
    Sub(*v, Path(name), fn);
  }
  // A repeated message: `fn(JsonReader&)` for each item, its path
  // "<name>[<i>]".
  template <typename Fn>
  void Array(const char* name, Fn&& fn) {
    const nlohmann::json* v = Take(name);
    if (!v) return;
    if (!v->is_array()) return Fail(name, "must be an array");
    for (size_t i = 0; i < v->size() && error_.empty(); ++i) {
      if (!(*v)[i].is_object()) return Fail(name, "items must be objects");
      Sub((*v)[i], Path(name) + "[" + std::to_string(i) + "]", fn);
    }
  }
  // A map of messages: `fn(key, JsonReader&)` for each entry, its path
  // "<name>.<key>".
  template <typename Fn>
  void Entries(const char* name, Fn&& fn) {
    const nlohmann::json* v = Take(name);
    if (!v) return;
    if (!v->is_object()) return Fail(name, "must be an object");
    for (auto it = v->begin(); it != v->end() && error_.empty(); ++it) {
      Sub(*it, Path(name) + "." + it.key(), [&](JsonReader& sub) { fn(it.key(), sub); });
    }
  }
  // Every field not read yet, taken as data rather than as fields (a map of
  // parameters, of environment variables): `fn(key, value)` returns the
  // entry's problem, reported as "<path>.<key>: <problem>".
  template <typename Fn>
  void Rest(Fn&& fn) {
    if (!error_.empty() || !object_.is_object()) return;
    for (const auto& [key, value] : object_.items()) {
      if (!seen_.insert(key).second) continue;
      std::string why = fn(key, value);
      if (!why.empty()) return Fail(key.c_str(), why);
    }
  }
  // A field of a type this reader does not know: `read(value)` returns its
  // problem, or an empty string.
  template <typename Fn>
  void Custom(const char* name, Fn&& read) {
    const nlohmann::json* v = Take(name);
    if (!v) return;
    std::string why = read(*v);
    if (!why.empty()) Fail(name, why);
  }
  // A field read and checked by a validator (util/json_checks.h): a callable
  // `std::string(const nlohmann::json& value, T& out)` that sets `out` or
  // returns the problem ("must be a whole number from 1 to 100000 (got 0)").
  // An optional `out` is set when the field is present.
  template <typename T, typename Check>
  void Field(const char* name, T& out, const Check& check) {
    if constexpr (IsOptional<T>::value) {
      typename T::value_type value{};
      bool read = false;
      Custom(name, [&](const nlohmann::json& v) {
        std::string why = check(v, value);
        read = why.empty();
        return why;
      });
      if (read) out = std::move(value);
    } else {
      Custom(name, [&](const nlohmann::json& v) { return check(v, out); });
    }
  }
  // The fields this object may have, said before any is read: every other
  // field is refused now, each on a line of its own with the list ("[2].colour:
  // unknown field (known: mode, startTime, ...)"). For objects whose fields
  // are read by several hands (a scenario's: common, its shape's, its mode's).
  void Known(std::span<const std::string_view> names);

  // The object read, for fields whose wrong types are ignored, not refused.
  const nlohmann::json& object() const { return object_; }

  // Whether the field is present and not null.
  bool Has(const char* name) const;
  // An error unless the field is present: "<path>: missing field '<name>'".
  void Require(const char* name);
  // Records a problem with a field the caller checks itself (the first
  // problem is the one kept).
  void Fail(const char* name, const std::string& why);
  // The same for the object read itself.
  void Refuse(const std::string& why);
  const std::string& path() const { return path_; }

  // Ends reading: in strict mode any field not read is an error.
  Status Finish();
  // The first problem so far, without Finish's check for unknown fields:
  // for a part of an object whose other fields someone else reads.
  Status status() const;
  bool ok() const { return error_.empty(); }

 private:
  JsonReader(const nlohmann::json& object, std::string path, bool strict, bool proto_names,
             bool config = false);
  const nlohmann::json* Take(const char* name);
  bool TimeValue(const char* name, const nlohmann::json& v, WallTime& out);
  std::string Path(const char* name) const;
  // Reads `object` with `fn` in a reader of its own; its first error is ours.
  template <typename Fn>
  void Sub(const nlohmann::json& object, std::string path, Fn&& fn) {
    JsonReader sub(object, std::move(path), strict_, proto_names_, config_);
    if (sub.error_.empty()) fn(sub);
    if (sub.error_.empty()) (void)sub.Finish();
    if (!sub.error_.empty() && error_.empty()) error_ = sub.error_;
  }

  const nlohmann::json& object_;
  std::string path_;
  bool strict_;
  bool proto_names_;
  bool config_;
  std::set<std::string> seen_;
  std::vector<std::string> read_order_;  // config dialect: the fields read, for its message
  std::string error_;
};

}  // namespace kfpbench
