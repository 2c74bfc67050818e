// The KFP v1beta1 forms of the resources the harness uses, converted to and
// from the v2beta1 model (kfp/model.h), so kfp::Client can speak either API
// while the harness sees one. v1 names things differently (id and name, not
// pipeline_id and display_name), links runs to experiments and versions with
// resource_references, passes parameters as strings, and reports Argo phase
// names ("Succeeded", "Error") as the run status.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "kfp/model.h"
#include "util/result.h"

namespace kfpbench::kfp {
struct RunCreate;
}

namespace kfpbench::kfp::v1 {

// An Argo/v1 phase as a v2 state. Empty (not yet reported) is PENDING; an
// unknown word is nullopt.
std::optional<RuntimeState> StateFromStatus(std::string_view status);

Result<Pipeline> PipelineFromJson(const nlohmann::json& j);
Result<PipelineVersion> PipelineVersionFromJson(const nlohmann::json& j);
Result<Experiment> ExperimentFromJson(const nlohmann::json& j);
// A v1 Run; `runtime` is GetRun's pipeline_runtime (may be null), whose Argo
// workflow_manifest gives the tasks: one per Pod node, the node id as pod name.
Result<Run> RunFromJson(const nlohmann::json& j, const nlohmann::json& runtime);
// CreateRun's and GetRun's answer: {"run": ..., "pipeline_runtime": ...}.
Result<Run> RunDetailFromJson(const nlohmann::json& j);

// A list filter in v2beta1's words (what every caller of kfp::Client writes)
// in v1beta1's: its Predicate names the operation `op` (enum Op, whose 0 is
// UNKNOWN), where v2beta1's says `operation`; KFP refuses the other's
// ("unknown field"). Keys and values are alike in both. Text that is no
// filter object goes as it is, for the server to refuse.
std::string FilterFromV2(const std::string& filter);

nlohmann::json ExperimentBody(std::string_view name, std::string_view description,
                              const std::string& namespace_);
nlohmann::json RunBody(const RunCreate& request);

}  // namespace kfpbench::kfp::v1
