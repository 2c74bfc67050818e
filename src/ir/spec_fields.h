// Reading the IR's JSON fields, each error naming the JSON path of the field
// ("root.dag.tasks.train.componentRef: required field is missing") so that a
// person can find it in the YAML. Internal to src/ir: the parsers of the
// pipeline spec, its executors, tasks and platform spec share these, and the
// checker words its errors with At.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "util/result.h"

namespace kfpbench::ir::detail {

// A 400 error at `path` ("path: what"; just `what` at the document's root).
Error At(const std::string& path, const std::string& what);

// The path of `key` below `path`.
std::string Join(const std::string& path, std::string_view key);

// "a mapping", "a list", "a string", ... for errors.
const char* TypeName(const nlohmann::json& j);

// Each reads `key` of `parent` (at `path`). Absent and null are the same:
// the Opt readers return nullptr, "" or 0, the Req ones "required field is
// missing" (an empty string counts as missing). A value of the wrong type is
// an error naming the type found.
Result<const nlohmann::json*> OptObject(const nlohmann::json& parent, std::string_view key,
                                        const std::string& path);
Result<const nlohmann::json*> ReqObject(const nlohmann::json& parent, std::string_view key,
                                        const std::string& path);
Result<std::string> OptString(const nlohmann::json& parent, std::string_view key,
                              const std::string& path);
Result<std::string> ReqString(const nlohmann::json& parent, std::string_view key,
                              const std::string& path);
// A list of strings; numbers and booleans are taken as written (an unquoted
// arg like `- 5`).
Result<std::vector<std::string>> StringList(const nlohmann::json& parent, std::string_view key,
                                            const std::string& path);
// A number, or a numeric string (counts in the IR are sometimes quoted).
Result<double> OptNumber(const nlohmann::json& parent, std::string_view key,
                         const std::string& path);
// A whole number of int32 (a protobuf count: maxRetryCount,
// parallelismLimit), 0 when absent; beyond, a conversion is undefined.
Result<int> OptInt32(const nlohmann::json& parent, std::string_view key, const std::string& path);

}  // namespace kfpbench::ir::detail
