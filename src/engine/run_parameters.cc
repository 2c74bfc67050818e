#include "engine/run_parameters.h"

#include <fmt/format.h>

#include "ir/values.h"

namespace kfpbench::engine {

using nlohmann::json;

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
