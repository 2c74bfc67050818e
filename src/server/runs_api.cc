// Runs (v2beta1 RunService).
#include <map>

#include <fmt/format.h>

#include "engine/task_record_json.h"
#include "server/api_util.h"
#include "server/artifact_archive.h"
#include "server/handlers.h"
#include "util/json_reader.h"

namespace kfpbench::server {

using nlohmann::json;

http::Response Handlers::CreateRun(NewRun body) {
  auto run = StartRun(std::move(body.run));
  if (!run.ok()) return ErrorResponse(run.error());
  return JsonResponse(kfp::ToResponseJson(*run));
}

http::Response Handlers::ListRuns(const http::Request& r, const Params&) {
  return ListResponse(
      "runs", store_.ListRuns(ListRequestFrom(r), r.Query("experiment_id"), r.Query("namespace")));
}

http::Response Handlers::GetRun(const http::Request&, const Params& p) {
  return ResourceResponse(store_.GetRun(p.at("run_id")));
}

http::Response Handlers::DeleteRun(const http::Request&, const Params& p) {
  const std::string& id = p.at("run_id");
  auto run = store_.GetRun(id);
  if (!run.ok()) return ErrorResponse(run.error());
  // A run still executing is stopped first, as KFP deletes its workflow.
  if (!IsTerminal(run->state)) engine_.Terminate(id);
  return EmptyResponse(store_.DeleteRun(id));
}

http::Response Handlers::ArchiveRun(const http::Request&, const Params& p) {
  return EmptyResponse(store_.SetRunStorageState(p.at("run_id"), "ARCHIVED"));
}

http::Response Handlers::UnarchiveRun(const http::Request&, const Params& p) {
  const std::string& id = p.at("run_id");
  auto run = store_.GetRun(id);
  if (!run.ok()) return ErrorResponse(run.error());
  // KFP refuses while the experiment stays archived (resource_manager.go,
  // UnarchiveRun: a FailedPreconditionError, 400).
  if (auto e = store_.GetExperiment(run->experiment_id); e.ok() && e->storage_state == "ARCHIVED") {
    return ErrorResponse(400, kfp::GrpcCode::kFailedPrecondition,
                         fmt::format("Failed to unarchive run {} as experiment {} must be "
                                     "un-archived first",
                                     id, run->experiment_id));
  }
  return EmptyResponse(store_.SetRunStorageState(id, "AVAILABLE"));
}

http::Response Handlers::TerminateRun(const http::Request&, const Params& p) {
  const std::string& id = p.at("run_id");
  auto run = store_.GetRun(id);
  if (!run.ok()) return ErrorResponse(run.error());
  // The engine reports CANCELING, then CANCELED once every task stopped. A
  // run already finished stays as it is.
  if (!IsTerminal(run->state)) engine_.Terminate(id);
  return JsonResponse(json::object());
}

http::Response Handlers::RetryRun(const http::Request&, const Params& p) {
  const std::string& id = p.at("run_id");
  auto run = store_.GetRun(id);
  if (!run.ok()) return ErrorResponse(run.error());
  if (run->state != RuntimeState::kFailed && run->state != RuntimeState::kCanceled) {
    return ErrorResponse(400, fmt::format("run {} is {}; only FAILED or CANCELED runs can be "
                                          "retried",
                                          id, RuntimeStateName(run->state)));
  }
  auto spec = SpecForRun(*run);
  if (!spec.ok()) return ErrorResponse(spec.error());
  // Argo's retry, which KFP's is: the tasks that succeeded stay as they were
  // (same ids, times, outputs), the failed and the not-run ones run again.
  auto kept = store_.GetRetryTasks(id);
  if (!kept.ok()) return ErrorResponse(kept.error());
  std::map<std::string, engine::TaskRecord> keep;
  for (const auto& [key, text] : *kept) {
    auto record = engine::TaskRecordFromJson(ParseJson(text));
    if (!record.ok()) {
      return ErrorResponse(
          500, fmt::format("run {}: stored task {}: {}", id, key, record.error().message));
    }
    keep.emplace(key, std::move(*record));
  }
  // Same run id, back to PENDING, history kept: the engine's new history is
  // appended to the old one.
  WallTime now = WallClock::now();
  tracker_.SetHistoryPrefix(id, run->state_history);
  store::RunStatus pending;
  pending.state = RuntimeState::kPending;
  pending.state_history = run->state_history;
  pending.state_history.push_back({now, RuntimeState::kPending, std::nullopt});
  if (Status s = store_.UpdateRunStatus(id, pending); !s.ok()) return ErrorResponse(s.error());
  json params =
      run->runtime_config.parameters.is_null() ? json::object() : run->runtime_config.parameters;
  engine::RunRequest request;
  request.run_id = id;
  request.spec = std::move(*spec);
  request.parameters = std::move(params);
  request.pipeline_root = run->runtime_config.pipeline_root;
  request.keep = std::move(keep);
  request.display_name = run->display_name;
  request.created_at = run->created_at;
  request.scheduled_at = run->scheduled_at;
  if (Status s = engine_.Submit(std::move(request)); !s.ok()) {
    // Put the run back as it was.
    store::RunStatus previous{run->state, run->finished_at, run->error, run->state_history,
                              run->task_details};
    (void)store_.UpdateRunStatus(id, previous);
    (void)tracker_.WithPrefix(id, {}, true);
    Error e = s.error();
    if (e.code == 0) e.code = kHttpBadRequest;
    return ErrorResponse(e);
  }
  return JsonResponse(json::object());
}

// run_artifact_server.go's ReadArtifact: {"data": "<base64>"} of what the
// object store holds for an Argo node's artifact, a .tgz. Here the node is
// a task (its task id or pod name), the artifact one of its output
// artifacts or "main-logs" (its log, as Argo names it), and the .tgz is made
// from what the step wrote. Tasks kept for :retry (those that succeeded)
// are the ones whose files are known; errors are in KFP's {error_message,
// error_details} shape. Only what a task of this run wrote is served: an
// importer's artifact, or a cached task's from another run, is not found.
http::Response Handlers::ReadArtifact(const http::Request&, const Params& p) {
  auto error = [](int status, const std::string& message) {
    return PlainHttpError(status, message, message);
  };
  const std::string& run_id = p.at("run_id");
  const std::string& node_id = p.at("node_id");
  const std::string& name = p.at("artifact_name");
  if (auto run = store_.GetRun(run_id); !run.ok())
    return error(run.error().code, run.error().message);
  auto kept = store_.GetRetryTasks(run_id);
  if (!kept.ok()) return error(500, kept.error().message);
  std::string path;
  for (const auto& [key, text] : *kept) {
    auto record = engine::TaskRecordFromJson(ParseJson(text));
    if (!record.ok() || (record->task_id != node_id && record->pod_name != node_id)) continue;
    if (name == "main-logs") {
      path = record->log_path;
      continue;
    }
    const json artifacts = record->outputs.value("artifacts", json::object());
    if (auto list = artifacts.find(name);
        list != artifacts.end() && list->is_array() && !list->empty() && (*list)[0].is_object()) {
      path = (*list)[0].value("path", "");
    }
  }
  auto not_found = [&] {
    return error(kHttpNotFound, fmt::format("artifact not found: runs/{}/nodes/{}/artifacts/{}",
                                            run_id, node_id, name));
  };
  if (path.empty()) return not_found();
  auto archive = TarGzOf(path, work_root_ / run_id, kMaxUploadBytes);
  if (!archive.ok()) {
    if (archive.error().NotFound()) return not_found();
    return error(archive.error().code >= 400 ? archive.error().code : 500, archive.error().message);
  }
  return http::Response::Json(200, "{\"data\":\"" + Base64(*archive) + "\"}");
}

}  // namespace kfpbench::server
