// Runtime parameters of a run checked against the pipeline's root inputs.
#pragma once

#include <nlohmann/json.hpp>

#include "ir/pipeline_spec.h"
#include "util/result.h"

namespace kfpbench::engine {

// Checks `given` (runtime_config.parameters) against the root
// inputDefinitions and fills in defaults. Errors (code 400) name the
// parameter: missing required, wrong type, or not a pipeline input. An
// integral double is accepted for NUMBER_INTEGER.
Result<nlohmann::json> ResolveRunParameters(const ir::PipelineSpec& spec,
                                            const nlohmann::json& given);

}  // namespace kfpbench::engine
