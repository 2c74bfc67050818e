// Execution caching (`cachingOptions.enableCache`), as KFP v2's driver does
// it: a task's fingerprint is a SHA-256 over what decides its result — its
// input parameter values, its input artifacts, the names and types of its
// outputs, and its container's image, command and arguments as compiled
// (placeholders unresolved) — looked up within the pipeline's name
// ("pipeline/<name>", KFP's cache scope). A hit reuses the outputs of the
// earlier successful execution and the container does not run.
//
// Source: kubeflow/pipelines backend/src/v2/driver (getFingerPrintsAndID ->
// cacheutils.GenerateCacheKey, GetExecutionCache(fingerPrint,
// "pipeline/"+PipelineName, ...)) and the v2beta1 RuntimeState doc in
// ../shared/kfp/swagger/v2beta1/run.swagger.json: "SKIPPED: Entity has been
// skipped. For example, due to caching." The task detail of a hit is
// SKIPPED and carries `cache_fingerprint`.
#pragma once

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "ir/pipeline_spec.h"

namespace kfpbench::engine {

// What a successful execution left for later hits.
struct CachedExecution {
  std::string run_id;
  std::string task_id;
  nlohmann::json output_parameters = nlohmann::json::object();  // name -> value
  // name -> [{"name", "uri", "path", "schema_title", "schema_version", "metadata"}]
  nlohmann::json output_artifacts = nlohmann::json::object();
};

// Where fingerprints live (SQLite in the backend, so the cache survives
// restarts). Called on the engine's loop: implementations must be quick and
// must not call back into the engine.
class TaskCache {
 public:
  virtual ~TaskCache() = default;
  virtual std::optional<CachedExecution> Lookup(const std::string& scope,
                                                const std::string& fingerprint) = 0;
  // Records a successful execution; a later one with the same key replaces it.
  virtual void Record(const std::string& scope, const std::string& fingerprint,
                      const CachedExecution& execution) = 0;
};

// "pipeline/<pipeline name>".
std::string CacheScope(const ir::PipelineSpec& spec);

// The fingerprint (64 hex digits) of a container task about to run.
// `input_artifacts`: name -> list of URIs.
std::string CacheFingerprint(const ir::ComponentSpec& component, const ir::ExecutorSpec& executor,
                             const nlohmann::json& input_parameters,
                             const nlohmann::json& input_artifacts);

}  // namespace kfpbench::engine
