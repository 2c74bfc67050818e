// Recurring runs: the API resource, kept as its JSON form beside the columns
// lists filter on, and the scheduler's state (the last fire time).
#include <fmt/format.h>

#include "store/store.h"
#include "store/store_internal.h"
#include "util/json_reader.h"

namespace kfpbench::store {
namespace {

using namespace internal;  // NOLINT: this file is the store
using nlohmann::json;

// KFP's jobAPIToModelFieldMap (backend/src/apiserver/model/job.go).
const Listable& RecurringRunListable() {
  static const Listable listable{"Job",
                                 {Id("recurring_run_id"), DisplayName(), Time("created_at"),
                                  Time("updated_at"), InJson("description", "body")},
                                 "created_at",
                                 "id"};
  return listable;
}

constexpr const char* kColumns = "id, status, updated_at_ns, body, last_fire_ns";

kfp::RecurringRun ReadRecurringRun(const Statement& s) {
  auto parsed = kfp::RecurringRunFromJson(ParseJson(s.Text(3)), false);
  kfp::RecurringRun r = parsed.ok() ? std::move(*parsed) : kfp::RecurringRun{};
  // The columns change after creation; the body keeps what was created.
  r.recurring_run_id = s.Text(0);
  r.status = s.Text(1);
  // KFP's toApiRecurringRun writes mode and status from one flag
  // (job.Enabled), so both follow every enable and disable.
  r.mode = r.status == "ENABLED" ? "ENABLE" : "DISABLE";
  r.updated_at = FromNs(s.Int(2));
  return r;
}

const Table<kfp::RecurringRun> kRecurringRuns{
    "recurring_runs", kColumns, 5, ReadRecurringRun, &kfp::RecurringRun::recurring_run_id,
    "recurring run"};

}  // namespace

Status Store::InsertRecurringRun(const kfp::RecurringRun& r) {
  std::lock_guard lock(mu_);
  return Insert(*db_,
                "INSERT INTO recurring_runs (id, display_name, namespace, experiment_id, status, "
                "created_at_ns, updated_at_ns, body) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                {r.recurring_run_id, r.display_name, r.namespace_, r.experiment_id, r.status,
                 ToNs(r.created_at), ToNs(r.updated_at), kfp::ToJson(r).dump()},
                fmt::format("recurring run {} already exists", r.recurring_run_id));
}

Result<kfp::RecurringRun> Store::GetRecurringRun(const std::string& id) {
  std::lock_guard lock(mu_);
  return GetById(*db_, kRecurringRuns, id);
}

Result<ListResult<kfp::RecurringRun>> Store::ListRecurringRuns(const ListRequest& req,
                                                               const std::string& experiment_id,
                                                               const std::string& namespace_) {
  auto plan = PlanList(req, RecurringRunListable());
  if (!plan.ok()) return plan.error();
  Where scope;
  scope.AddIfGiven("experiment_id = ?", experiment_id);
  scope.AddIfGiven("namespace = ?", namespace_);
  std::lock_guard lock(mu_);
  return RunList(*db_, kRecurringRuns, *plan, scope);
}

Status Store::DeleteRecurringRun(const std::string& id) {
  std::lock_guard lock(mu_);
  return ChangeOne(*db_, "DELETE FROM recurring_runs WHERE id = ?", {id},
                   NotFound("recurring run", id));
}

Status Store::SetRecurringRunEnabled(const std::string& id, bool enabled, WallTime now) {
  std::lock_guard lock(mu_);
  return ChangeOne(*db_, "UPDATE recurring_runs SET status = ?, updated_at_ns = ? WHERE id = ?",
                   {enabled ? "ENABLED" : "DISABLED", ToNs(now), id},
                   NotFound("recurring run", id));
}

Result<std::vector<ScheduleState>> Store::EnabledSchedules() {
  std::lock_guard lock(mu_);
  std::vector<ScheduleState> out;
  Status s = ForEachRow(
      *db_, fmt::format("SELECT {} FROM recurring_runs WHERE status = 'ENABLED'", kColumns), {},
      [&](const Statement& row) {
        ScheduleState state;
        state.recurring_run = ReadRecurringRun(row);
        if (int64_t last = row.Int(4)) state.last_fire = FromNs(last);
        out.push_back(std::move(state));
      });
  if (!s.ok()) return s.error();
  return out;
}

Result<int64_t> Store::CountActiveRuns(const std::string& recurring_run_id) {
  std::lock_guard lock(mu_);
  int64_t active = 0;
  Status s = ForEachRow(*db_,
                        "SELECT COUNT(*) FROM runs WHERE recurring_run_id = ? "
                        "AND state IN ('PENDING', 'RUNNING', 'CANCELING')",
                        {recurring_run_id}, [&](const Statement& row) { active = row.Int(0); });
  if (!s.ok()) return s.error();
  return active;
}

}  // namespace kfpbench::store
