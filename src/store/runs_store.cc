// Runs: insert, status updates from the engine, reads, lists, archiving and
// the recovery of runs in flight when the previous server died.
#include <fmt/format.h>

#include "store/store.h"
#include "store/store_internal.h"
#include "util/json_reader.h"

namespace kfpbench::store {
namespace internal {

using nlohmann::json;

// KFP's runAPIToModelFieldMap (backend/src/apiserver/model/run.go) and its
// "metric:<name>" sort. The embedded backend stores no run metrics, so every
// run's metric is the same (KFP: NULL for a run without it) and the order
// falls to the id.
const Listable& RunListable() {
  static const Listable listable{"Run",
                                 {Id("run_id"),
                                  DisplayName(),
                                  Time("created_at"),
                                  Time("finished_at"),
                                  Text("description"),
                                  Time("scheduled_at"),
                                  Text("storage_state"),
                                  // v1's "status" (KFP's Conditions column) holds the run's state.
                                  Text({"status"}, "state"),
                                  Text("namespace"),
                                  Text("experiment_id"),
                                  Text("state"),
                                  InJson("state_history", "status"),
                                  // KFP's PipelineRuntimeManifest (the Argo workflow); here the
                                  // run's status document is the nearest thing.
                                  Text({"runtime_details"}, "status"),
                                  Text("recurring_run_id"),
                                  // abs(0), not 0: a bare integer in ORDER BY names a column.
                                  {{"metric:"}, "abs(0)", FieldType::kInt, FieldKind::kSortPrefix}},
                                 "created_at",
                                 "id"};
  return listable;
}

// Runs one list query: total under the filter, then one page of rows after
// the cursor. `read` turns a row into an item and returns its sort value.
const char* const kRunColumns =
    "id, experiment_id, display_name, description, pipeline_id, pipeline_version_id, "
    "pipeline_spec, runtime_config, service_account, storage_state, state, created_at_ns, "
    "scheduled_at_ns, finished_at_ns, recurring_run_id, status";
kfp::Run ReadRun(const Statement& s) {
  kfp::Run r;
  r.run_id = s.Text(0);
  r.experiment_id = s.Text(1);
  r.display_name = s.Text(2);
  r.description = s.Text(3);
  r.pipeline_id = s.Text(4);
  r.pipeline_version_reference_id = s.Text(5);
  if (!s.IsNull(6)) r.pipeline_spec = ParseJson(s.Text(6));
  if (r.pipeline_spec.is_discarded()) r.pipeline_spec = nullptr;
  json rc = ParseJson(s.Text(7));
  if (rc.is_object()) {
    if (rc.contains("parameters")) r.runtime_config.parameters = rc["parameters"];
    r.runtime_config.pipeline_root = rc.value("pipeline_root", "");
  }
  r.service_account = s.Text(8);
  r.storage_state = s.Text(9);
  r.state = ParseRuntimeState(s.Text(10)).value_or(RuntimeState::kUnspecified);
  r.created_at = FromNs(s.Int(11));
  if (int64_t t = s.Int(12)) r.scheduled_at = FromNs(t);
  if (int64_t t = s.Int(13)) r.finished_at = FromNs(t);
  r.recurring_run_id = s.Text(14);
  // The changing part is stored in the API's own JSON form.
  auto status = kfp::RunFromJson(ParseJson(s.Text(15)), false);
  if (status.ok()) {
    r.error = std::move(status->error);
    r.state_history = std::move(status->state_history);
    r.task_details = std::move(status->task_details);
  }
  return r;
}

const Table<kfp::Run> kRuns{"runs", kRunColumns, 16, ReadRun, &kfp::Run::run_id, "run"};

std::string StatusJson(const RunStatus& status) {
  kfp::Run partial;
  partial.error = status.error;
  partial.state_history = status.state_history;
  partial.task_details = status.task_details;
  // A task's error holds what its step printed: written, never thrown on.
  return DumpJson(kfp::ToJson(partial));
}

}  // namespace internal

using namespace internal;  // NOLINT: this file is the store
using nlohmann::json;

namespace {

// A run's status as the engine reports it, and the end of runs in flight.
constexpr const char* kUpdateStatus =
    "UPDATE runs SET state = ?, finished_at_ns = ?, status = ? WHERE id = ?";

// total_size from run_counts, or nothing when the filter names a column the
// counts do not have.
Result<std::optional<int64_t>> CountFromRunCounts(
    Database& db, const std::string& experiment_id,
    const std::vector<std::pair<std::string, SqlValue>>& equals) {
  Where where;
  if (!experiment_id.empty()) where.Add("experiment_id = ?", experiment_id);
  for (const auto& [column, value] : equals) {
    if (column != "state" && column != "storage_state" && column != "experiment_id") {
      return std::optional<int64_t>();
    }
    where.Add(column + " = ?", value);
  }
  auto stmt = db.Prepare("SELECT COALESCE(SUM(n), 0) FROM run_counts" + where.Clause());
  if (!stmt.ok()) return stmt.error();
  stmt->BindAll(where.binds);
  auto row = stmt->Step();
  if (!row.ok()) return row.error();
  return std::optional<int64_t>(stmt->Int(0));
}

}  // namespace

Status Store::InsertRun(const kfp::Run& r, std::optional<WallTime> recurring_fire) {
  json rc = json::object();
  if (!r.runtime_config.parameters.is_null()) rc["parameters"] = r.runtime_config.parameters;
  if (!r.runtime_config.pipeline_root.empty()) rc["pipeline_root"] = r.runtime_config.pipeline_root;
  RunStatus status{r.state, r.finished_at, r.error, r.state_history, r.task_details};
  std::string status_json = StatusJson(status);
  std::lock_guard lock(mu_);
  // One transaction: one WAL commit instead of two, and never a run without
  // its experiment's last_run_created_at (or a fire time without its run).
  return InTransaction([&]() -> Status {
    Status s = Insert(
        *db_,
        "INSERT INTO runs (id, experiment_id, display_name, description, pipeline_id, "
        "pipeline_version_id, pipeline_spec, runtime_config, service_account, storage_state, "
        "state, created_at_ns, scheduled_at_ns, finished_at_ns, recurring_run_id, status) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        {r.run_id, r.experiment_id, r.display_name, r.description, r.pipeline_id,
         r.pipeline_version_reference_id,
         r.pipeline_spec.is_null() ? SqlValue(nullptr) : SqlValue(r.pipeline_spec.dump()),
         rc.dump(), r.service_account, r.storage_state.empty() ? "AVAILABLE" : r.storage_state,
         std::string(RuntimeStateName(r.state)), ToNs(r.created_at), OptNs(r.scheduled_at),
         OptNs(r.finished_at), r.recurring_run_id, status_json},
        fmt::format("run {} already exists", r.run_id));
    if (!s.ok()) return s;
    if (!r.experiment_id.empty()) {
      auto touch = db_->PrepareCached(
          "UPDATE experiments SET last_run_created_at_ns = MAX(last_run_created_at_ns, ?) "
          "WHERE id = ?");
      if (!touch.ok()) return touch.error();
      if (s = (*touch)->BindAll({ToNs(r.created_at), r.experiment_id}).Run(); !s.ok()) return s;
    }
    if (recurring_fire) {
      auto fire = db_->PrepareCached("UPDATE recurring_runs SET last_fire_ns = ? WHERE id = ?");
      if (!fire.ok()) return fire.error();
      if (s = (*fire)->BindAll({ToNs(*recurring_fire), r.recurring_run_id}).Run(); !s.ok()) {
        return s;
      }
    }
    return Ok();
  });
}

