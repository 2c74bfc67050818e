#include "server/create_requests.h"

#include <fmt/format.h>

#include "server/api_util.h"
#include "util/json_reader.h"

namespace kfpbench::server {
namespace {

using nlohmann::json;

// v1beta1's ResourceType, by number as protojson also accepts it.
constexpr std::string_view kResourceTypes[] = {
    "UNKNOWN_RESOURCE_TYPE", "EXPERIMENT", "JOB", "PIPELINE", "PIPELINE_VERSION", "NAMESPACE"};
constexpr std::string_view kRelationships[] = {"UNKNOWN_RELATIONSHIP", "OWNER", "CREATOR"};

http::Response Twice(const std::string& what) {
  return ErrorResponse(kHttpBadRequest,
                       fmt::format("Invalid input error: the request names its {} more than once; "
                                   "name it once",
                                   what));
}

// The deprecated experiment_id query parameter (grpc-gateway also takes its
// JSON name): empty when absent, nullopt when given more than once.
std::optional<std::string> QueryExperiment(const http::Request& r) {
  size_t given = r.query.count("experiment_id") + r.query.count("experimentId");
  if (given > 1) return std::nullopt;
  return r.HasQuery("experiment_id") ? r.Query("experiment_id") : r.Query("experimentId");
}

// The experiment of a v2beta1 body, or from the query when the body names
// none; false when both name one.
bool TakeQueryExperiment(const http::Request& r, std::string& experiment_id) {
  auto query = QueryExperiment(r);
  if (!query) return false;
  bool in_query = r.HasQuery("experiment_id") || r.HasQuery("experimentId");
  if (in_query && !experiment_id.empty()) return false;
  if (experiment_id.empty()) experiment_id = *query;
  return true;
}

// One resource reference: its key's type and id.
struct Reference {
  std::string type;
  std::string id;
};

// v1beta1's resource_references, each key read by the same reader.
std::vector<Reference> ReadReferences(JsonReader& reader) {
  std::vector<Reference> out;
  reader.Array("resource_references", [&](JsonReader& ref) {
    Reference r;
    ref.Message("key", [&](JsonReader& key) {
      key.Enum("type", r.type, kResourceTypes);
      key.String("id", r.id);
    });
    std::string ignored;
    ref.String("name", ignored);
    ref.Enum("relationship", ignored, kRelationships);
    out.push_back(std::move(r));
  });
  return out;
}

// The id of the one reference of `type`; nullopt when there are several.
std::optional<std::string> OnlyReference(const std::vector<Reference>& refs,
                                         std::string_view type) {
  std::optional<std::string> found;
  for (const auto& r : refs) {
    if (r.type != type) continue;
    if (found) return std::nullopt;
    found = r.id;
  }
  return found.value_or("");
}

std::variant<CreateBody, http::Response> ReadRun(const http::Request& r) {
  auto body = ReadBody(r, kfp::RunFromJson);
  if (auto* refused = std::get_if<http::Response>(&body)) return std::move(*refused);
  NewRun out{std::move(std::get<kfp::Run>(body))};
  if (!TakeQueryExperiment(r, out.run.experiment_id)) return Twice("experiment");
  return out;
}

std::variant<CreateBody, http::Response> ReadRecurringRun(const http::Request& r) {
  auto body = ReadBody(r, kfp::RecurringRunFromJson);
  if (auto* refused = std::get_if<http::Response>(&body)) return std::move(*refused);
  NewRecurringRun out{std::move(std::get<kfp::RecurringRun>(body))};
  if (!TakeQueryExperiment(r, out.recurring_run.experiment_id)) return Twice("experiment");
  return out;
}

std::variant<CreateBody, http::Response> ReadExperiment(const http::Request& r) {
  auto body = ReadBody(r, kfp::ExperimentFromJson);
  if (auto* refused = std::get_if<http::Response>(&body)) return std::move(*refused);
  return NewExperiment{std::move(std::get<kfp::Experiment>(body)), false};
}

std::variant<CreateBody, http::Response> ReadV1Experiment(const http::Request& r) {
  auto body = ParseJsonBody(r);
  if (!body.ok()) return GatewayErrorResponse(body.error());
  NewExperiment out{{}, true};
  kfp::Experiment& e = out.experiment;
  JsonReader reader(*body, "", true);
  json ignored;
  reader.String("name", e.display_name);
  reader.String("description", e.description);
  for (const char* output : {"id", "created_at", "storage_state"}) reader.Any(output, ignored);
  auto refs = ReadReferences(reader);
  if (Status s = reader.Finish(); !s.ok()) return ErrorResponse(s.error());
  auto ns = OnlyReference(refs, "NAMESPACE");
  if (!ns) return Twice("namespace");
  e.namespace_ = *ns;
  return out;
}

std::variant<CreateBody, http::Response> ReadV1Run(const http::Request& r) {
  auto body = ParseJsonBody(r);
  if (!body.ok()) return GatewayErrorResponse(body.error());
  V1NewRun out;
  kfp::Run& run = out.run;
  std::string workflow_manifest;
  json ignored;
  JsonReader reader(*body, "", true);
  reader.String("name", run.display_name);
  reader.String("description", run.description);
  reader.String("service_account", run.service_account);
  for (const char* output : {"id", "storage_state", "created_at", "scheduled_at", "finished_at",
                             "status", "error", "metrics"}) {
    reader.Any(output, ignored);
  }
  reader.Message("pipeline_spec", [&](JsonReader& spec) {
    spec.String("pipeline_id", run.pipeline_id);
    spec.Any("pipeline_name", ignored);
    spec.String("pipeline_manifest", out.manifest);
    spec.String("workflow_manifest", workflow_manifest);
    spec.Array("parameters", [&](JsonReader& p) {
      std::string name, value;
      p.String("name", name);
      p.String("value", value);
      out.params.emplace_back(std::move(name), std::move(value));
    });
    spec.Object("runtime_config", out.runtime_config);
  });
  auto refs = ReadReferences(reader);
  if (Status s = reader.Finish(); !s.ok()) return ErrorResponse(s.error());
  for (const auto& ref : refs) {
    if (ref.type != "EXPERIMENT" && ref.type != "PIPELINE_VERSION" && ref.type != "PIPELINE" &&
        ref.type != "NAMESPACE") {
      std::string what = ref.type.empty() ? "a resource reference without key.type" : ref.type;
      return ErrorResponse(kHttpBadRequest,
                           "runs cannot reference " + what +
                               " (EXPERIMENT, PIPELINE_VERSION, PIPELINE or NAMESPACE)");
    }
  }
  struct Field {
    const char* type;
    std::string* out;
  };
  for (Field f : {Field{"EXPERIMENT", &run.experiment_id}, Field{"NAMESPACE", &out.namespace_},
                  Field{"PIPELINE", &run.pipeline_id},
                  Field{"PIPELINE_VERSION", &run.pipeline_version_reference_id}}) {
    auto id = OnlyReference(refs, f.type);
    if (!id) return Twice(fmt::format("{} (resource_references)", f.type));
    // pipeline_spec.pipeline_id and a PIPELINE reference that differ.
    if (!id->empty() && !f.out->empty() && *id != *f.out) return Twice(f.type);
    if (!id->empty()) *f.out = *id;
  }
  if (run.display_name.empty()) return ErrorResponse(kHttpBadRequest, "run name is required");
  if (!workflow_manifest.empty()) {
    return ErrorResponse(kHttpBadRequest,
                         "pipeline_spec.workflow_manifest (Argo workflows) is not supported; "
                         "give a KFP v2 pipeline_manifest or a pipeline version");
  }
  return out;
}

std::variant<CreateBody, http::Response> ReadPipeline(const http::Request& r) {
  auto body = ReadBody(r, kfp::PipelineFromJson);
  if (auto* refused = std::get_if<http::Response>(&body)) return std::move(*refused);
  return NewPipeline{std::move(std::get<kfp::Pipeline>(body))};
}

std::variant<CreateBody, http::Response> ReadPipelineAndVersion(const http::Request& r) {
  auto body = ParseJsonBody(r);
  if (!body.ok()) return GatewayErrorResponse(body.error());
  json pipeline_json, version_json;
  JsonReader reader(*body, "", true);
  reader.Object("pipeline", pipeline_json);
  reader.Object("pipeline_version", version_json);
  if (Status s = reader.Finish(); !s.ok()) return GatewayErrorResponse(s.error());
  if (pipeline_json.is_null()) return ErrorResponse(kHttpBadRequest, "pipeline is required");
  if (version_json.is_null()) {
    return ErrorResponse(kHttpBadRequest, "pipeline_version is required");
  }
  auto p = kfp::PipelineFromJson(pipeline_json, true);
  if (!p.ok()) return GatewayErrorResponse(Error{"pipeline." + p.error().message, kHttpBadRequest});
  auto v = kfp::PipelineVersionFromJson(version_json, true);
  if (!v.ok()) {
    return GatewayErrorResponse(Error{"pipeline_version." + v.error().message, kHttpBadRequest});
  }
  return NewPipelineAndVersion{std::move(*p), std::move(*v)};
}

struct Reader {
  std::string_view route;
  std::variant<CreateBody, http::Response> (*read)(const http::Request&);
};

constexpr Reader kReaders[] = {
    {"CreateRun", ReadRun},
    {"CreateRecurringRun", ReadRecurringRun},
    {"CreateExperiment", ReadExperiment},
    {"V1CreateExperiment", ReadV1Experiment},
    {"V1CreateRun", ReadV1Run},
    {"CreatePipeline", ReadPipeline},
    {"CreatePipelineAndVersion", ReadPipelineAndVersion},
};

const Reader* ReaderOf(std::string_view route) {
  for (const auto& r : kReaders) {
    if (r.route == route) return &r;
  }
  return nullptr;
}

}  // namespace

bool HasCreateBody(std::string_view route) { return ReaderOf(route) != nullptr; }

std::variant<CreateBody, http::Response> ReadCreateBody(std::string_view route,
                                                        const http::Request& request) {
  const Reader* reader = ReaderOf(route);
  if (!reader) return ErrorResponse(500, fmt::format("{} has no body reader", route));
  return reader->read(request);
}

}  // namespace kfpbench::server
