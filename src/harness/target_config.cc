#include "harness/target_config.h"
#include "util/files.h"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

namespace kfpbench::harness {
namespace {

Result<std::string> ScalarAt(const YAML::Node& node, const std::string& where) {
  if (!node.IsScalar()) return Error{where + ": must be a single value"};
  return node.as<std::string>();
}

Result<Target> ParseTarget(const YAML::Node& node, const std::string& at) {
  if (!node.IsMap()) return Error{at + ": must be a mapping"};
  Target target;
  for (const auto& field : node) {
    std::string f = field.first.as<std::string>();
    auto v = ScalarAt(field.second, at + "." + f);
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
  YAML::Node node;
  try {
    node = YAML::Load(target.dump());  // JSON is YAML: one parser for both files
  } catch (const YAML::Exception& e) {
    return Error{fmt::format("{}: target: {}", origin, e.msg)};
  }
  return ParseTarget(node, origin + ": target");
}

Result<TargetConfig> ParseTargetConfig(const std::string& text, const std::string& origin) {
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    return Error{fmt::format("{}: malformed YAML at line {}: {}", origin, e.mark.line + 1, e.msg)};
  }
  TargetConfig config;
  if (root.IsNull()) return config;
  if (!root.IsMap()) return Error{origin + ": must be a mapping with 'targets'"};
  for (const auto& entry : root) {
    std::string key = entry.first.as<std::string>();
    if (key == "default_target") {
      auto v = ScalarAt(entry.second, origin + ": default_target");
      if (!v.ok()) return v.error();
      config.default_target = *v;
    } else if (key == "targets") {
      if (!entry.second.IsMap()) return Error{origin + ": targets: must be a mapping of names"};
      for (const auto& t : entry.second) {
        std::string name = t.first.as<std::string>();
        std::string at = fmt::format("{}: targets.{}", origin, name);
        auto target = ParseTarget(t.second, at);
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
