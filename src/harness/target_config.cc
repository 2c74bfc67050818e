#include "harness/target_config.h"
#include "util/files.h"

#include <fmt/format.h>

#include "ir/yaml_json.h"

namespace kfpbench::harness {
namespace {

using ir::TextTree;

Result<std::string> ScalarAt(const TextTree& node, const std::string& where) {
  if (!node.is_string()) return Error{where + ": must be a single value"};
  return node.get<std::string>();
}

Result<Target> ParseTarget(const TextTree& node, const std::string& at) {
  if (!node.is_object()) return Error{at + ": must be a mapping"};
  Target target;
  for (const auto& [f, value] : node.items()) {
    auto v = ScalarAt(value, at + "." + f);
    if (!v.ok()) return v.error();
    if (f == "host") {
      target.host = *v;
    } else if (f == "namespace") {
      target.namespace_ = *v;
    } else if (f == "token_file") {
      target.token_file = *v;
    } else if (f == "api_version") {
      if (*v != "v2beta1" && *v != "v1beta1") {
        return Error{at + ".api_version: must be v2beta1 or v1beta1"};
      }
      target.api_version = *v;
    } else if (f == "ca_file") {
      target.ca_file = *v;
    } else if (f == "insecure") {
      if (*v != "true" && *v != "false") return Error{at + ".insecure: must be true or false"};
      target.insecure = *v == "true";
    } else {
      return Error{fmt::format(
          "{}.{}: unknown key (known: host, namespace, token_file, api_version, ca_file, "
          "insecure)",
          at, f)};
    }
  }
  if (target.host.empty()) return Error{at + ": host is required"};
  return target;
}

}  // namespace

Result<Target> ParseScenarioTarget(const nlohmann::json& target, const std::string& origin) {
  // JSON is YAML: one reader for both files, and a JSON true is "true" too.
  auto node = ir::YamlToTextJson(target.dump());
  if (!node.ok()) return Error{fmt::format("{}: target: {}", origin, node.error().message)};
  return ParseTarget(*node, origin + ": target");
}

Result<TargetConfig> ParseTargetConfig(const std::string& text, const std::string& origin) {
  auto root = ir::YamlToTextJson(text);
  if (!root.ok()) return Error{fmt::format("{}: {}", origin, root.error().message)};
  TargetConfig config;
  if (root->is_null()) return config;
  if (!root->is_object()) return Error{origin + ": must be a mapping with 'targets'"};
  for (const auto& [key, value] : root->items()) {
    if (key == "default_target") {
      auto v = ScalarAt(value, origin + ": default_target");
      if (!v.ok()) return v.error();
      config.default_target = *v;
    } else if (key == "targets") {
      if (!value.is_object()) return Error{origin + ": targets: must be a mapping of names"};
      for (const auto& [name, fields] : value.items()) {
        std::string at = fmt::format("{}: targets.{}", origin, name);
        auto target = ParseTarget(fields, at);
        if (!target.ok()) return target.error();
        config.targets[name] = *target;
      }
    } else {
      return Error{
          fmt::format("{}: {}: unknown key (known: default_target, targets)", origin, key)};
    }
  }
  if (!config.default_target.empty() && !config.targets.count(config.default_target)) {
    return Error{fmt::format("{}: default_target '{}' is not among the targets", origin,
                             config.default_target)};
  }
  return config;
}

Result<TargetConfig> LoadTargetConfig(const std::filesystem::path& path) {
  constexpr size_t kMaxConfigBytes = size_t{1} << 20;
  auto text = ReadRegularFile(path, kMaxConfigBytes);
  if (!text.ok()) return Error{fmt::format("config file: {}", text.error().message)};
  return ParseTargetConfig(*text, path.string());
}

Result<Target> SelectTarget(const TargetConfig& config, const std::string& name) {
  std::string wanted = name.empty() ? config.default_target : name;
  if (wanted.empty()) return Target{};
  auto it = config.targets.find(wanted);
  if (it == config.targets.end()) {
    std::string known;
    for (const auto& [n, t] : config.targets) known += (known.empty() ? "" : ", ") + n;
    return Error{fmt::format("--target: no target named '{}' (known: {})", wanted,
                             known.empty() ? "none; add them to kfpbench.yaml" : known)};
  }
  return it->second;
}

}  // namespace kfpbench::harness
