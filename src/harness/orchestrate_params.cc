#include "harness/orchestrate_params.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>

#include <fmt/format.h>

#include "util/json_reader.h"
#include "util/strings.h"

namespace kfpbench::harness {
namespace {

std::string DeclaredNames(const ir::PipelineSpec& spec) {
  std::string names;
  for (const auto& [name, p] : spec.root.inputs.parameters) {
    if (!names.empty()) names += ", ";
    names += name;
  }
  return names.empty() ? "none" : names;
}

}  // namespace

Result<nlohmann::json> TypedValue(const ir::ParameterSpec& spec, std::string_view raw) {
  using T = ir::ParameterType;
  std::string text(raw);
  std::string trimmed(TrimSpace(raw));
  switch (spec.type) {
    case T::kNumberInteger: {
      errno = 0;
      char* end = nullptr;
      long long v = std::strtoll(trimmed.c_str(), &end, 10);
      if (trimmed.empty() || end != trimmed.c_str() + trimmed.size() || errno == ERANGE) {
        return Error{fmt::format("expected an integer (NUMBER_INTEGER), got '{}'", text)};
      }
      return nlohmann::json(static_cast<int64_t>(v));
    }
    case T::kNumberDouble: {
      errno = 0;
      char* end = nullptr;
      double v = std::strtod(trimmed.c_str(), &end);
      if (trimmed.empty() || end != trimmed.c_str() + trimmed.size() || errno == ERANGE ||
          !std::isfinite(v)) {
        return Error{fmt::format("expected a number (NUMBER_DOUBLE), got '{}'", text)};
      }
      return nlohmann::json(v);
    }
    case T::kBoolean: {
      std::string v = AsciiLower(trimmed);
      if (v == "true" || v == "1") return nlohmann::json(true);
      if (v == "false" || v == "0") return nlohmann::json(false);
      return Error{fmt::format("expected true or false (BOOLEAN), got '{}'", text)};
    }
    case T::kList:
    case T::kStruct: {
      bool list = spec.type == T::kList;
      auto v = ParseJson(trimmed);
      if (v.is_discarded() || (list ? !v.is_array() : !v.is_object())) {
        return Error{fmt::format("expected a JSON {} ({}), got '{}'", list ? "array" : "object",
                                 list ? "LIST" : "STRUCT", text)};
      }
      return v;
    }
    default:
      return nlohmann::json(text);
  }
}

Result<nlohmann::json> TypedParameters(
    const ir::PipelineSpec& spec, const std::vector<std::pair<std::string, std::string>>& values) {
  nlohmann::json out = nlohmann::json::object();
  for (const auto& [name, text] : values) {
    auto it = spec.root.inputs.parameters.find(name);
    if (it == spec.root.inputs.parameters.end()) {
      return Error{fmt::format("the pipeline has no input parameter '{}' (it declares: {})", name,
                               DeclaredNames(spec))};
    }
    if (text.empty() && (it->second.default_value || it->second.is_optional)) continue;
    auto v = TypedValue(it->second, text);
    if (!v.ok()) return Error{fmt::format("parameter '{}': {}", name, v.error().message)};
    out[name] = std::move(*v);
  }
  for (const auto& [name, p] : spec.root.inputs.parameters) {
    if (!out.contains(name) && !p.default_value && !p.is_optional) {
      return Error{fmt::format("no value for required parameter '{}'", name)};
    }
  }
  return out;
}

Result<std::vector<std::pair<std::string, std::string>>> SplitAssignments(
    const std::vector<std::string>& entries) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& e : entries) {
    size_t eq = e.find('=');
    if (eq == std::string::npos || eq == 0) {
      return Error{fmt::format("expected NAME=VALUE, got '{}'", e)};
    }
    out.emplace_back(e.substr(0, eq), e.substr(eq + 1));
  }
  return out;
}

}  // namespace kfpbench::harness
