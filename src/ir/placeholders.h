// Placeholder resolution for container command lines, as KFP's launcher does:
// {{$.inputs.parameters['x']}}, {{$.outputs.parameters['x'].output_file}},
// artifact uri/path placeholders, {{$}} (the executor-input JSON), and the
// structured {"Concat": [...]} / {"IfPresent": {...}} arguments.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "util/result.h"

namespace kfpbench::ir {

// One artifact, as the executor input lists it.
struct ArtifactValue {
  std::string name;
  std::string uri;
  std::string path;  // where a local step reads or writes it
  std::string schema_title;
  std::string schema_version;
  nlohmann::json metadata = nlohmann::json::object();
};

// Everything a task's placeholders can refer to. Pointers may be null (empty).
struct PlaceholderContext {
  const nlohmann::json* parameters = nullptr;  // input name -> value
  const std::map<std::string, std::string>* output_parameter_files = nullptr;
  const std::map<std::string, std::vector<ArtifactValue>>* input_artifacts = nullptr;
  const std::map<std::string, ArtifactValue>* output_artifacts = nullptr;
  std::string executor_output_file;  // outputs.outputFile of the executor input
  std::string pipeline_job_name;
  std::string pipeline_job_uuid;
  std::string pipeline_task_name;
  std::string pipeline_task_uuid;
};

// The KFP ExecutorInput message as JSON:
// {"inputs":{"parameterValues":{...},"artifacts":{...}},
//  "outputs":{"parameters":{"x":{"outputFile":"..."}},"artifacts":{...},"outputFile":"..."}}
nlohmann::json BuildExecutorInput(const PlaceholderContext& ctx);

// Replaces every {{...}} in `text`. Unknown placeholders and inputs without a
// value are errors naming the placeholder.
Result<std::string> ResolvePlaceholders(std::string_view text, const PlaceholderContext& ctx);

// Resolves a command or args list. Items that are structured placeholders
// expand to zero or more arguments (IfPresent) or one joined argument (Concat).
Result<std::vector<std::string>> ResolveCommandLine(const std::vector<std::string>& items,
                                                    const PlaceholderContext& ctx);

// Lightweight Python components report output parameters in the executor
// output file (outputs.outputFile, "<work_dir>/executor_output.json") as
// {"parameterValues": {"Output": 3}} instead of per-parameter files. Returns
// them as the raw text TaskResult::output_parameters carries (strings as they
// are, other values as JSON text).
Result<std::map<std::string, std::string>> OutputParametersFromExecutorOutput(
    std::string_view json_text);

}  // namespace kfpbench::ir
