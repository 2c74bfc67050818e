// Runs (v2beta1 RunService).
#include <map>

#include <fmt/format.h>

#include "engine/task_record_json.h"
#include "server/api_util.h"
#include "server/handlers.h"

namespace kfpbench::server {

using nlohmann::json;

http::Response Handlers::CreateRun(const http::Request& r, const Params&) {
  auto body = ParseJsonBody(r);
  if (!body.ok()) return ErrorResponse(body.error());
  auto parsed = kfp::RunFromJson(*body, true);
  if (!parsed.ok()) return ErrorResponse(parsed.error());
  if (parsed->experiment_id.empty()) parsed->experiment_id = r.Query("experiment_id");
  auto run = StartRun(std::move(*parsed));
  if (!run.ok()) return ErrorResponse(run.error());
  return JsonResponse(kfp::ToJson(*run));
}

http::Response Handlers::ListRuns(const http::Request& r, const Params&) {
  auto list = store_.ListRuns(ListRequestFrom(r), r.Query("experiment_id"), r.Query("namespace"));
  if (!list.ok()) return ErrorResponse(list.error());
  return JsonResponse(ListBody("runs", *list, [](const auto& run) { return kfp::ToJson(run); }));
}

http::Response Handlers::GetRun(const http::Request&, const Params& p) {
  auto run = store_.GetRun(p.at("run_id"));
  if (!run.ok()) return ErrorResponse(run.error());
  return JsonResponse(kfp::ToJson(*run));
}

http::Response Handlers::DeleteRun(const http::Request&, const Params& p) {
  const std::string& id = p.at("run_id");
  auto run = store_.GetRun(id);
  if (!run.ok()) return ErrorResponse(run.error());
  // A run still executing is stopped first, as KFP deletes its workflow.
  if (!IsTerminal(run->state)) engine_.Terminate(id);
  if (Status s = store_.DeleteRun(id); !s.ok()) return ErrorResponse(s.error());
  return JsonResponse(json::object());
}

http::Response Handlers::ArchiveRun(const http::Request&, const Params& p) {
  if (Status s = store_.SetRunStorageState(p.at("run_id"), "ARCHIVED"); !s.ok()) {
    return ErrorResponse(s.error());
  }
  return JsonResponse(json::object());
}

http::Response Handlers::UnarchiveRun(const http::Request&, const Params& p) {
  const std::string& id = p.at("run_id");
  auto run = store_.GetRun(id);
  if (!run.ok()) return ErrorResponse(run.error());
  // KFP refuses while the experiment stays archived.
  if (auto e = store_.GetExperiment(run->experiment_id); e.ok() && e->storage_state == "ARCHIVED") {
    return ErrorResponse(400, fmt::format("run {} is in archived experiment {}; unarchive the "
                                          "experiment first",
                                          id, run->experiment_id));
  }
  if (Status s = store_.SetRunStorageState(id, "AVAILABLE"); !s.ok()) {
    return ErrorResponse(s.error());
  }
  return JsonResponse(json::object());
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
    auto record = engine::TaskRecordFromJson(json::parse(text, nullptr, false));
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
  engine::RunRequest request{id, std::move(*spec), std::move(params),
                             run->runtime_config.pipeline_root, std::move(keep)};
  if (Status s = engine_.Submit(std::move(request)); !s.ok()) {
    // Put the run back as it was.
    store::RunStatus previous{run->state, run->finished_at, run->error, run->state_history,
                              run->task_details};
    (void)store_.UpdateRunStatus(id, previous);
    (void)tracker_.WithPrefix(id, {}, true);
    Error e = s.error();
    if (e.code == 0) e.code = 400;
    return ErrorResponse(e);
  }
  return JsonResponse(json::object());
}

}  // namespace kfpbench::server