Status Store::UpdateRunStatus(const std::string& run_id, const RunStatus& status) {
  std::string text = StatusJson(status);
  std::lock_guard lock(mu_);
  return ChangeOne(
      *db_, kUpdateStatus,
      {std::string(RuntimeStateName(status.state)), OptNs(status.finished_at), text, run_id},
      NotFound("run", run_id));
}

Result<kfp::Run> Store::GetRun(const std::string& id) {
  std::lock_guard lock(mu_);
  return GetById(*db_, kRuns, id);
}

Result<ListResult<kfp::Run>> Store::ListRuns(const ListRequest& req,
                                             const std::string& experiment_id,
                                             const std::string& namespace_) {
  auto plan = PlanList(req, RunListable());
  if (!plan.ok()) return plan.error();
  // Runs belong to the namespace of their experiment. Without a namespace
  // (single-user mode) there is no scope at all, which also keeps the count
  // for total_size on an index.
  Where scope;
  scope.AddIfGiven("experiment_id = ?", experiment_id);
  scope.AddIfGiven("experiment_id IN (SELECT id FROM experiments WHERE namespace = ?)", namespace_);
  std::lock_guard lock(mu_);
  std::optional<int64_t> total;
  if (namespace_.empty() && plan->equals_only) {
    auto counted = CountFromRunCounts(*db_, experiment_id, plan->equals);
    if (!counted.ok()) return counted.error();
    total = *counted;
  }
  return RunList(*db_, kRuns, *plan, scope, total);
}

