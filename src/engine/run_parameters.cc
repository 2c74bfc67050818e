#include "engine/run_parameters.h"

#include <string>
#include <vector>

#include <fmt/format.h>

#include "ir/values.h"

namespace kfpbench::engine {

using nlohmann::json;

namespace {

// A NUL byte cannot cross into a step: a command line and an environment end
// each string at the first one, so "a\0b" would reach the step as "a".
bool HoldsNul(const json& value) {
  // A stack, not recursion: a parameter may be nested as deep as its body allows.
  std::vector<const json*> pending{&value};
  auto has_nul = [](const std::string& s) { return s.find('\0') != std::string::npos; };
  while (!pending.empty()) {
    const json& v = *pending.back();
    pending.pop_back();
    if (v.is_string() && has_nul(v.get_ref<const std::string&>())) return true;
    if (v.is_object()) {
      for (const auto& [key, item] : v.items()) {
        if (has_nul(key)) return true;
        pending.push_back(&item);
      }
    } else if (v.is_array()) {
      for (const auto& item : v) pending.push_back(&item);
    }
  }
  return false;
}

}  // namespace

Result<json> ResolveRunParameters(const ir::PipelineSpec& spec, const json& given) {
  if (!given.is_null() && !given.is_object()) {
    return Error{"runtime parameters must be a mapping", kHttpBadRequest};
  }
  const auto& defs = spec.root.inputs.parameters;
  json out = json::object();
  if (given.is_object()) {
    for (const auto& [name, value] : given.items()) {
      auto def = defs.find(name);
      if (def == defs.end()) {
        std::string known;
        for (const auto& [k, v] : defs) known += (known.empty() ? "" : ", ") + k;
        return Error{fmt::format("unknown parameter '{}' (pipeline inputs: {})", name,
                                 known.empty() ? "none" : known),
                     400};
      }
      if (value.is_null()) continue;
      if (HoldsNul(value)) {
        return Error{fmt::format("parameter '{}': a NUL byte cannot be passed to a step", name),
                     kHttpBadRequest};
      }
      auto checked = ir::CheckParameterValue(value, def->second.type);
      if (!checked.ok()) {
        return Error{fmt::format("parameter '{}': {}", name, checked.error().message),
                     kHttpBadRequest};
      }
      out[name] = std::move(*checked);
    }
  }
  for (const auto& [name, def] : defs) {
    if (out.contains(name)) continue;
    if (def.default_value && !def.default_value->is_null()) {
      auto v = ir::CoerceParameterValue(*def.default_value, def.type);
      if (!v.ok()) {
        return Error{fmt::format("default of parameter '{}': {}", name, v.error().message),
                     kHttpBadRequest};
      }
      out[name] = std::move(*v);
    } else if (!def.is_optional) {
      return Error{fmt::format("missing required parameter '{}' ({})", name,
                               ir::ParameterTypeName(def.type)),
                   400};
    }
  }
  return out;
}

}  // namespace kfpbench::engine
