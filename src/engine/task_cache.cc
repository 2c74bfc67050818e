#include "engine/task_cache.h"

#include <openssl/evp.h>

#include <fmt/format.h>

namespace kfpbench::engine {

using nlohmann::json;

namespace {

std::string Sha256Hex(const std::string& data) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  EVP_Digest(data.data(), data.size(), digest, &length, EVP_sha256(), nullptr);
  std::string hex;
  hex.reserve(2 * length);
  for (unsigned int i = 0; i < length; ++i) hex += fmt::format("{:02x}", digest[i]);
  return hex;
}

}  // namespace

std::string CacheScope(const ir::PipelineSpec& spec) { return "pipeline/" + spec.name; }

std::string CacheFingerprint(const ir::ComponentSpec& component, const ir::ExecutorSpec& executor,
                             const json& input_parameters, const json& input_artifacts) {
  // The fields of KFP's CacheKey. nlohmann::json keeps object keys sorted, so
  // dump() is canonical: equal keys give equal text.
  json output_parameters = json::object();
  for (const auto& [name, def] : component.outputs.parameters) {
    output_parameters[name] = ir::ParameterTypeName(def.type);
  }
  json output_artifacts = json::object();
  for (const auto& [name, def] : component.outputs.artifacts) {
    output_artifacts[name] = {{"schema_title", def.schema_title},
                              {"schema_version", def.schema_version}};
  }
  json cmd_args = json::array();
  for (const auto& s : executor.container.command) cmd_args.push_back(s);
  for (const auto& s : executor.container.args) cmd_args.push_back(s);
  json key = {
      {"inputParameters", input_parameters},
      {"inputArtifacts", input_artifacts},
      {"outputParameters", std::move(output_parameters)},
      {"outputArtifacts", std::move(output_artifacts)},
      {"containerSpec", {{"image", executor.container.image}, {"cmdArgs", std::move(cmd_args)}}},
  };
  return Sha256Hex(key.dump());
}

}  // namespace kfpbench::engine
