#include "kfp/json_reader.h"

#include <charconv>

namespace kfpbench::kfp {

JsonReader::JsonReader(const nlohmann::json& object, std::string path, bool strict)
    : object_(object), path_(std::move(path)), strict_(strict) {
  if (!object_.is_object()) error_ = (path_.empty() ? "body" : path_) + ": must be a JSON object";
}

std::string JsonReader::Path(const char* name) const {
  return path_.empty() ? name : path_ + "." + name;
}

void JsonReader::Fail(const char* name, const std::string& why) {
  if (error_.empty()) error_ = Path(name) + ": " + why;
}

const nlohmann::json* JsonReader::Take(const char* name) {
  if (!error_.empty() || !object_.is_object()) return nullptr;
  seen_.insert(name);
  auto it = object_.find(name);
  if (it == object_.end() || it->is_null()) return nullptr;
  return &*it;
}

void JsonReader::String(const char* name, std::string& out) {
  if (const auto* v = Take(name)) {
    if (!v->is_string()) return Fail(name, "must be a string");
    out = v->get<std::string>();
  }
}

void JsonReader::Bool(const char* name, bool& out) {
  if (const auto* v = Take(name)) {
    if (!v->is_boolean()) return Fail(name, "must be true or false");
    out = v->get<bool>();
  }
}

void JsonReader::Int64(const char* name, int64_t& out) {
  const auto* v = Take(name);
  if (!v) return;
  if (v->is_number_integer()) {
    out = v->get<int64_t>();
  } else if (v->is_string()) {
    const std::string& s = v->get_ref<const std::string&>();
    auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
    if (ec != std::errc() || p != s.data() + s.size()) Fail(name, "must be an integer");
  } else {
    Fail(name, "must be an integer");
  }
}

void JsonReader::Time(const char* name, WallTime& out) {
  if (const auto* v = Take(name)) {
    if (!v->is_string()) return Fail(name, "must be an RFC 3339 time string");
    auto t = ParseRfc3339(v->get_ref<const std::string&>());
    if (!t.ok()) return Fail(name, t.error().message);
    out = *t;
  }
}

void JsonReader::Object(const char* name, nlohmann::json& out) {
  if (const auto* v = Take(name)) {
    if (!v->is_object()) return Fail(name, "must be an object");
    out = *v;
  }
}

void JsonReader::Any(const char* name, nlohmann::json& out) {
  if (const auto* v = Take(name)) out = *v;
}

Status JsonReader::Finish() {
  if (error_.empty() && strict_ && object_.is_object()) {
    for (const auto& [key, value] : object_.items()) {
      if (!seen_.count(key)) {
        error_ = "unknown field \"" + Path(key.c_str()) + "\"";
        break;
      }
    }
  }
  if (!error_.empty()) return Error{error_, 400};
  return Ok();
}

}  // namespace kfpbench::kfp
