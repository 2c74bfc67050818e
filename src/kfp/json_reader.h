// Reads a JSON object field by field the way KFP's API server does (protojson
// through grpc-gateway): each field by its proto name (display_name) or its
// lowerCamelCase JSON name (displayName), never both; enums by name or by
// number; type-checked; and (when strict) unknown fields rejected. Every error
// names the field by its path, e.g. "run.runtime_config.parameters".
#pragma once

#include <initializer_list>
#include <map>
#include <optional>
#include <set>
#include <string>

#include <nlohmann/json.hpp>

#include "util/result.h"
#include "util/time.h"

namespace kfpbench::kfp {

class JsonReader {
 public:
  JsonReader(const nlohmann::json& object, std::string path, bool strict);

  // Each getter leaves `out` unchanged when the field is absent or null.
  void String(const char* name, std::string& out);
  void Bool(const char* name, bool& out);
  void Int64(const char* name, int64_t& out);  // accepts a number or a decimal string
  void Time(const char* name, WallTime& out);
  void Object(const char* name, nlohmann::json& out);  // any JSON object
  void Any(const char* name, nlohmann::json& out);     // any JSON value
  // A map<string, string>: set (maybe empty) when present, untouched when not.
  void StringMap(const char* name, std::optional<std::map<std::string, std::string>>& out);
  // A proto enum, written by name or by number; `names[i]` is the name of
  // value i (nullptr for numbers the enum does not use). `out` gets the name.
  // Strict reading refuses names and numbers the enum does not have.
  void Enum(const char* name, std::string& out, std::initializer_list<const char*> names);
  // A nested message: `fn(JsonReader&)` reads its fields.
  template <typename Fn>
  void Message(const char* name, Fn&& fn) {
    const nlohmann::json* v = Take(name);
    if (!v) return;
    if (!v->is_object()) return Fail(name, "must be an object");
    JsonReader sub(*v, Path(name), strict_);
    fn(sub);
    if (sub.error_.empty()) (void)sub.Finish();
    if (!sub.error_.empty() && error_.empty()) error_ = sub.error_;
  }
  template <typename Fn>
  void Array(const char* name, Fn&& fn) {
    const nlohmann::json* v = Take(name);
    if (!v) return;
    if (!v->is_array()) return Fail(name, "must be an array");
    for (size_t i = 0; i < v->size() && error_.empty(); ++i) {
      if (!(*v)[i].is_object()) return Fail(name, "items must be objects");
      JsonReader sub((*v)[i], Path(name) + "[" + std::to_string(i) + "]", strict_);
      fn(sub);
      if (sub.error_.empty()) (void)sub.Finish();
      if (!sub.error_.empty()) error_ = sub.error_;
    }
  }

  // Ends reading: in strict mode any field not read is an error.
  Status Finish();
  bool ok() const { return error_.empty(); }

 private:
  const nlohmann::json* Take(const char* name);
  void Fail(const char* name, const std::string& why);
  std::string Path(const char* name) const;

  const nlohmann::json& object_;
  std::string path_;
  bool strict_;
  std::set<std::string> seen_;
  std::string error_;
};

}  // namespace kfpbench::kfp
