// Reads a JSON object field by field the way KFP's API server does: proto
// field names, type-checked, and (when strict) unknown fields rejected. Every
// error names the field by its path, e.g. "run.runtime_config.parameters".
#pragma once

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
