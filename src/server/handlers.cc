#include "server/handlers.h"

#include <fmt/format.h>

#include "server/api_util.h"
#include "server/pod_metrics.h"
#include "server/scheduler.h"
#include "util/ids.h"

namespace kfpbench::server {
namespace {

using http::Method;
using nlohmann::json;

constexpr const char* kDefaultExperiment = "Default";

}  // namespace

Handlers::Handlers(store::Store& store, engine::Engine& engine, RunTracker& tracker,
                   const ApiMetrics& metrics)
    : store_(store), engine_(engine), tracker_(tracker), metrics_(metrics) {}

Status Handlers::Init() {
  json filter = {
      {"predicates",
       {{{"key", "display_name"}, {"operation", "EQUALS"}, {"string_value", kDefaultExperiment}}}}};
  auto existing = store_.ListExperiments({"1", "", "", filter.dump()}, "");
  if (!existing.ok()) return existing.error();
  if (!existing->items.empty()) {
    default_experiment_id_ = existing->items.front().experiment_id;
    return Ok();
  }
  kfp::Experiment e;
  e.experiment_id = NewUuid();
  e.display_name = kDefaultExperiment;
  e.description = "All runs created without specifying an experiment will be grouped here.";
  e.created_at = WallClock::now();
  e.storage_state = "AVAILABLE";
  default_experiment_id_ = e.experiment_id;
  return store_.InsertExperiment(e);
}

// The route table: one line per endpoint, kept as one list (not split by
// resource) so that every path the server answers is read in one place.
void Handlers::Register(http::Router& router) {
  auto add = [&](Method m, const std::string& pattern, auto method, const char* name) {
    router.Add(
        m, pattern,
        [this, method](const http::Request& r, const Params& p) { return (this->*method)(r, p); },
        name);
  };
  // Routes whose body create_requests.h reads; Backend::Handle reads it
  // itself (to authorize it) and calls Create.
  auto add_create = [&](Method m, const std::string& pattern, const char* name) {
    router.Add(
        m, pattern,
        [this, name](const http::Request& r, const Params&) {
          auto body = ReadCreateBody(name, r);
          if (auto* refused = std::get_if<http::Response>(&body)) return std::move(*refused);
          return Create(std::move(std::get<CreateBody>(body)));
        },
        name);
  };
  using H = Handlers;
  const std::string api = "/apis/v2beta1";
  add(Method::kGet, "/metrics", &H::Metrics, "GetMetrics");
  add(Method::kGet, api + "/healthz", &H::Healthz, "GetHealthz");

  add(Method::kPost, api + "/pipelines/upload", &H::UploadPipeline, "UploadPipeline");
  add(Method::kPost, api + "/pipelines/upload_version", &H::UploadPipelineVersion,
      "UploadPipelineVersion");
  add_create(Method::kPost, api + "/pipelines/create", "CreatePipelineAndVersion");
  add_create(Method::kPost, api + "/pipelines", "CreatePipeline");
  add(Method::kGet, api + "/pipelines", &H::ListPipelines, "ListPipelines");
  add(Method::kGet, api + "/pipelines/names/{name}", &H::GetPipelineByName, "GetPipelineByName");
  add(Method::kGet, api + "/pipelines/{pipeline_id}", &H::GetPipeline, "GetPipeline");
  add(Method::kPatch, api + "/pipelines/{pipeline_id}", &H::UpdatePipeline, "UpdatePipeline");
  add(Method::kDelete, api + "/pipelines/{pipeline_id}", &H::DeletePipeline, "DeletePipeline");
  add(Method::kGet, api + "/pipelines/{pipeline_id}/versions", &H::ListPipelineVersions,
      "ListPipelineVersions");
  add(Method::kPost, api + "/pipelines/{pipeline_id}/versions", &H::CreatePipelineVersion,
      "CreatePipelineVersion");
  const std::string version = api + "/pipelines/{pipeline_id}/versions/{pipeline_version_id}";
  add(Method::kGet, version, &H::GetPipelineVersion, "GetPipelineVersion");
  add(Method::kPatch, version, &H::UpdatePipelineVersion, "UpdatePipelineVersion");
  add(Method::kDelete, version, &H::DeletePipelineVersion, "DeletePipelineVersion");

  add_create(Method::kPost, api + "/experiments", "CreateExperiment");
  add(Method::kGet, api + "/experiments", &H::ListExperiments, "ListExperiments");
  add(Method::kGet, api + "/experiments/{experiment_id}", &H::GetExperiment, "GetExperiment");
  add(Method::kDelete, api + "/experiments/{experiment_id}", &H::DeleteExperiment,
      "DeleteExperiment");
  add(Method::kPost, api + "/experiments/{experiment_id}:archive", &H::ArchiveExperiment,
      "ArchiveExperiment");
  add(Method::kPost, api + "/experiments/{experiment_id}:unarchive", &H::UnarchiveExperiment,
      "UnarchiveExperiment");

  add_create(Method::kPost, api + "/runs", "CreateRun");
  add(Method::kGet, api + "/runs", &H::ListRuns, "ListRuns");
  add(Method::kGet, api + "/runs/{run_id}", &H::GetRun, "GetRun");
  add(Method::kDelete, api + "/runs/{run_id}", &H::DeleteRun, "DeleteRun");
  add(Method::kPost, api + "/runs/{run_id}:archive", &H::ArchiveRun, "ArchiveRun");
  add(Method::kPost, api + "/runs/{run_id}:unarchive", &H::UnarchiveRun, "UnarchiveRun");
  add(Method::kPost, api + "/runs/{run_id}:terminate", &H::TerminateRun, "TerminateRun");
  add(Method::kPost, api + "/runs/{run_id}:retry", &H::RetryRun, "RetryRun");
  add(Method::kGet, api + "/runs/{run_id}/nodes/{node_id}/artifacts/{artifact_name}:read",
      &H::ReadArtifact, "ReadArtifact");

  add_create(Method::kPost, api + "/recurringruns", "CreateRecurringRun");
  add(Method::kGet, api + "/recurringruns", &H::ListRecurringRuns, "ListRecurringRuns");
  add(Method::kGet, api + "/recurringruns/{recurring_run_id}", &H::GetRecurringRun,
      "GetRecurringRun");
  add(Method::kDelete, api + "/recurringruns/{recurring_run_id}", &H::DeleteRecurringRun,
      "DeleteRecurringRun");
  add(Method::kPost, api + "/recurringruns/{recurring_run_id}:enable", &H::EnableRecurringRun,
      "EnableRecurringRun");
  add(Method::kPost, api + "/recurringruns/{recurring_run_id}:disable", &H::DisableRecurringRun,
      "DisableRecurringRun");

  const std::string v1 = "/apis/v1beta1";
  add(Method::kGet, v1 + "/healthz", &H::V1Healthz, "V1GetHealthz");
  add(Method::kPost, v1 + "/pipelines/upload", &H::V1UploadPipeline, "V1UploadPipeline");
  add(Method::kGet, v1 + "/pipelines", &H::V1ListPipelines, "V1ListPipelines");
  add(Method::kGet, v1 + "/pipelines/{id}", &H::V1GetPipeline, "V1GetPipeline");
  add_create(Method::kPost, v1 + "/experiments", "V1CreateExperiment");
  add(Method::kGet, v1 + "/experiments", &H::V1ListExperiments, "V1ListExperiments");
  add(Method::kGet, v1 + "/experiments/{id}", &H::V1GetExperiment, "V1GetExperiment");
  add_create(Method::kPost, v1 + "/runs", "V1CreateRun");
  add(Method::kGet, v1 + "/runs", &H::V1ListRuns, "V1ListRuns");
  add(Method::kGet, v1 + "/runs/{run_id}", &H::V1GetRun, "V1GetRun");
  add(Method::kGet, v1 + "/runs/{run_id}/nodes/{node_id}/artifacts/{artifact_name}:read",
      &H::ReadArtifact, "V1ReadArtifact");
  add(Method::kDelete, v1 + "/runs/{id}", &H::V1DeleteRun, "V1DeleteRun");
  add(Method::kDelete, v1 + "/pipelines/{id}", &H::V1DeletePipeline, "V1DeletePipeline");
  add(Method::kGet, v1 + "/pipeline_versions", &H::V1ListPipelineVersions,
      "V1ListPipelineVersions");
  add(Method::kDelete, v1 + "/pipeline_versions/{version_id}", &H::V1DeletePipelineVersion,
      "V1DeletePipelineVersion");
  add(Method::kDelete, v1 + "/experiments/{id}", &H::V1DeleteExperiment, "V1DeleteExperiment");
}

http::Response Handlers::Create(CreateBody body) {
  return std::visit(
      [this](auto&& b) -> http::Response {
        using T = std::decay_t<decltype(b)>;
        if constexpr (std::is_same_v<T, NewRun>) return CreateRun(std::move(b));
        if constexpr (std::is_same_v<T, NewRecurringRun>) return CreateRecurringRun(std::move(b));
        if constexpr (std::is_same_v<T, NewExperiment>) {
          return b.v1 ? V1CreateExperiment(std::move(b)) : CreateExperiment(std::move(b));
        }
        if constexpr (std::is_same_v<T, V1NewRun>) return V1CreateRun(std::move(b));
        if constexpr (std::is_same_v<T, NewPipeline>) return CreatePipeline(std::move(b));
        if constexpr (std::is_same_v<T, NewPipelineAndVersion>) {
          return CreatePipelineAndVersion(std::move(b));
        }
      },
      std::move(body));
}

void Handlers::WakeScheduler() {
  if (scheduler_) scheduler_->Wake();
}

http::Response Handlers::Healthz(const http::Request&, const Params&) {
  // multi_user is written even though false: clients branch on it.
  json body = kfp::ToJson(kfp::Healthz{multi_user_, "database"});
  body["multi_user"] = multi_user_;
  return JsonResponse(body);
}

http::Response Handlers::Metrics(const http::Request&, const Params&) {
  std::string out = metrics_.Render();
  auto counts = store_.CountRunsByState();
  if (!counts.ok()) return ErrorResponse(counts.error());
  // Every state, zeros included, so that a series never disappears.
  std::vector<std::pair<std::string, double>> by_state;
  for (auto s : {RuntimeState::kPending, RuntimeState::kRunning, RuntimeState::kSucceeded,
                 RuntimeState::kSkipped, RuntimeState::kFailed, RuntimeState::kCanceling,
                 RuntimeState::kCanceled, RuntimeState::kPaused}) {
    double n = 0;
    for (const auto& [name, count] : *counts) {
      if (name == RuntimeStateName(s)) n = static_cast<double>(count);
    }
    by_state.emplace_back(std::string(RuntimeStateName(s)), n);
  }
  out += RenderGauge("kfpbench_runs", "Runs stored, by state.", "state", by_state);
  out += RenderGauge("kfpbench_pending_tasks",
                     "Container tasks of runs in flight that are not running yet.", "",
                     {{"", static_cast<double>(tracker_.PendingTasks())}});
  std::vector<std::pair<std::string, double>> nodes;
  for (const auto& [node, n] : tracker_.RunningTasksByNode()) {
    nodes.emplace_back(node, static_cast<double>(n));
  }
  out += RenderGauge("kfpbench_node_running_tasks", "Container tasks running, by node.", "node",
                     nodes);
  // Per-pod series name every namespace's pods (after their pipelines);
  // in multi-user mode any caller may read /metrics, as KFP's, so it shows
  // only totals there.
  if (pod_metrics_ && !multi_user_) out += pod_metrics_->Render();
  return http::Response::Text(200, std::move(out), "text/plain; version=0.0.4; charset=utf-8");
}

Result<std::shared_ptr<const ir::PipelineSpec>> Handlers::SpecForVersion(
    const kfp::PipelineVersion& version) {
  {
    std::lock_guard lock(cache_mu_);
    auto it = spec_cache_.find(version.pipeline_version_id);
    if (it != spec_cache_.end()) return it->second;
  }
  auto spec = ir::ParsePipelineSpecJson(version.pipeline_spec);
  if (!spec.ok()) {
    return Error{fmt::format("pipeline version {} has an invalid spec: {}",
                             version.pipeline_version_id, spec.error().message),
                 400};
  }
  auto shared = std::make_shared<const ir::PipelineSpec>(std::move(*spec));
  std::lock_guard lock(cache_mu_);
  spec_cache_.emplace(version.pipeline_version_id, shared);
  return shared;
}

Result<std::shared_ptr<const ir::PipelineSpec>> Handlers::SpecForRun(const kfp::Run& run) {
  if (!run.pipeline_spec.is_null()) {
    auto s = ir::ParsePipelineSpecJson(run.pipeline_spec);
    if (!s.ok()) return Error{"invalid pipeline_spec: " + s.error().message, kHttpBadRequest};
    return std::make_shared<const ir::PipelineSpec>(std::move(*s));
  }
  auto version = store_.GetPipelineVersion(run.pipeline_id, run.pipeline_version_reference_id);
  if (!version.ok()) return version.error();
  return SpecForVersion(*version);
}

Result<kfp::Run> Handlers::StartRun(kfp::Run run, std::optional<WallTime> fire) {
  if (run.display_name.empty()) return Error{"run display_name is required", kHttpBadRequest};
  // KFP runs a run that names no service account as its default one
  // (template.go, setDefaultServiceAccount) and CreateRun reads the name back
  // from the workflow (resource_manager.go), so GetRun shows it.
  if (run.service_account.empty()) run.service_account = "pipeline-runner";
  std::shared_ptr<const ir::PipelineSpec> spec;
  if (!run.pipeline_spec.is_null()) {
    auto s = SpecForRun(run);
    if (!s.ok()) return s.error();
    spec = std::move(*s);
    run.pipeline_id.clear();
    run.pipeline_version_reference_id.clear();
  } else {
    if (run.pipeline_version_reference_id.empty()) {
      run.pipeline_version_reference_id = run.pipeline_version_id;  // deprecated field
    }
    if (run.pipeline_id.empty()) {
      return Error{"either pipeline_spec or pipeline_version_reference.pipeline_id must be set",
                   400};
    }
    auto version =
        run.pipeline_version_reference_id.empty()
            ? store_.LatestPipelineVersion(run.pipeline_id)
            : store_.GetPipelineVersion(run.pipeline_id, run.pipeline_version_reference_id);
    if (!version.ok()) return version.error();
    run.pipeline_version_reference_id = version->pipeline_version_id;
    auto s = SpecForVersion(*version);
    if (!s.ok()) return s.error();
    spec = std::move(*s);
  }
  run.pipeline_version_id.clear();

  if (run.experiment_id.empty()) {
    run.experiment_id = default_experiment_id_;
  } else if (auto e = store_.GetExperiment(run.experiment_id); !e.ok()) {
    return e.error();
  }

  WallTime now = WallClock::now();
  run.run_id = NewUuid();
  run.created_at = now;
  run.scheduled_at = fire ? *fire : now;
  run.finished_at = {};
  run.storage_state = "AVAILABLE";
  run.state = RuntimeState::kPending;
  run.error.reset();
  run.task_details.clear();
  run.state_history = {{now, RuntimeState::kPending, std::nullopt}};
  if (run.runtime_config.parameters.is_null()) run.runtime_config.parameters = json::object();
  if (Status s = store_.InsertRun(run, fire); !s.ok()) return s.error();

  engine::RunRequest request;
  request.run_id = run.run_id;
  request.spec = spec;
  request.parameters = run.runtime_config.parameters;
  request.pipeline_root = run.runtime_config.pipeline_root;
  request.display_name = run.display_name;
  request.created_at = run.created_at;
  request.scheduled_at = run.scheduled_at;
  if (Status s = engine_.Submit(std::move(request)); !s.ok()) {
    Error e = s.error();
    if (e.code == 0) e.code = kHttpBadRequest;
    if (!fire) {
      (void)store_.DeleteRun(run.run_id);
      return e;
    }
    // A scheduled run stays, FAILED with the reason, so that the schedule
    // moves on and its owner can see why.
    store::RunStatus failed;
    failed.state = RuntimeState::kFailed;
    failed.finished_at = now;
    failed.error = kfp::RpcStatus{static_cast<int>(kfp::GrpcCode::kInvalidArgument), e.message, {}};
    failed.state_history = run.state_history;
    failed.state_history.push_back({now, RuntimeState::kFailed, failed.error});
    (void)store_.UpdateRunStatus(run.run_id, failed);
  }
  return run;
}

Status Handlers::StartScheduledRun(const kfp::RecurringRun& r, WallTime fire) {
  kfp::Run run;
  run.display_name = fmt::format(
      "{}-{}", r.display_name,
      std::chrono::duration_cast<std::chrono::seconds>(fire.time_since_epoch()).count());
  run.description = r.description;
  run.experiment_id = r.experiment_id;
  run.pipeline_spec = r.pipeline_spec;
  run.pipeline_id = r.pipeline_id;
  run.pipeline_version_reference_id = r.pipeline_version_reference_id;
  run.runtime_config = r.runtime_config;
  run.service_account = r.service_account;
  run.recurring_run_id = r.recurring_run_id;
  auto started = StartRun(std::move(run), fire);
  if (!started.ok()) return started.error();
  return Ok();
}

}  // namespace kfpbench::server