Status Store::DeleteRun(const std::string& id) {
  std::lock_guard lock(mu_);
  return ChangeOne(*db_, "DELETE FROM runs WHERE id = ?", {id}, NotFound("run", id));
}

Status Store::SetRunStorageState(const std::string& id, const std::string& state) {
  std::lock_guard lock(mu_);
  return ChangeOne(*db_, "UPDATE runs SET storage_state = ? WHERE id = ?", {state, id},
                   NotFound("run", id));
}

// From run_counts: a scrape must not scan the runs table.
Result<std::vector<std::pair<std::string, int64_t>>> Store::CountRunsByState() {
  std::lock_guard lock(mu_);
  std::vector<std::pair<std::string, int64_t>> out;
  Status s = ForEachRow(*db_, "SELECT state, SUM(n) FROM run_counts GROUP BY state", {},
                        [&](const Statement& row) { out.emplace_back(row.Text(0), row.Int(1)); });
  if (!s.ok()) return s.error();
  return out;
}

Result<int> Store::EndInFlightRuns(const InFlightEnd& end) {
  std::lock_guard lock(mu_);
  int ended = 0;
  Status s = InTransaction([&]() -> Status {
    std::string sql = fmt::format(
        "SELECT {} FROM runs WHERE state IN ('PENDING', 'RUNNING', 'CANCELING')", kRunColumns);
    if (end.run_id) sql += " AND id = ?";
    auto select = db_->Prepare(sql);
    if (!select.ok()) return select.error();
    if (end.run_id) select->BindAll({*end.run_id});
    std::vector<kfp::Run> runs;
    Status read = ForEachRow(*select, [&](const Statement& row) { runs.push_back(ReadRun(row)); });
    select->Reset();
    if (!read.ok()) return read;
    auto update = db_->PrepareCached(kUpdateStatus);
    if (!update.ok()) return update.error();
    kfp::RpcStatus error{static_cast<int>(end.code), end.message, json::array()};
    for (auto& run : runs) {
      RunStatus status;
      status.state = end.state;
      status.finished_at = end.now;
      status.error = error;
      status.state_history = std::move(run.state_history);
      status.state_history.push_back({end.now, end.state, error});
      // Tasks that were still going end with the run; finished ones keep their state.
      status.task_details = std::move(run.task_details);
      for (auto& t : status.task_details) {
        if (IsTerminal(t.state)) continue;
        t.state = end.state;
        t.end_time = end.now;
        t.error = error;
        t.state_history.push_back({end.now, end.state, error});
      }
      Status u = (*update)
                     ->BindAll({std::string(RuntimeStateName(end.state)), ToNs(end.now),
                                StatusJson(status), run.run_id})
                     .Run();
      if (!u.ok()) return u;
      ++ended;
    }
    return Ok();
  });
  if (!s.ok()) return s.error();
  return ended;
}

}  // namespace kfpbench::store
