// Run parameters from text (CSV cells, `--params k=v`), typed by the
// pipeline's root input definitions, as the KFP API expects them: numbers as
// numbers, booleans as booleans, lists and structs as JSON.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "ir/pipeline_spec.h"
#include "util/result.h"

namespace kfpbench::harness {

// One value: STRING as is; NUMBER_INTEGER and NUMBER_DOUBLE strictly numeric;
// BOOLEAN true/false (any case) or 1/0; LIST and STRUCT as JSON text. The
// error says what was expected, without naming where the text came from.
Result<nlohmann::json> TypedValue(const ir::ParameterSpec& spec, std::string_view text);

// Named values for the pipeline's root inputs. A name the pipeline does not
// declare is an error listing what it does declare; an empty value leaves the
// parameter to its default; a required input (no default, not optional) left
// without a value is an error. Errors name the parameter; callers add where.
Result<nlohmann::json> TypedParameters(
    const ir::PipelineSpec& spec, const std::vector<std::pair<std::string, std::string>>& values);

// "k=v" entries (as `--params` gives them) into pairs; an entry without '='
// or with an empty name is an error.
Result<std::vector<std::pair<std::string, std::string>>> SplitAssignments(
    const std::vector<std::string>& entries);

}  // namespace kfpbench::harness
