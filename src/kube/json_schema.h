// A small JSON Schema (draft-07) validator for the subset the Kubernetes and
// Kubeflow schemas use: type, properties, required, additionalProperties,
// items, enum, allOf/anyOf/oneOf, pattern. No $ref (the strict schemas inline
// every reference) and no format checks (kubeconform skips them too).
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace kfpbench::kube {

// Every violation as "<json path>: <what>"; empty means valid. An unsupported
// keyword that would change the verdict ($ref) is reported as a violation
// rather than silently passed.
std::vector<std::string> ValidateJson(const nlohmann::json& schema, const nlohmann::json& instance);

}  // namespace kfpbench::kube
