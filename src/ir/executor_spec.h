// An executor of deploymentSpec: a container with its resources, or an
// importer. Internal to src/ir (SetResourceField, in pipeline_spec.h, is the
// public part).
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "ir/pipeline_spec.h"
#include "util/result.h"

namespace kfpbench::ir::detail {

// deploymentSpec.executors.<label>, at `path`.
Status ParseExecutor(const std::string& label, const nlohmann::json& def, const std::string& path,
                     ExecutorSpec& out);

}  // namespace kfpbench::ir::detail
