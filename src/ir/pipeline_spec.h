// The KFP v2 pipeline IR (PipelineSpec, schemaVersion 2.1.0) as kfpbench reads it.
// CONTRACT (the ir/engine helper fleshes this out; keep these names stable):
#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "util/result.h"

namespace kfpbench::ir {

struct PipelineSpec {
  std::string name;         // pipelineInfo.name
  std::string description;  // pipelineInfo.description, if any
  nlohmann::json json;      // the whole spec document as JSON (what the API returns)
  // ... components, executors, root DAG: see the helper's additions.
};

// Parses compiled IR in YAML or JSON. The first YAML document is the pipeline
// spec; an optional second one (platform spec) is ignored. Errors name the
// offending field, e.g. "root.dag.tasks.train.componentRef.name: unknown component 'comp-x'".
Result<PipelineSpec> ParsePipelineSpec(std::string_view text);
Result<PipelineSpec> ParsePipelineSpecJson(const nlohmann::json& doc);

}  // namespace kfpbench::ir
