#include "kube/json_schema.h"

#include <map>
#include <regex>

namespace kfpbench::kube {
namespace {

using nlohmann::json;

bool HasType(const json& v, const std::string& type) {
  if (type == "object") return v.is_object();
  if (type == "array") return v.is_array();
  if (type == "string") return v.is_string();
  if (type == "boolean") return v.is_boolean();
  if (type == "null") return v.is_null();
  if (type == "number") return v.is_number();
  // draft-07: an integer is any number with a zero fractional part.
  if (type == "integer") {
    if (v.is_number_integer()) return true;
    if (v.is_number_float()) {
      double d = v.get<double>();
      return d == static_cast<double>(static_cast<long long>(d));
    }
    return false;
  }
  return false;
}

class Validator {
 public:
  void Check(const json& schema, const json& v, const std::string& path,
             std::vector<std::string>& errors) {
    if (schema.is_boolean()) {
      if (!schema.get<bool>()) errors.push_back(path + ": not allowed");
      return;
    }
    if (!schema.is_object()) return;
    if (schema.contains("$ref")) errors.push_back(path + ": $ref is not supported");
    if (auto it = schema.find("type"); it != schema.end()) {
      bool ok = false;
      std::string names;
      if (it->is_string()) {
        ok = HasType(v, it->get<std::string>());
        names = it->get<std::string>();
      } else if (it->is_array()) {
        for (const auto& t : *it) {
          ok = ok || HasType(v, t.get<std::string>());
          names += (names.empty() ? "" : " or ") + t.get<std::string>();
        }
      }
      if (!ok) {
        errors.push_back(path + ": expected " + names + ", got " + std::string(v.type_name()));
        return;  // the other keywords would only repeat the mismatch
      }
    }
    if (auto it = schema.find("enum"); it != schema.end()) {
      bool found = false;
      for (const auto& e : *it) found = found || e == v;
      if (!found) errors.push_back(path + ": " + v.dump() + " is not one of " + it->dump());
    }
    if (auto it = schema.find("pattern"); it != schema.end() && v.is_string()) {
      try {
        if (!std::regex_search(v.get<std::string>(), Regex(it->get<std::string>()))) {
          errors.push_back(path + ": '" + v.get<std::string>() + "' does not match " +
                           it->get<std::string>());
        }
      } catch (const std::regex_error&) {
        errors.push_back(path + ": the schema's pattern " + it->dump() + " does not compile");
      }
    }
    if (v.is_object()) CheckObject(schema, v, path, errors);
    if (auto it = schema.find("items"); it != schema.end() && v.is_array()) {
      for (size_t i = 0; i < v.size(); ++i) {
        Check(*it, v[i], path + "[" + std::to_string(i) + "]", errors);
      }
    }
    if (auto it = schema.find("allOf"); it != schema.end()) {
      for (const auto& s : *it) Check(s, v, path, errors);
    }
    if (auto it = schema.find("anyOf"); it != schema.end()) {
      if (CountMatches(*it, v, path) == 0) errors.push_back(path + ": matches none of anyOf");
    }
    if (auto it = schema.find("oneOf"); it != schema.end()) {
      int n = CountMatches(*it, v, path);
      if (n != 1)
        errors.push_back(path + ": matches " + std::to_string(n) + " of oneOf, expected 1");
    }
  }

 private:
  void CheckObject(const json& schema, const json& v, const std::string& path,
                   std::vector<std::string>& errors) {
    if (auto it = schema.find("required"); it != schema.end()) {
      for (const auto& key : *it) {
        if (!v.contains(key.get<std::string>())) {
          errors.push_back(path + ": missing required '" + key.get<std::string>() + "'");
        }
      }
    }
    const json* props = nullptr;
    if (auto it = schema.find("properties"); it != schema.end()) props = &*it;
    auto extra = schema.find("additionalProperties");
    for (const auto& [key, value] : v.items()) {
      std::string child = path + "." + key;
      if (props && props->contains(key)) {
        Check((*props)[key], value, child, errors);
      } else if (extra != schema.end()) {
        if (extra->is_boolean() && !extra->get<bool>()) {
          errors.push_back(child + ": unknown field");
        } else {
          Check(*extra, value, child, errors);
        }
      }
    }
  }

  int CountMatches(const json& schemas, const json& v, const std::string& path) {
    int n = 0;
    for (const auto& s : schemas) {
      std::vector<std::string> sub;
      Check(s, v, path, sub);
      if (sub.empty()) ++n;
    }
    return n;
  }

  // The schemas repeat one quantity pattern thousands of times: compile once.
  const std::regex& Regex(const std::string& pattern) {
    auto it = cache_.find(pattern);
    if (it == cache_.end()) it = cache_.emplace(pattern, std::regex(pattern)).first;
    return it->second;
  }

  std::map<std::string, std::regex> cache_;
};

}  // namespace

std::vector<std::string> ValidateJson(const json& schema, const json& instance) {
  std::vector<std::string> errors;
  Validator().Check(schema, instance, "$", errors);
  return errors;
}

}  // namespace kfpbench::kube
