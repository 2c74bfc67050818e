#include "ir/placeholders.h"

#include <fmt/format.h>

#include "ir/values.h"
#include "util/json_reader.h"

namespace kfpbench::ir {
namespace {

using nlohmann::json;

Error PlaceholderError(std::string_view placeholder, const std::string& what) {
  return Error{fmt::format("placeholder '{{{{{}}}}}': {}", placeholder, what), kHttpBadRequest};
}

// Reads `['name']` or `["name"]` at the front of `s`, advancing past it.
std::optional<std::string> ReadKey(std::string_view& s) {
  if (s.size() < 4 || s[0] != '[' || (s[1] != '\'' && s[1] != '"')) return std::nullopt;
  char quote = s[1];
  size_t end = s.find(quote, 2);
  if (end == std::string_view::npos || end + 1 >= s.size() || s[end + 1] != ']') {
    return std::nullopt;
  }
  std::string key(s.substr(2, end - 2));
  s.remove_prefix(end + 2);
  return key;
}

json ArtifactJson(const ArtifactValue& a, bool with_name) {
  json out = {{"type", {{"schemaTitle", a.schema_title}, {"schemaVersion", a.schema_version}}},
              {"uri", a.uri},
              {"metadata", a.metadata}};
  if (with_name && !a.name.empty()) out["name"] = a.name;
  return out;
}

// `body` is the text between "{{" and "}}".
Result<std::string> ResolveOne(std::string_view body, const PlaceholderContext& ctx) {
  const std::string_view whole = body;
  if (body == "$") return BuildExecutorInput(ctx).dump();
  if (body == "$.pipeline_job_name") return ctx.pipeline_job_name;
  if (body == "$.pipeline_job_uuid") return ctx.pipeline_job_uuid;
  if (body == "$.pipeline_task_name") return ctx.pipeline_task_name;
  if (body == "$.pipeline_task_uuid") return ctx.pipeline_task_uuid;
  if (body == "$.outputs.output_file" || body == "$.outputMetadataUri") {
    return ctx.executor_output_file;
  }
  bool inputs = body.rfind("$.inputs.", 0) == 0;
  bool outputs = body.rfind("$.outputs.", 0) == 0;
  if (!inputs && !outputs) return PlaceholderError(whole, "unknown placeholder");
  body.remove_prefix(inputs ? 9 : 10);
  bool parameters = body.rfind("parameters", 0) == 0;
  bool artifacts = body.rfind("artifacts", 0) == 0;
  if (!parameters && !artifacts) return PlaceholderError(whole, "unknown placeholder");
  body.remove_prefix(parameters ? 10 : 9);
  auto key = ReadKey(body);
  if (!key) return PlaceholderError(whole, "expected ['name']");

  if (parameters && inputs) {
    if (!body.empty()) return PlaceholderError(whole, "unknown placeholder");
    if (ctx.parameters == nullptr || !ctx.parameters->contains(*key) ||
        (*ctx.parameters)[*key].is_null()) {
      return PlaceholderError(whole, "input parameter '" + *key + "' has no value");
    }
    return ParameterToString((*ctx.parameters)[*key]);
  }
  if (parameters) {  // outputs
    if (body != ".output_file") return PlaceholderError(whole, "unknown placeholder");
    if (ctx.output_parameter_files == nullptr) {
      return PlaceholderError(whole, "no output parameter '" + *key + "'");
    }
    auto it = ctx.output_parameter_files->find(*key);
    if (it == ctx.output_parameter_files->end()) {
      return PlaceholderError(whole, "no output parameter '" + *key + "'");
    }
    return it->second;
  }
  // Artifacts.
  const ArtifactValue* artifact = nullptr;
  if (inputs) {
    if (ctx.input_artifacts != nullptr) {
      auto it = ctx.input_artifacts->find(*key);
      if (it != ctx.input_artifacts->end() && !it->second.empty()) artifact = &it->second.front();
    }
    if (artifact == nullptr) {
      return PlaceholderError(whole, "input artifact '" + *key + "' has no value");
    }
  } else {
    if (ctx.output_artifacts != nullptr) {
      auto it = ctx.output_artifacts->find(*key);
      if (it != ctx.output_artifacts->end()) artifact = &it->second;
    }
    if (artifact == nullptr) return PlaceholderError(whole, "no output artifact '" + *key + "'");
  }
  if (body == ".uri") return artifact->uri;
  if (body == ".path") return artifact->path;
  if (body == ".metadata") return artifact->metadata.dump();
  if (body.empty()) return ArtifactJson(*artifact, true).dump();
  return PlaceholderError(whole, "unknown placeholder");
}

bool IsPresent(const std::string& name, const PlaceholderContext& ctx) {
  if (ctx.parameters != nullptr) {
    auto it = ctx.parameters->find(name);
    if (it != ctx.parameters->end() && !it->is_null()) return true;
  }
  if (ctx.input_artifacts != nullptr) {
    auto it = ctx.input_artifacts->find(name);
    if (it != ctx.input_artifacts->end() && !it->second.empty()) return true;
  }
  return false;
}

// A JSON object string that is a structured placeholder, or null.
json ParseStructured(const std::string& item) {
  if (item.size() < 12 || item.front() != '{') return nullptr;
  if (item.find("\"Concat\"") == std::string::npos &&
      item.find("\"IfPresent\"") == std::string::npos) {
    return nullptr;
  }
  json parsed = ParseJson(item);
  if (parsed.is_discarded() || !parsed.is_object() || parsed.size() != 1) return nullptr;
  if (!parsed.contains("Concat") && !parsed.contains("IfPresent")) return nullptr;
  return parsed;
}

Status Expand(const json& item, const PlaceholderContext& ctx, std::vector<std::string>& out);

Status ExpandList(const json& items, const PlaceholderContext& ctx, std::vector<std::string>& out) {
  if (items.is_null()) return Ok();
  if (!items.is_array()) return Expand(items, ctx, out);
  for (const auto& item : items) {
    if (auto s = Expand(item, ctx, out); !s) return s;
  }
  return Ok();
}

Status Expand(const json& item, const PlaceholderContext& ctx, std::vector<std::string>& out) {
  if (item.is_string()) {
    const auto& text = item.get_ref<const std::string&>();
    json structured = ParseStructured(text);
    if (!structured.is_null()) return Expand(structured, ctx, out);
    auto resolved = ResolvePlaceholders(text, ctx);
    if (!resolved.ok()) return resolved.error();
    out.push_back(std::move(*resolved));
    return Ok();
  }
  if (item.is_object() && item.contains("Concat")) {
    std::vector<std::string> parts;
    if (auto s = ExpandList(item["Concat"], ctx, parts); !s) return s;
    std::string joined;
    for (const auto& p : parts) joined += p;
    out.push_back(std::move(joined));
    return Ok();
  }
  if (item.is_object() && item.contains("IfPresent")) {
    const json& spec = item["IfPresent"];
    if (!spec.is_object() || !spec.contains("InputName") || !spec["InputName"].is_string()) {
      return Error{"IfPresent placeholder needs an InputName: " + item.dump(), kHttpBadRequest};
    }
    bool present = IsPresent(spec["InputName"].get<std::string>(), ctx);
    const char* branch = present ? "Then" : "Else";
    if (!spec.contains(branch)) return Ok();
    return ExpandList(spec[branch], ctx, out);
  }
  if (item.is_number() || item.is_boolean()) {
    out.push_back(item.dump());
    return Ok();
  }
  return Error{"unsupported structured placeholder: " + item.dump(), kHttpBadRequest};
}

}  // namespace

json BuildExecutorInput(const PlaceholderContext& ctx) {
  json inputs = json::object();
  inputs["parameterValues"] = ctx.parameters != nullptr ? *ctx.parameters : json::object();
  if (ctx.input_artifacts != nullptr && !ctx.input_artifacts->empty()) {
    json arts = json::object();
    for (const auto& [name, list] : *ctx.input_artifacts) {
      json items = json::array();
      for (const auto& a : list) items.push_back(ArtifactJson(a, true));
      arts[name] = {{"artifacts", std::move(items)}};
    }
    inputs["artifacts"] = std::move(arts);
  }
  json outputs = json::object();
  if (ctx.output_parameter_files != nullptr && !ctx.output_parameter_files->empty()) {
    json params = json::object();
    for (const auto& [name, file] : *ctx.output_parameter_files) {
      params[name] = {{"outputFile", file}};
    }
    outputs["parameters"] = std::move(params);
  }
  if (ctx.output_artifacts != nullptr && !ctx.output_artifacts->empty()) {
    json arts = json::object();
    for (const auto& [name, a] : *ctx.output_artifacts) {
      arts[name] = {{"artifacts", json::array({ArtifactJson(a, false)})}};
    }
    outputs["artifacts"] = std::move(arts);
  }
  outputs["outputFile"] = ctx.executor_output_file;
  return {{"inputs", std::move(inputs)}, {"outputs", std::move(outputs)}};
}

Result<std::string> ResolvePlaceholders(std::string_view text, const PlaceholderContext& ctx) {
  std::string out;
  size_t pos = 0;
  while (true) {
    size_t open = text.find("{{$", pos);
    if (open == std::string_view::npos) break;
    size_t close = text.find("}}", open + 3);
    if (close == std::string_view::npos) break;
    // "{{$}}" and friends; JSON inside text can contain "}}" only after the
    // placeholder, so the first "}}" closes it.
    auto value = ResolveOne(text.substr(open + 2, close - open - 2), ctx);
    if (!value.ok()) return value.error();
    out.append(text.substr(pos, open - pos));
    out.append(*value);
    pos = close + 2;
  }
  if (pos == 0) return std::string(text);
  out.append(text.substr(pos));
  return out;
}

Result<std::vector<std::string>> ResolveCommandLine(const std::vector<std::string>& items,
                                                    const PlaceholderContext& ctx) {
  std::vector<std::string> out;
  out.reserve(items.size());
  for (const auto& item : items) {
    if (auto s = Expand(json(item), ctx, out); !s) return s.error();
  }
  return out;
}

Result<std::map<std::string, std::string>> OutputParametersFromExecutorOutput(
    std::string_view json_text) {
  json doc = ParseJson(json_text);
  if (doc.is_discarded() || !doc.is_object()) {
    return Error{"executor output is not a JSON object"};
  }
  std::map<std::string, std::string> out;
  auto values = doc.find("parameterValues");
  if (values == doc.end()) return out;
  if (!values->is_object()) return Error{"executor output: parameterValues is not a mapping"};
  for (const auto& [name, value] : values->items()) out[name] = ParameterToString(value);
  return out;
}

}  // namespace kfpbench::ir
