// A task of a DAG: its component, dependencies, input bindings, trigger
// policy, loop and retry policy, as written. Internal to src/ir; the names a
// task uses are resolved afterwards, when every component is known
// (pipeline_spec_check.h).
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "ir/pipeline_spec.h"
#include "util/result.h"

namespace kfpbench::ir::detail {

// <dag>.tasks.<name>, at `path`.
Status ParseTask(const std::string& name, const nlohmann::json& def, const std::string& path,
                 TaskSpec& out);

}  // namespace kfpbench::ir::detail
