// The v1beta1 subset KFP's v1 client uses in benchmark flows: upload and list
// pipelines, experiments, and create/get/list/delete runs with
// resource_references and string parameters. v1 names (id, name), v1 status
// strings ("Succeeded") and the {"run", "pipeline_runtime"} wrapper of GetRun.
#include <charconv>

#include <fmt/format.h>

#include "server/api_util.h"
#include "server/handlers.h"
#include "util/enum_names.h"
#include "util/json_reader.h"

namespace kfpbench::server {
namespace {

using nlohmann::json;

void Put(json& j, const char* key, const std::string& v) {
  if (!v.empty()) j[key] = v;
}
void Put(json& j, const char* key, WallTime t) {
  if (t.time_since_epoch().count() != 0) j[key] = FormatRfc3339(t);
}

// A v1 list's namespace: resource_reference_key when it names one.
std::string NamespaceKey(const http::Request& r) {
  return r.Query("resource_reference_key.type") == "NAMESPACE"
             ? r.Query("resource_reference_key.id")
             : "";
}

// v1 reports the workflow phase names.
constexpr EnumName<RuntimeState> kV1Statuses[] = {
    {RuntimeState::kPending, "Pending"},     {RuntimeState::kRunning, "Running"},
    {RuntimeState::kSucceeded, "Succeeded"}, {RuntimeState::kSkipped, "Skipped"},
    {RuntimeState::kFailed, "Failed"},       {RuntimeState::kCanceling, "Terminating"},
    {RuntimeState::kCanceled, "Canceled"},   {RuntimeState::kPaused, "Paused"}};

std::string V1Status(RuntimeState s) { return std::string(NameIn(kV1Statuses, s, "")); }

std::string V1StorageState(const std::string& v2) {
  return v2 == "ARCHIVED" ? "STORAGESTATE_ARCHIVED" : "STORAGESTATE_AVAILABLE";
}

json Reference(const char* type, const std::string& id, const std::string& name,
               const char* relationship) {
  json ref = {{"key", {{"type", type}, {"id", id}}}, {"relationship", relationship}};
  if (!name.empty()) ref["name"] = name;
  return ref;
}

// A parameter value as v1 shows it: strings as they are, the rest as JSON.
std::string ParameterText(const json& v) { return v.is_string() ? v.get<std::string>() : v.dump(); }

// The pipeline's declared inputs as v1 parameters, defaults as values.
json SpecParameters(const json& spec) {
  json out = json::array();
  if (!spec.is_object()) return out;
  auto root = spec.find("root");
  if (root == spec.end() || !root->is_object()) return out;
  auto defs = root->find("inputDefinitions");
  if (defs == root->end() || !defs->is_object()) return out;
  auto params = defs->find("parameters");
  if (params == defs->end() || !params->is_object()) return out;
  for (const auto& [name, def] : params->items()) {
    json p = {{"name", name}};
    if (def.is_object() && def.contains("defaultValue"))
      p["value"] = ParameterText(def["defaultValue"]);
    out.push_back(std::move(p));
  }
  return out;
}

// A v1 string parameter converted to the type the pipeline declares.
Result<json> TypedParameter(const json& spec, const std::string& name, const std::string& value) {
  std::string type;
  if (spec.is_object()) {
    const json* def = &spec;
    for (const char* key : {"root", "inputDefinitions", "parameters"}) {
      if (!def->is_object() || !def->contains(key)) {
        def = nullptr;
        break;
      }
      def = &(*def)[key];
    }
    if (def && def->is_object() && def->contains(name) && (*def)[name].is_object()) {
      type = (*def)[name].value("parameterType", "");
    }
  }
  auto bad = [&](const char* what) {
    return Error{fmt::format("parameter '{}': '{}' is not {}", name, value, what), kHttpBadRequest};
  };
  if (type == "NUMBER_INTEGER") {
    int64_t v = 0;
    auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
    if (ec != std::errc() || end != value.data() + value.size()) return bad("an integer");
    return json(v);
  }
  if (type == "NUMBER_DOUBLE" || type == "BOOLEAN" || type == "LIST" || type == "STRUCT") {
    json v = ParseJson(value);
    if (v.is_discarded()) return bad("valid JSON for its type");
    if (type == "NUMBER_DOUBLE" && !v.is_number()) return bad("a number");
    if (type == "BOOLEAN" && !v.is_boolean()) return bad("true or false");
    return v;
  }
  return json(value);
}

json V1Version(const kfp::PipelineVersion& v) {
  json j = json::object();
  Put(j, "id", v.pipeline_version_id);
  Put(j, "name", v.name);
  Put(j, "created_at", v.created_at);
  j["parameters"] = SpecParameters(v.pipeline_spec);
  Put(j, "code_source_url", v.code_source_url);
  Put(j, "description", v.description);
  j["resource_references"] = json::array({Reference("PIPELINE", v.pipeline_id, "", "OWNER")});
  return j;
}

json V1Pipeline(const kfp::Pipeline& p, const kfp::PipelineVersion* latest) {
  json j = json::object();
  Put(j, "id", p.pipeline_id);
  Put(j, "created_at", p.created_at);
  Put(j, "name", p.name);
  Put(j, "description", p.description);
  if (latest) {
    j["parameters"] = SpecParameters(latest->pipeline_spec);
    j["default_version"] = V1Version(*latest);
  }
  return j;
}

json V1Experiment(const kfp::Experiment& e) {
  json j = json::object();
  Put(j, "id", e.experiment_id);
  Put(j, "name", e.display_name);
  Put(j, "description", e.description);
  Put(j, "created_at", e.created_at);
  j["storage_state"] = V1StorageState(e.storage_state);
  return j;
}

json V1Run(const kfp::Run& r) {
  json j = json::object();
  Put(j, "id", r.run_id);
  Put(j, "name", r.display_name);
  j["storage_state"] = V1StorageState(r.storage_state);
  Put(j, "description", r.description);
  json spec = json::object();
  Put(spec, "pipeline_id", r.pipeline_id);
  json params = json::array();
  if (r.runtime_config.parameters.is_object()) {
    for (const auto& [name, v] : r.runtime_config.parameters.items()) {
      params.push_back({{"name", name}, {"value", ParameterText(v)}});
    }
  }
  if (!params.empty()) spec["parameters"] = std::move(params);
  if (!r.pipeline_spec.is_null()) spec["pipeline_manifest"] = r.pipeline_spec.dump();
  j["pipeline_spec"] = std::move(spec);
  json refs = json::array();
  if (!r.experiment_id.empty())
    refs.push_back(Reference("EXPERIMENT", r.experiment_id, "", "OWNER"));
  if (!r.pipeline_version_reference_id.empty()) {
    refs.push_back(Reference("PIPELINE_VERSION", r.pipeline_version_reference_id, "", "CREATOR"));
  }
  j["resource_references"] = std::move(refs);
  Put(j, "service_account", r.service_account);
  Put(j, "created_at", r.created_at);
  Put(j, "scheduled_at", r.scheduled_at);
  Put(j, "finished_at", r.finished_at);
  Put(j, "status", V1Status(r.state));
  if (r.error) Put(j, "error", r.error->message);
  return j;
}

// What v1 GetRun returns beside the run: a workflow-shaped summary, since
// there is no Argo workflow behind the embedded engine. Its nodes are the
// tasks (Pod for a container, DAG for a group), which v1 clients read.
json V1Runtime(const kfp::Run& r) {
  json status = {{"phase", V1Status(r.state)}};
  Put(status, "startedAt", r.created_at);
  Put(status, "finishedAt", r.finished_at);
  if (r.error) status["message"] = r.error->message;
  json nodes = json::object();
  for (const auto& t : r.task_details) {
    std::string id = t.pod_name.empty() ? t.task_id : t.pod_name;
    json node = {{"id", id},
                 {"displayName", t.display_name},
                 {"type", t.child_tasks.empty() ? "Pod" : "DAG"},
                 {"phase", V1Status(t.state)}};
    Put(node, "startedAt", t.start_time);
    Put(node, "finishedAt", t.end_time);
    nodes[id] = std::move(node);
  }
  if (!nodes.empty()) status["nodes"] = std::move(nodes);
  return {{"workflow_manifest", json{{"status", status}}.dump()}};
}

// The spec, for parameter types: the inline manifest, or the referenced
// version (whose pipeline, or whose latest version, the run then names).
Result<json> V1RunSpec(store::Store& store, const std::string& manifest, kfp::Run& run) {
  if (!manifest.empty()) {
    auto parsed = ParseSpec(manifest, "pipeline_spec.pipeline_manifest");
    if (!parsed.ok()) return parsed.error();
    run.pipeline_spec = parsed->json;
    return parsed->json;
  }
  if (!run.pipeline_version_reference_id.empty()) {
    auto version = store.FindPipelineVersion(run.pipeline_version_reference_id);
    if (!version.ok()) return version.error();
    if (!run.pipeline_id.empty() && run.pipeline_id != version->pipeline_id) {
      return Error{fmt::format("pipeline version {} does not belong to pipeline {}",
                               version->pipeline_version_id, run.pipeline_id),
                   kHttpBadRequest};
    }
    run.pipeline_id = version->pipeline_id;
    return version->pipeline_spec;
  }
  if (!run.pipeline_id.empty()) {
    auto version = store.LatestPipelineVersion(run.pipeline_id);
    if (!version.ok()) return version.error();
    run.pipeline_version_reference_id = version->pipeline_version_id;
    return version->pipeline_spec;
  }
  return json();
}

// runtime_config as given, then v1's string parameters typed by the spec.
Status SetV1Parameters(const V1NewRun& request, const json& spec, kfp::Run& run) {
  run.runtime_config.parameters = json::object();
  const json& runtime_config = request.runtime_config;
  if (runtime_config.is_object()) {
    if (runtime_config.contains("parameters") && runtime_config["parameters"].is_object()) {
      run.runtime_config.parameters = runtime_config["parameters"];
    }
    run.runtime_config.pipeline_root = runtime_config.value("pipeline_root", "");
  }
  for (const auto& [name, value] : request.params) {
    auto typed = TypedParameter(spec, name, value);
    if (!typed.ok()) return typed.error();
    run.runtime_config.parameters[name] = std::move(*typed);
  }
  return Ok();
}

}  // namespace

http::Response Handlers::V1Healthz(const http::Request&, const Params&) {
  return JsonResponse({{"multi_user", multi_user_}});
}

http::Response Handlers::V1UploadPipeline(const http::Request& r, const Params&) {
  auto uploaded = UploadFromRequest(r);
  if (auto* refused = std::get_if<Response>(&uploaded)) return std::move(*refused);
  const auto& [pipeline, version] = std::get<0>(uploaded);
  return JsonResponse(V1Pipeline(pipeline, &version));
}

http::Response Handlers::V1ListPipelines(const http::Request& r, const Params&) {
  auto list = store_.ListPipelines(ListRequestFrom(r), NamespaceKey(r));
  if (!list.ok()) return ErrorResponse(list.error());
  return JsonResponse(ListBody("pipelines", *list, [&](const kfp::Pipeline& p) {
    auto latest = store_.LatestPipelineVersion(p.pipeline_id);
    return V1Pipeline(p, latest.ok() ? &*latest : nullptr);
  }));
}

http::Response Handlers::V1GetPipeline(const http::Request&, const Params& p) {
  auto pipeline = store_.GetPipeline(p.at("id"));
  if (!pipeline.ok()) return ErrorResponse(pipeline.error());
  auto latest = store_.LatestPipelineVersion(pipeline->pipeline_id);
  return JsonResponse(V1Pipeline(*pipeline, latest.ok() ? &*latest : nullptr));
}

http::Response Handlers::V1CreateExperiment(NewExperiment body) {
  if (body.experiment.display_name.empty()) {
    return ErrorResponse(400, "experiment name is required");
  }
  auto created = InsertNewExperiment(std::move(body.experiment));
  if (!created.ok()) return ErrorResponse(created.error());
  return JsonResponse(V1Experiment(*created));
}

http::Response Handlers::V1GetExperiment(const http::Request&, const Params& p) {
  auto e = store_.GetExperiment(p.at("id"));
  if (!e.ok()) return ErrorResponse(e.error());
  return JsonResponse(V1Experiment(*e));
}

http::Response Handlers::V1ListExperiments(const http::Request& r, const Params&) {
  auto list = store_.ListExperiments(ListRequestFrom(r), NamespaceKey(r));
  if (!list.ok()) return ErrorResponse(list.error());
  return JsonResponse(ListBody("experiments", *list, V1Experiment));
}

http::Response Handlers::V1CreateRun(V1NewRun request) {
  kfp::Run& run = request.run;
  auto spec = V1RunSpec(store_, request.manifest, run);
  if (!spec.ok()) return ErrorResponse(spec.error());
  if (Status s = SetV1Parameters(request, *spec, run); !s.ok()) return ErrorResponse(s.error());
  auto started = StartRun(std::move(run));
  if (!started.ok()) return ErrorResponse(started.error());
  return JsonResponse({{"run", V1Run(*started)}, {"pipeline_runtime", V1Runtime(*started)}});
}

http::Response Handlers::V1GetRun(const http::Request&, const Params& p) {
  auto run = store_.GetRun(p.at("run_id"));
  if (!run.ok()) return ErrorResponse(run.error());
  return JsonResponse({{"run", V1Run(*run)}, {"pipeline_runtime", V1Runtime(*run)}});
}

http::Response Handlers::V1ListRuns(const http::Request& r, const Params&) {
  std::string experiment_id;
  std::string type = r.Query("resource_reference_key.type");
  if (type == "EXPERIMENT") {
    experiment_id = r.Query("resource_reference_key.id");
  } else if (!type.empty() && type != "NAMESPACE") {
    return ErrorResponse(400, "runs can be listed by EXPERIMENT or NAMESPACE, not " + type);
  }
  auto list = store_.ListRuns(ListRequestFrom(r), experiment_id, NamespaceKey(r));
  if (!list.ok()) return ErrorResponse(list.error());
  return JsonResponse(ListBody("runs", *list, V1Run));
}

http::Response Handlers::V1DeleteRun(const http::Request& r, const Params& p) {
  return DeleteRun(r, {{"run_id", p.at("id")}});
}

// KFP's DeletePipelineV1 never cascades: a pipeline that still has versions
// (an upload makes one) is refused, and its versions go first, one by one.
http::Response Handlers::V1DeletePipeline(const http::Request&, const Params& p) {
  if (Status s = store_.DeletePipeline(p.at("id"), /*cascade=*/false); !s.ok()) {
    return ErrorResponse(s.error());
  }
  return JsonResponse(json::object());
}

// DELETE /apis/v1beta1/pipeline_versions/{version_id}: the version alone
// names it, as in KFP's DeletePipelineVersionV1.
http::Response Handlers::V1DeletePipelineVersion(const http::Request& r, const Params& p) {
  auto version = store_.FindPipelineVersion(p.at("version_id"));
  if (!version.ok()) return ErrorResponse(version.error());
  return DeletePipelineVersion(
      r, {{"pipeline_id", version->pipeline_id}, {"pipeline_version_id", p.at("version_id")}});
}

// GET /apis/v1beta1/pipeline_versions?resource_key.type=PIPELINE&resource_key.id=ID
http::Response Handlers::V1ListPipelineVersions(const http::Request& r, const Params&) {
  if (r.Query("resource_key.type") != "PIPELINE" || r.Query("resource_key.id").empty()) {
    return ErrorResponse(400,
                         "pipeline versions are listed by resource_key.type=PIPELINE and "
                         "resource_key.id");
  }
  const std::string id = r.Query("resource_key.id");
  if (auto pipeline = store_.GetPipeline(id); !pipeline.ok()) {
    return ErrorResponse(pipeline.error());
  }
  auto list = store_.ListPipelineVersions(id, ListRequestFrom(r));
  if (!list.ok()) return ErrorResponse(list.error());
  return JsonResponse(ListBody("versions", *list, V1Version));
}

http::Response Handlers::V1DeleteExperiment(const http::Request& r, const Params& p) {
  return DeleteExperiment(r, {{"experiment_id", p.at("id")}});
}

}  // namespace kfpbench::server
