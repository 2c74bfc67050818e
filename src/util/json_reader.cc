#include "util/json_reader.h"

#include <algorithm>
#include <charconv>

#include <fmt/format.h>

namespace kfpbench {

bool JsonNestsDeeperThan(std::string_view text, size_t limit) {
  size_t depth = 0;
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (in_string) {
      if (c == '\\') {
        ++i;  // the escaped character, a quote included
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > limit) return true;
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return false;
}

nlohmann::json ParseJson(std::string_view text) {
  if (JsonNestsDeeperThan(text, kMaxJsonDepth)) return nlohmann::json::value_t::discarded;
  // NOLINTNEXTLINE: the one direct parse (json_text_test checks there is no other)
  return nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
}

Result<nlohmann::json> ParseJsonText(std::string_view text) {
  if (JsonNestsDeeperThan(text, kMaxJsonDepth)) {
    return Error{fmt::format("nests deeper than {} levels", kMaxJsonDepth)};
  }
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    // nlohmann's message says where (line, column); out_of_range (406) is a
    // number it cannot hold, such as 1e999.
    return Error{e.what()};
  }
}

std::string DumpJson(const nlohmann::json& value, int indent) {
  return value.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);
}

JsonReader::JsonReader(const nlohmann::json& object, std::string path, bool strict)
    : JsonReader(object, std::move(path), strict, true) {}

JsonReader::JsonReader(const nlohmann::json& object, std::string path, bool strict,
                       bool proto_names, bool config)
    : object_(object),
      path_(std::move(path)),
      strict_(strict),
      proto_names_(proto_names),
      config_(config) {
  if (!object_.is_object()) error_ = (path_.empty() ? "body" : path_) + ": must be a JSON object";
}

JsonReader JsonReader::Plain(const nlohmann::json& object, std::string path) {
  return JsonReader(object, std::move(path), false, false);
}

JsonReader JsonReader::Config(const nlohmann::json& object, std::string path) {
  return JsonReader(object, std::move(path), true, false, true);
}

std::string JsonReader::Path(const char* name) const {
  return path_.empty() ? name : path_ + "." + name;
}

void JsonReader::Fail(const char* name, const std::string& why) {
  if (error_.empty()) error_ = Path(name) + ": " + why;
}

void JsonReader::Refuse(const std::string& why) {
  if (error_.empty()) error_ = (path_.empty() ? "" : path_ + ": ") + why;
}

namespace {

// protoc's JSON name for a field: underscores dropped, the letter after each
// one upper-cased ("pipeline_version_id" -> "pipelineVersionId").
std::string LowerCamel(std::string_view proto_name) {
  std::string out;
  bool upper = false;
  for (char c : proto_name) {
    if (c == '_') {
      upper = true;
    } else {
      out += upper && c >= 'a' && c <= 'z' ? static_cast<char>(c - 'a' + 'A') : c;
      upper = false;
    }
  }
  return out;
}

}  // namespace

