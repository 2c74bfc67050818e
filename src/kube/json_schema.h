// A small JSON Schema validator for the subset the Kubernetes and Kubeflow
// schemas (draft-07) and kfpbench's own scenario schema use: type, properties,
// required, additionalProperties, propertyNames, items, enum, const,
// allOf/anyOf/oneOf/not, if/then/else, pattern, minimum/maximum (and exclusive),
// minLength, minItems, minProperties, and local $ref ("#/$defs/..."). No
// remote $ref and no format checks (kubeconform skips them too).
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace kfpbench::kube {

// Every violation as "<json path>: <what>"; empty means valid. An unsupported
// keyword that would change the verdict ($ref) is reported as a violation
// rather than silently passed. A remote $ref is reported the same way.
std::vector<std::string> ValidateJson(const nlohmann::json& schema, const nlohmann::json& instance);

}  // namespace kfpbench::kube
