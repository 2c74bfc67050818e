// Named targets, so one scenario file runs against each environment:
//
//   # kfpbench.yaml
//   default_target: local
//   targets:
//     local:      {host: http://127.0.0.1:8888}
//     production: {host: https://kfp.example.com, namespace: team-a,
//                  token_file: /var/run/secrets/kfp/token, api_version: v2beta1}
//
// Command-line flags override what the target says.
#pragma once

#include <filesystem>
#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "util/result.h"

namespace kfpbench::harness {

struct Target {
  std::string host;
  std::string namespace_;
  std::string token_file;
  std::string api_version = "v2beta1";
  std::string ca_file;
  bool insecure = false;
};

struct TargetConfig {
  std::string default_target;
  std::map<std::string, Target> targets;
};

// Unknown keys, wrong types and a default_target that names nothing are
// errors naming the file and the key.
Result<TargetConfig> LoadTargetConfig(const std::filesystem::path& path);
Result<TargetConfig> ParseTargetConfig(const std::string& text, const std::string& origin);

// A scenario file's "target" object, with the keys of a named target (host
// required). Errors name the file: "smoke.json: target.hots: unknown key".
Result<Target> ParseScenarioTarget(const nlohmann::json& target, const std::string& origin);

// The target called `name`, or the default one when `name` is empty. An empty
// Target (embedded backend) when the config has none and none was asked for.
Result<Target> SelectTarget(const TargetConfig& config, const std::string& name);

}  // namespace kfpbench::harness
