// The bodies of the requests that create something where they say (a run, a
// recurring run, an experiment, a pipeline), each read once: multi-user authorization
// (access.cc) decides on the value read here and the handler acts on that
// same value, so no second reading of the bytes can land it elsewhere. A
// request that names its experiment or namespace twice (in the body and the
// query, or in two resource references of one kind) is refused; a field
// under both its names (experiment_id and experimentId) the reader refuses.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

#include "http/message.h"
#include "kfp/model.h"

namespace kfpbench::server {

// v2beta1 CreateRun: the run, its experiment from the body or the query.
struct NewRun {
  kfp::Run run;
};
// v2beta1 CreateRecurringRun, its experiment from the body or the query.
struct NewRecurringRun {
  kfp::RecurringRun recurring_run;
};
// v2beta1 and v1beta1 CreateExperiment (v1's NAMESPACE reference read into
// the namespace); `v1`: answer in v1's shape.
struct NewExperiment {
  kfp::Experiment experiment;
  bool v1 = false;
};
// v1beta1 CreateRun, before the spec it names is looked up: the run with
// its pipeline, version and experiment from the resource references.
struct V1NewRun {
  kfp::Run run;
  std::string namespace_;  // a NAMESPACE reference, if any
  std::string manifest;    // pipeline_spec.pipeline_manifest
  std::vector<std::pair<std::string, std::string>> params;
  nlohmann::json runtime_config;
};

// v2beta1 CreatePipeline: the pipeline, in its namespace.
struct NewPipeline {
  kfp::Pipeline pipeline;
};
// v2beta1 CreatePipelineAndVersion: the pipeline (in its namespace) and its
// first version.
struct NewPipelineAndVersion {
  kfp::Pipeline pipeline;
  kfp::PipelineVersion version;
};

using CreateBody = std::variant<NewRun, NewRecurringRun, NewExperiment, V1NewRun, NewPipeline,
                                NewPipelineAndVersion>;

// Whether `route` (a Handlers::Register name) has its body read here.
bool HasCreateBody(std::string_view route);

// The body of a request to such a route, or the answer refusing it: 413 for
// a body too large, grpc-gateway's 400 for one that does not read into the
// request message, KFP's 400 for one naming where it lands twice.
std::variant<CreateBody, http::Response> ReadCreateBody(std::string_view route,
                                                        const http::Request& request);

}  // namespace kfpbench::server
