#include "ir/spec_fields.h"

#include <cmath>
#include <cstdint>
#include <cstdlib>

#include <fmt/format.h>

namespace kfpbench::ir::detail {

using nlohmann::json;

Error At(const std::string& path, const std::string& what) {
  return Error{path.empty() ? what : path + ": " + what, kHttpBadRequest};
}

std::string Join(const std::string& path, std::string_view key) {
  return path.empty() ? std::string(key) : path + "." + std::string(key);
}

const char* TypeName(const json& j) {
  switch (j.type()) {
    case json::value_t::object:
      return "a mapping";
    case json::value_t::array:
      return "a list";
    case json::value_t::string:
      return "a string";
    case json::value_t::boolean:
      return "a boolean";
    case json::value_t::null:
      return "null";
    default:
      return "a number";
  }
}

Result<const json*> OptObject(const json& parent, std::string_view key, const std::string& path) {
  auto it = parent.find(key);
  if (it == parent.end() || it->is_null()) return static_cast<const json*>(nullptr);
  if (!it->is_object()) {
    return At(Join(path, key), fmt::format("expected a mapping, got {}", TypeName(*it)));
  }
  return &*it;
}

Result<const json*> ReqObject(const json& parent, std::string_view key, const std::string& path) {
  auto r = OptObject(parent, key, path);
  if (r.ok() && *r == nullptr) return At(Join(path, key), "required field is missing");
  return r;
}

Result<std::string> OptString(const json& parent, std::string_view key, const std::string& path) {
  auto it = parent.find(key);
  if (it == parent.end() || it->is_null()) return std::string();
  if (!it->is_string()) {
    return At(Join(path, key), fmt::format("expected a string, got {}", TypeName(*it)));
  }
  return it->get<std::string>();
}

Result<std::string> ReqString(const json& parent, std::string_view key, const std::string& path) {
  auto r = OptString(parent, key, path);
  if (r.ok() && r->empty()) return At(Join(path, key), "required field is missing");
  return r;
}

Result<std::vector<std::string>> StringList(const json& parent, std::string_view key,
                                            const std::string& path) {
  std::vector<std::string> out;
  auto it = parent.find(key);
  if (it == parent.end() || it->is_null()) return out;
  if (!it->is_array()) {
    return At(Join(path, key), fmt::format("expected a list, got {}", TypeName(*it)));
  }
  for (size_t i = 0; i < it->size(); ++i) {
    const json& item = (*it)[i];
    if (item.is_string()) {
      out.push_back(item.get<std::string>());
    } else if (item.is_number() || item.is_boolean()) {
      out.push_back(item.dump());  // an unquoted arg like `- 5`
    } else {
      return At(fmt::format("{}[{}]", Join(path, key), i),
                fmt::format("expected a string, got {}", TypeName(item)));
    }
  }
  return out;
}

Result<double> OptNumber(const json& parent, std::string_view key, const std::string& path) {
  auto it = parent.find(key);
  if (it == parent.end() || it->is_null()) return 0.0;
  if (it->is_number()) return it->get<double>();
  if (it->is_string()) {
    const std::string& s = it->get_ref<const std::string&>();
    char* end = nullptr;
    double v = std::strtod(s.c_str(), &end);
    if (!s.empty() && end == s.c_str() + s.size()) return v;
  }
  return At(Join(path, key), fmt::format("expected a number, got {}", TypeName(*it)));
}

Result<int> OptInt32(const json& parent, std::string_view key, const std::string& path) {
  auto value = OptNumber(parent, key, path);
  if (!value.ok()) return value.error();
  if (!(*value >= INT32_MIN && *value <= INT32_MAX) || *value != std::trunc(*value)) {
    return At(Join(path, key), fmt::format("expected a whole number of int32, got {}", *value));
  }
  return static_cast<int>(*value);
}

}  // namespace kfpbench::ir::detail
