#include "kfp/v1_model.h"

#include <fmt/format.h>

#include "kfp/client.h"
#include "util/json_reader.h"

namespace kfpbench::kfp::v1 {
namespace {

using nlohmann::json;

// Reads {"key": {"type", "id"}, "relationship"} entries.
template <typename Fn>
void ReadReferences(JsonReader& r, const char* name, Fn&& on_reference) {
  r.Array(name, [&](JsonReader& ref) {
    json key, ignored;
    ref.Object("key", key);
    if (!key.is_object()) return;
    std::string type = key.value("type", "");
    std::string id =
        key.contains("id") && key["id"].is_string() ? key["id"].get<std::string>() : "";
    on_reference(type, id);
  });
}

template <typename T>
Result<T> Finish(JsonReader& r, T value, const char* what) {
  if (Status s = r.Finish(); !s.ok()) {
    return Error{fmt::format("v1beta1 {}: {}", what, s.error().message)};
  }
  return value;
}

json Reference(const char* type, const std::string& id, const char* relationship) {
  return {{"key", {{"type", type}, {"id", id}}}, {"relationship", relationship}};
}

// Argo's status.nodes: one task per Pod node.
void ReadWorkflowTasks(const std::string& manifest, Run& run) {
  json wf = ParseJson(manifest);
  if (!wf.is_object() || !wf.contains("status") || !wf["status"].is_object()) return;
  const json& nodes = wf["status"].value("nodes", json::object());
  if (!nodes.is_object()) return;
  for (const auto& [id, node] : nodes.items()) {
    if (!node.is_object() || node.value("type", "") != "Pod") continue;
    PipelineTaskDetail task;
    task.run_id = run.run_id;
    task.task_id = id;
    task.pod_name = id;
    task.display_name = node.value("displayName", node.value("name", id));
    task.state = StateFromStatus(node.value("phase", "")).value_or(RuntimeState::kUnspecified);
    const json& pod = node;  // clang before 16 cannot capture a structured binding
    auto time = [&](const char* key, WallTime& out) {
      if (!pod.contains(key) || !pod[key].is_string()) return;
      if (auto t = ParseRfc3339(pod[key].get<std::string>()); t.ok()) out = *t;
    };
    time("startedAt", task.start_time);
    time("finishedAt", task.end_time);
    task.create_time = task.start_time;
    run.task_details.push_back(std::move(task));
  }
}

// The fields a v1 pipeline, version and experiment begin with.
void ReadV1Identity(JsonReader& r, std::string& id, std::string& name, std::string& description,
                    WallTime& created_at) {
  r.String("id", id);
  r.String("name", name);
  r.String("description", description);
  r.Time("created_at", created_at);
}

}  // namespace

std::optional<RuntimeState> StateFromStatus(std::string_view status) {
  if (status.empty() || status == "Pending") return RuntimeState::kPending;
  if (status == "Running") return RuntimeState::kRunning;
  if (status == "Succeeded" || status == "Completed") return RuntimeState::kSucceeded;
  if (status == "Skipped" || status == "Omitted") return RuntimeState::kSkipped;
  if (status == "Failed" || status == "Error") return RuntimeState::kFailed;
  if (status == "Terminating") return RuntimeState::kCanceling;
  if (status == "Canceled" || status == "Cancelled" || status == "Terminated") {
    return RuntimeState::kCanceled;
  }
  if (status == "Paused") return RuntimeState::kPaused;
  return std::nullopt;
}

Result<Pipeline> PipelineFromJson(const json& j) {
  JsonReader r(j, "", false);
  Pipeline p;
  ReadV1Identity(r, p.pipeline_id, p.name, p.description, p.created_at);
  p.display_name = p.name;
  return Finish(r, std::move(p), "pipeline");
}

Result<PipelineVersion> PipelineVersionFromJson(const json& j) {
  JsonReader r(j, "", false);
  PipelineVersion v;
  ReadV1Identity(r, v.pipeline_version_id, v.name, v.description, v.created_at);
  r.String("code_source_url", v.code_source_url);
  json package;
  r.Object("package_url", package);
  if (package.is_object()) v.package_url = package.value("pipeline_url", "");
  ReadReferences(r, "resource_references", [&](const std::string& type, const std::string& id) {
    if (type == "PIPELINE") v.pipeline_id = id;
  });
  v.display_name = v.name;
  return Finish(r, std::move(v), "pipeline version");
}

Result<Experiment> ExperimentFromJson(const json& j) {
  JsonReader r(j, "", false);
  Experiment e;
  ReadV1Identity(r, e.experiment_id, e.display_name, e.description, e.created_at);
  std::string storage;
  r.String("storage_state", storage);
  e.storage_state = storage == "STORAGESTATE_ARCHIVED" ? "ARCHIVED" : "AVAILABLE";
  ReadReferences(r, "resource_references", [&](const std::string& type, const std::string& id) {
    if (type == "NAMESPACE") e.namespace_ = id;
  });
  return Finish(r, std::move(e), "experiment");
}

Result<Run> RunFromJson(const json& j, const json& runtime) {
  JsonReader r(j, "", false);
  Run run;
  std::string status, error, storage;
  r.String("id", run.run_id);
  r.String("name", run.display_name);
  r.String("description", run.description);
  r.String("storage_state", storage);
  r.String("service_account", run.service_account);
  r.Time("created_at", run.created_at);
  r.Time("scheduled_at", run.scheduled_at);
  r.Time("finished_at", run.finished_at);  // v1 says 1970-01-01T00:00:00Z until then
  r.String("status", status);
  r.String("error", error);
  r.Message("pipeline_spec", [&](JsonReader& spec) {
    spec.String("pipeline_id", run.pipeline_id);
    std::string manifest;
    spec.String("pipeline_manifest", manifest);
    if (!manifest.empty()) {
      run.pipeline_spec = ParseJson(manifest);
      if (run.pipeline_spec.is_discarded()) run.pipeline_spec = nullptr;
    }
    run.runtime_config.parameters = json::object();
    spec.Array("parameters", [&](JsonReader& p) {
      std::string name, value;
      p.String("name", name);
      p.String("value", value);
      if (!name.empty()) run.runtime_config.parameters[name] = value;
    });
  });
  ReadReferences(r, "resource_references", [&](const std::string& type, const std::string& id) {
    if (type == "EXPERIMENT") run.experiment_id = id;
    if (type == "PIPELINE_VERSION") run.pipeline_version_reference_id = id;
  });
  run.storage_state = storage == "STORAGESTATE_ARCHIVED" ? "ARCHIVED" : "AVAILABLE";
  auto state = StateFromStatus(status);
  if (!state) {
    return Error{fmt::format("v1beta1 run {}: unknown status \"{}\"", run.run_id, status)};
  }
  run.state = *state;
  if (!error.empty()) run.error = RpcStatus{0, error, json::array()};
  if (runtime.is_object() && runtime.contains("workflow_manifest") &&
      runtime["workflow_manifest"].is_string()) {
    ReadWorkflowTasks(runtime["workflow_manifest"].get<std::string>(), run);
  }
  return Finish(r, std::move(run), "run");
}

Result<Run> RunDetailFromJson(const json& j) {
  if (!j.is_object() || !j.contains("run")) {
    return Error{"v1beta1 run: the answer has no \"run\" object"};
  }
  return RunFromJson(j["run"], j.value("pipeline_runtime", json()));
}

json ExperimentBody(std::string_view name, std::string_view description,
                    const std::string& namespace_) {
  json body = {{"name", name}, {"description", description}};
  if (!namespace_.empty()) {
    body["resource_references"] = json::array({Reference("NAMESPACE", namespace_, "OWNER")});
  }
  return body;
}

json RunBody(const RunCreate& request) {
  json spec = json::object();
  if (!request.pipeline_spec.is_null()) spec["pipeline_manifest"] = request.pipeline_spec.dump();
  if (!request.pipeline_id.empty() && request.pipeline_version_id.empty()) {
    spec["pipeline_id"] = request.pipeline_id;
  }
  // v1 parameters are strings; the server converts them to the declared type.
  json params = json::array();
  if (request.parameters.is_object()) {
    for (const auto& [name, value] : request.parameters.items()) {
      params.push_back(
          {{"name", name}, {"value", value.is_string() ? value.get<std::string>() : value.dump()}});
    }
  }
  if (!params.empty()) spec["parameters"] = std::move(params);
  json body = {{"name", request.display_name}, {"pipeline_spec", std::move(spec)}};
  if (!request.description.empty()) body["description"] = request.description;
  json refs = json::array();
  if (!request.experiment_id.empty()) {
    refs.push_back(Reference("EXPERIMENT", request.experiment_id, "OWNER"));
  }
  if (!request.pipeline_version_id.empty()) {
    refs.push_back(Reference("PIPELINE_VERSION", request.pipeline_version_id, "CREATOR"));
  }
  if (!refs.empty()) body["resource_references"] = std::move(refs);
  return body;
}

std::string FilterFromV2(const std::string& filter) {
  auto parsed = ParseJsonText(filter);
  if (!parsed.ok()) return filter;  // the server says what is wrong with it
  nlohmann::json& j = *parsed;
  auto predicates = j.is_object() ? j.find("predicates") : j.end();
  if (predicates == j.end() || !predicates->is_array()) return filter;
  for (auto& p : *predicates) {
    auto op = p.is_object() ? p.find("operation") : p.end();
    if (op == p.end() || p.contains("op")) continue;
    nlohmann::json value = *op == "OPERATION_UNSPECIFIED" ? nlohmann::json("UNKNOWN") : *op;
    p.erase(op);
    p["op"] = std::move(value);
  }
  return DumpJson(j);
}

}  // namespace kfpbench::kfp::v1