const nlohmann::json* JsonReader::Take(const char* name) {
  if (!error_.empty() || !object_.is_object()) return nullptr;
  // Only strict reading asks what was read; the lenient reading of every
  // answer does not pay for the set.
  if (strict_ && seen_.insert(name).second && config_) read_order_.emplace_back(name);
  auto it = object_.find(name);
  if (!proto_names_) return it == object_.end() || it->is_null() ? nullptr : &*it;
  std::string json_name = LowerCamel(name);
  if (json_name != name) {
    if (strict_) seen_.insert(json_name);
    auto camel = object_.find(json_name);
    if (camel != object_.end()) {
      // protojson: one field given twice under its two names.
      if (it != object_.end()) {
        Fail(name, "duplicate field \"" + json_name + "\"");
        return nullptr;
      }
      it = camel;
    }
  }
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

bool JsonReader::TimeValue(const char* name, const nlohmann::json& v, WallTime& out) {
  if (!v.is_string()) {
    Fail(name, "must be an RFC 3339 time string");
    return false;
  }
  auto t = ParseRfc3339(v.get_ref<const std::string&>());
  if (!t.ok()) {
    Fail(name, t.error().message);
    return false;
  }
  out = *t;
  return true;
}

void JsonReader::Time(const char* name, WallTime& out) {
  if (const auto* v = Take(name)) TimeValue(name, *v, out);
}

void JsonReader::OptionalTime(const char* name, std::optional<WallTime>& out) {
  WallTime t{};
  if (const auto* v = Take(name); v && TimeValue(name, *v, t)) out = t;
}

void JsonReader::TimeOrEmpty(const char* name, WallTime& out) {
  const auto* v = Take(name);
  if (!v) return;
  if (v->is_string() && v->get_ref<const std::string&>().empty()) {
    out = WallTime{};
  } else {
    TimeValue(name, *v, out);
  }
}

void JsonReader::StringList(const char* name, std::vector<std::string>& out) {
  const auto* v = Take(name);
  if (!v) return;
  if (!v->is_array()) return Fail(name, "must be an array of strings");
  std::vector<std::string> list;
  for (size_t i = 0; i < v->size(); ++i) {
    if (!(*v)[i].is_string()) {
      return Fail(fmt::format("{}[{}]", name, i).c_str(), "must be a string");
    }
    list.push_back((*v)[i].get<std::string>());
  }
  out = std::move(list);
}

bool JsonReader::Has(const char* name) const {
  if (!object_.is_object()) return false;
  auto it = object_.find(name);
  if (it != object_.end() && !it->is_null()) return true;
  if (!proto_names_) return false;
  auto camel = object_.find(LowerCamel(name));
  return camel != object_.end() && !camel->is_null();
}

void JsonReader::Require(const char* name) {
  if (error_.empty() && object_.is_object() && !Has(name)) {
    error_ = (path_.empty() ? "" : path_ + ": ") + "missing field '" + name + "'";
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

void JsonReader::StringMap(const char* name,
                           std::optional<std::map<std::string, std::string>>& out) {
  const auto* v = Take(name);
  if (!v) return;
  if (!v->is_object()) return Fail(name, "must be an object of strings");
  std::map<std::string, std::string> map;
  for (const auto& [key, value] : v->items()) {
    if (!value.is_string()) return Fail(name, "values must be strings");
    map[key] = value.get<std::string>();
  }
  out = std::move(map);
}

void JsonReader::Enum(const char* name, std::string& out, std::span<const std::string_view> names) {
  const auto* v = Take(name);
  if (!v) return;
  if (v->is_number_integer()) {
    int64_t n = v->get<int64_t>();
    if (n >= 0 && static_cast<size_t>(n) < names.size() && !names[n].empty()) {
      out = names[n];
    } else if (strict_) {
      Fail(name, "invalid value for enum: " + v->dump());
    }
    return;
  }
  if (!v->is_string()) return Fail(name, "must be an enum name or number");
  const std::string& text = v->get_ref<const std::string&>();
  bool known = false;
  for (std::string_view n : names) known = known || (!n.empty() && text == n);
  if (!known && strict_) return Fail(name, "invalid value for enum: \"" + text + "\"");
  out = text;
}

namespace {

// "[0].colour: unknown field (known: mode, startTime)\n[0].shade: ...", one
// line per field of `object` that `taken` does not hold; `known` is the list.
template <typename Taken>
std::string UnknownFields(const nlohmann::json& object, const std::string& path,
                          std::span<const std::string_view> known, Taken taken) {
  std::string list;
  for (std::string_view name : known) list += (list.empty() ? "" : ", ") + std::string(name);
  std::string out;
  for (const auto& [key, value] : object.items()) {
    if (taken(key)) continue;
    out += fmt::format("{}{}{}: unknown field{}", out.empty() ? "" : "\n", path,
                       path.empty() ? key : "." + key,
                       list.empty() ? "" : fmt::format(" (known: {})", list));
  }
  return out;
}

}  // namespace

void JsonReader::Known(std::span<const std::string_view> names) {
  if (error_.empty() && object_.is_object()) {
    error_ = UnknownFields(object_, path_, names, [&](const std::string& key) {
      return std::find(names.begin(), names.end(), key) != names.end();
    });
  }
}

Status JsonReader::status() const {
  if (!error_.empty()) return Error{error_, kHttpBadRequest};
  return Ok();
}

Status JsonReader::Finish() {
  if (error_.empty() && config_ && object_.is_object()) {
    std::vector<std::string_view> known(read_order_.begin(), read_order_.end());
    error_ = UnknownFields(object_, path_, known,
                           [&](const std::string& key) { return seen_.count(key) > 0; });
  } else if (error_.empty() && strict_ && object_.is_object()) {
    for (const auto& [key, value] : object_.items()) {
      if (!seen_.count(key)) {
        error_ = "unknown field \"" + Path(key.c_str()) + "\"";
        break;
      }
    }
  }
  if (!error_.empty()) return Error{error_, kHttpBadRequest};
  return Ok();
}

}  // namespace kfpbench
