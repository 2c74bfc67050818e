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

// Numbers compare as doubles; JSON Schema makes no difference between 1 and 1.0.
bool Below(const json& v, const json& bound, bool inclusive) {
  double x = v.get<double>(), b = bound.get<double>();
  return inclusive ? x <= b : x < b;
}

class Validator {
 public:
  explicit Validator(const json& root) : root_(root) {}

  void Check(const json& schema, const json& v, const std::string& path,
             std::vector<std::string>& errors) {
    if (schema.is_boolean()) {
      if (!schema.get<bool>()) errors.push_back(path + ": not allowed");
      return;
    }
    if (!schema.is_object()) return;
    if (auto it = schema.find("$ref"); it != schema.end()) {
      const json* target = Resolve(*it);
      if (!target) {
        bool local = it->is_string() && it->get_ref<const std::string&>().starts_with("#");
        errors.push_back(path + ": $ref " + it->dump() +
                         (local ? " points nowhere in the schema"
                                : " is not supported (only local #/... references)"));
      } else if (++depth_ > kMaxRefDepth) {
        errors.push_back(path + ": $ref nests deeper than " + std::to_string(kMaxRefDepth));
      } else {
        Check(*target, v, path, errors);
      }
      if (target) --depth_;
    }
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
    if (auto it = schema.find("const"); it != schema.end() && *it != v) {
      errors.push_back(path + ": must be " + it->dump());
    }
    if (v.is_number()) CheckNumber(schema, v, path, errors);
    if (v.is_string()) {
      if (auto it = schema.find("minLength");
          it != schema.end() && v.get<std::string>().size() < it->get<size_t>()) {
        errors.push_back(path + ": shorter than " + it->dump() + " characters");
      }
    }
    if (v.is_array()) {
      if (auto it = schema.find("minItems"); it != schema.end() && v.size() < it->get<size_t>()) {
        errors.push_back(path + ": fewer than " + it->dump() + " items");
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
    if (auto it = schema.find("not"); it != schema.end()) {
      std::vector<std::string> sub;
      Check(*it, v, path, sub);
      if (sub.empty()) errors.push_back(path + ": must not match " + it->dump());
    }
    if (auto it = schema.find("if"); it != schema.end()) {
      std::vector<std::string> sub;
      Check(*it, v, path, sub);
      auto branch = schema.find(sub.empty() ? "then" : "else");
      if (branch != schema.end()) Check(*branch, v, path, errors);
    }
  }

 private:
  static constexpr int kMaxRefDepth = 64;

  // A local reference, "#/$defs/time": a JSON pointer into the root schema.
  const json* Resolve(const json& ref) const {
    if (!ref.is_string()) return nullptr;
    const std::string& text = ref.get_ref<const std::string&>();
    if (text.empty() || text[0] != '#') return nullptr;
    try {
      const json& target = root_.at(json::json_pointer(text.substr(1)));
      return &target;
    } catch (const json::exception&) {
      return nullptr;
    }
  }

  void CheckNumber(const json& schema, const json& v, const std::string& path,
                   std::vector<std::string>& errors) {
    auto bound = [&](const char* key, bool below, bool inclusive) {
      auto it = schema.find(key);
      if (it == schema.end() || !it->is_number()) return;
      bool ok = below ? Below(v, *it, inclusive) : Below(*it, v, inclusive);
      if (!ok) errors.push_back(path + ": " + v.dump() + " violates " + key + " " + it->dump());
    };
    bound("minimum", false, true);
    bound("exclusiveMinimum", false, false);
    bound("maximum", true, true);
    bound("exclusiveMaximum", true, false);
  }

  void CheckObject(const json& schema, const json& v, const std::string& path,
                   std::vector<std::string>& errors) {
    if (auto it = schema.find("minProperties");
        it != schema.end() && v.size() < it->get<size_t>()) {
      errors.push_back(path + ": fewer than " + it->dump() + " fields");
    }
    if (auto it = schema.find("propertyNames"); it != schema.end()) {
      for (const auto& [key, value] : v.items()) Check(*it, json(key), path + "." + key, errors);
    }
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

  const json& root_;
  int depth_ = 0;
  std::map<std::string, std::regex> cache_;
};

}  // namespace

std::vector<std::string> ValidateJson(const json& schema, const json& instance) {
  std::vector<std::string> errors;
  Validator(schema).Check(schema, instance, "$", errors);
  return errors;
}

}  // namespace kfpbench::kube
