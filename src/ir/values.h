// Parameter values as the engine passes them around: JSON values checked
// against and converted to the IR's parameterType.
#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "ir/pipeline_spec.h"
#include "util/result.h"

namespace kfpbench::ir {

// The string a placeholder expands to: strings raw, everything else as JSON
// text (3, 2.5, true, ["a"], {"k":1}).
std::string ParameterToString(const nlohmann::json& value);

// Strict check for values supplied from outside (runtime parameters): the JSON
// type must match; an integral double is accepted (and converted) for
// NUMBER_INTEGER because protobuf Values carry every number as a double.
Result<nlohmann::json> CheckParameterValue(const nlohmann::json& value, ParameterType type);

// Lenient conversion for values flowing between tasks (loop items, selector
// results, DAG inputs): also parses strings into numbers/bools/JSON and renders
// non-strings as text for STRING.
Result<nlohmann::json> CoerceParameterValue(const nlohmann::json& value, ParameterType type);

// Parses the raw text a step wrote for an output parameter by its type:
// NUMBER_INTEGER -> int, NUMBER_DOUBLE -> double, BOOLEAN, LIST/STRUCT -> JSON,
// STRING -> the text unchanged.
Result<nlohmann::json> ParseOutputParameter(std::string_view text, ParameterType type);

// A short description of a JSON value's type for error messages: "string \"x\"".
std::string DescribeValue(const nlohmann::json& value);

}  // namespace kfpbench::ir
