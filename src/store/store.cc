#include "store/store.h"

#include <fmt/format.h>

namespace kfpbench::store {
namespace {

using nlohmann::json;

int64_t ToNs(WallTime t) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count();
}
WallTime FromNs(int64_t ns) {
  return WallTime(std::chrono::duration_cast<WallClock::duration>(std::chrono::nanoseconds(ns)));
}

Error NotFound(const char* what, const std::string& id) {
  return Error{fmt::format("{} {} not found", what, id), 404};
}

constexpr const char* kSchema = R"sql(
CREATE TABLE IF NOT EXISTS pipelines (
  id TEXT PRIMARY KEY,
  name TEXT NOT NULL,
  display_name TEXT NOT NULL,
  description TEXT NOT NULL DEFAULT '',
  namespace TEXT NOT NULL DEFAULT '',
  created_at_ns INTEGER NOT NULL,
  UNIQUE (namespace, name)
);
CREATE TABLE IF NOT EXISTS pipeline_versions (
  id TEXT PRIMARY KEY,
  pipeline_id TEXT NOT NULL REFERENCES pipelines(id),
  name TEXT NOT NULL,
  display_name TEXT NOT NULL,
  description TEXT NOT NULL DEFAULT '',
  created_at_ns INTEGER NOT NULL,
  package_url TEXT NOT NULL DEFAULT '',
  code_source_url TEXT NOT NULL DEFAULT '',
  pipeline_spec TEXT NOT NULL,
  UNIQUE (pipeline_id, name)
);
CREATE INDEX IF NOT EXISTS versions_by_pipeline ON pipeline_versions (pipeline_id, created_at_ns);
CREATE TABLE IF NOT EXISTS experiments (
  id TEXT PRIMARY KEY,
  display_name TEXT NOT NULL,
  description TEXT NOT NULL DEFAULT '',
  namespace TEXT NOT NULL DEFAULT '',
  storage_state TEXT NOT NULL DEFAULT 'AVAILABLE',
  created_at_ns INTEGER NOT NULL,
  last_run_created_at_ns INTEGER NOT NULL DEFAULT 0,
  UNIQUE (namespace, display_name)
);
CREATE TABLE IF NOT EXISTS runs (
  id TEXT PRIMARY KEY,
  experiment_id TEXT NOT NULL DEFAULT '',
  display_name TEXT NOT NULL,
  description TEXT NOT NULL DEFAULT '',
  namespace TEXT NOT NULL DEFAULT '',
  pipeline_id TEXT NOT NULL DEFAULT '',
  pipeline_version_id TEXT NOT NULL DEFAULT '',
  pipeline_spec TEXT,
  runtime_config TEXT NOT NULL DEFAULT '{}',
  service_account TEXT NOT NULL DEFAULT '',
  storage_state TEXT NOT NULL DEFAULT 'AVAILABLE',
  state TEXT NOT NULL,
  created_at_ns INTEGER NOT NULL,
  scheduled_at_ns INTEGER NOT NULL DEFAULT 0,
  finished_at_ns INTEGER NOT NULL DEFAULT 0,
  recurring_run_id TEXT NOT NULL DEFAULT '',
  status TEXT NOT NULL DEFAULT '{}'
);
CREATE INDEX IF NOT EXISTS runs_by_created ON runs (created_at_ns, id);
CREATE INDEX IF NOT EXISTS runs_by_state ON runs (state, created_at_ns, id);
CREATE INDEX IF NOT EXISTS runs_by_experiment ON runs (experiment_id, created_at_ns, id);
)sql";

const std::vector<Field>& PipelineFields() {
  static const std::vector<Field> fields = {
      {{"created_at"}, "created_at_ns", FieldType::kTime},
      {{"name"}, "name", FieldType::kString},
      {{"display_name"}, "display_name", FieldType::kString},
      {{"pipeline_id", "id"}, "id", FieldType::kString},
      {{"description"}, "description", FieldType::kString},
  };
  return fields;
}

const std::vector<Field>& VersionFields() {
  static const std::vector<Field> fields = {
      {{"created_at"}, "created_at_ns", FieldType::kTime},
      {{"name"}, "name", FieldType::kString},
      {{"display_name"}, "display_name", FieldType::kString},
      {{"pipeline_version_id", "id"}, "id", FieldType::kString},
  };
  return fields;
}

const std::vector<Field>& ExperimentFields() {
  static const std::vector<Field> fields = {
      {{"created_at"}, "created_at_ns", FieldType::kTime},
      {{"display_name", "name"}, "display_name", FieldType::kString},
      {{"experiment_id", "id"}, "id", FieldType::kString},
      {{"storage_state"}, "storage_state", FieldType::kString},
      {{"description"}, "description", FieldType::kString},
  };
  return fields;
}

const std::vector<Field>& RunFields() {
  static const std::vector<Field> fields = {
      {{"created_at"}, "created_at_ns", FieldType::kTime},
      {{"finished_at"}, "finished_at_ns", FieldType::kTime},
      {{"scheduled_at"}, "scheduled_at_ns", FieldType::kTime},
      {{"display_name", "name"}, "display_name", FieldType::kString},
      {{"run_id", "id"}, "id", FieldType::kString},
      {{"state"}, "state", FieldType::kString},
      {{"storage_state"}, "storage_state", FieldType::kString},
      {{"experiment_id"}, "experiment_id", FieldType::kString},
      {{"recurring_run_id"}, "recurring_run_id", FieldType::kString},
      {{"pipeline_version_id"}, "pipeline_version_id", FieldType::kString},
  };
  return fields;
}

// Runs one list query: total under the filter, then one page of rows after
// the cursor. `read` turns a row into an item and returns its sort value.
template <typename T, typename Read>
Result<ListResult<T>> RunList(Database& db, const std::string& table, const std::string& columns,
                              const ListPlan& plan, const std::string& scope_where,
                              const std::vector<SqlValue>& scope_binds, Read read) {
  std::string where = scope_where;
  std::vector<SqlValue> binds = scope_binds;
  if (!plan.where.empty()) {
    where += (where.empty() ? "" : " AND ") + plan.where;
    binds.insert(binds.end(), plan.where_binds.begin(), plan.where_binds.end());
  }
  ListResult<T> out;
  {
    auto count = db.Prepare(
        fmt::format("SELECT COUNT(*) FROM {}{}", table, where.empty() ? "" : " WHERE " + where));
    if (!count.ok()) return count.error();
    count->BindAll(binds);
    auto row = count->Step();
    if (!row.ok()) return row.error();
    out.total_size = static_cast<int>(count->Int(0));
  }
  std::string page_where = where;
  std::vector<SqlValue> page_binds = binds;
  if (!plan.cursor_where.empty()) {
    page_where += (page_where.empty() ? "" : " AND ") + plan.cursor_where;
    page_binds.insert(page_binds.end(), plan.cursor_binds.begin(), plan.cursor_binds.end());
  }
  // One row more than the page tells whether there is a next page.
  auto stmt = db.Prepare(fmt::format(
      "SELECT {}, {} FROM {}{} ORDER BY {} LIMIT {}", columns, plan.sort_field->column, table,
      page_where.empty() ? "" : " WHERE " + page_where, plan.order_by, plan.page_size + 1));
  if (!stmt.ok()) return stmt.error();
  stmt->BindAll(page_binds);
  SqlValue last_sort;
  std::string last_id;
  for (int n = 0;; ++n) {
    auto row = stmt->Step();
    if (!row.ok()) return row.error();
    if (!*row) break;
    if (n == plan.page_size) {
      out.next_page_token = NextPageToken(plan, last_sort, last_id);
      break;
    }
    auto [item, id, sort_value] = read(*stmt);
    out.items.push_back(std::move(item));
    last_id = std::move(id);
    last_sort = std::move(sort_value);
  }
  return out;
}

// The sort column is selected last; read it back in its storage type.
SqlValue SortValue(const Statement& s, int column, const ListPlan& plan) {
  if (plan.sort_field->type == FieldType::kString) return s.Text(column);
  return s.Int(column);
}

constexpr const char* kPipelineColumns =
    "id, name, display_name, description, namespace, created_at_ns";
kfp::Pipeline ReadPipeline(const Statement& s) {
  kfp::Pipeline p;
  p.pipeline_id = s.Text(0);
  p.name = s.Text(1);
  p.display_name = s.Text(2);
  p.description = s.Text(3);
  p.namespace_ = s.Text(4);
  p.created_at = FromNs(s.Int(5));
  return p;
}

constexpr const char* kVersionColumns =
    "id, pipeline_id, name, display_name, description, created_at_ns, package_url, "
    "code_source_url, pipeline_spec";
kfp::PipelineVersion ReadVersion(const Statement& s) {
  kfp::PipelineVersion v;
  v.pipeline_version_id = s.Text(0);
  v.pipeline_id = s.Text(1);
  v.name = s.Text(2);
  v.display_name = s.Text(3);
  v.description = s.Text(4);
  v.created_at = FromNs(s.Int(5));
  v.package_url = s.Text(6);
  v.code_source_url = s.Text(7);
  v.pipeline_spec = json::parse(s.Text(8), nullptr, false);
  if (v.pipeline_spec.is_discarded()) v.pipeline_spec = nullptr;
  return v;
}

constexpr const char* kExperimentColumns =
    "id, display_name, description, namespace, storage_state, created_at_ns, "
    "last_run_created_at_ns";
kfp::Experiment ReadExperiment(const Statement& s) {
  kfp::Experiment e;
  e.experiment_id = s.Text(0);
  e.display_name = s.Text(1);
  e.description = s.Text(2);
  e.namespace_ = s.Text(3);
  e.storage_state = s.Text(4);
  e.created_at = FromNs(s.Int(5));
  if (int64_t last = s.Int(6)) e.last_run_created_at = FromNs(last);
  return e;
}

constexpr const char* kRunColumns =
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
  if (!s.IsNull(6)) r.pipeline_spec = json::parse(s.Text(6), nullptr, false);
  if (r.pipeline_spec.is_discarded()) r.pipeline_spec = nullptr;
  json rc = json::parse(s.Text(7), nullptr, false);
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
  auto status = kfp::RunFromJson(json::parse(s.Text(15), nullptr, false), false);
  if (status.ok()) {
    r.error = std::move(status->error);
    r.state_history = std::move(status->state_history);
    r.task_details = std::move(status->task_details);
  }
  return r;
}

std::string StatusJson(const RunStatus& status) {
  kfp::Run partial;
  partial.error = status.error;
  partial.state_history = status.state_history;
  partial.task_details = status.task_details;
  return kfp::ToJson(partial).dump();
}

// Maps a UNIQUE violation to 409 with a message naming what clashed.
Status Insert(Database& db, const std::string& sql, const std::vector<SqlValue>& binds,
              const std::string& conflict_message) {
  auto stmt = db.Prepare(sql);
  if (!stmt.ok()) return stmt.error();
  stmt->BindAll(binds);
  Status s = stmt->Run();
  if (!s.ok() && s.error().message.find("UNIQUE") != std::string::npos) {
    return Error{conflict_message, 409};
  }
  return s;
}

template <typename T, typename Read>
Result<T> GetOne(Database& db, const std::string& sql, const std::vector<SqlValue>& binds,
                 Read read, Error not_found) {
  auto stmt = db.Prepare(sql);
  if (!stmt.ok()) return stmt.error();
  stmt->BindAll(binds);
  auto row = stmt->Step();
  if (!row.ok()) return row.error();
  if (!*row) return not_found;
  return read(*stmt);
}

Status DeleteOne(Database& db, const std::string& sql, const std::string& id, Error not_found) {
  auto stmt = db.Prepare(sql);
  if (!stmt.ok()) return stmt.error();
  stmt->Bind(1, id);
  if (Status s = stmt->Run(); !s.ok()) return s;
  if (db.Changes() == 0) return not_found;
  return Ok();
}

}  // namespace

Result<std::unique_ptr<Store>> Store::Open(const std::string& path) {
  auto db = Database::Open(path.empty() ? ":memory:" : path);
  if (!db.ok()) return db.error();
  std::unique_ptr<Store> store(new Store(std::move(*db)));
  if (Status s = store->CreateSchema(!path.empty()); !s.ok()) {
    return Error{"cannot initialise database " + path + ": " + s.error().message};
  }
  return store;
}

Status Store::CreateSchema(bool on_disk) {
  if (on_disk) {
    // WAL: readers never block the writer; NORMAL sync is durable across
    // process crashes (SIGKILL), which is the failure the backend must survive.
    if (Status s = db_->Exec("PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;"); !s.ok()) {
      return s;
    }
  }
  return db_->Exec(kSchema);
}

Status Store::InsertPipeline(const kfp::Pipeline& p) {
  std::lock_guard lock(mu_);
  return Insert(
      *db_,
      "INSERT INTO pipelines (id, name, display_name, description, namespace, "
      "created_at_ns) VALUES (?, ?, ?, ?, ?, ?)",
      {p.pipeline_id, p.name, p.display_name, p.description, p.namespace_, ToNs(p.created_at)},
      fmt::format("a pipeline named '{}' already exists", p.name));
}

Result<kfp::Pipeline> Store::GetPipeline(const std::string& id) {
  std::lock_guard lock(mu_);
  return GetOne<kfp::Pipeline>(
      *db_, fmt::format("SELECT {} FROM pipelines WHERE id = ?", kPipelineColumns), {id},
      ReadPipeline, NotFound("pipeline", id));
}

Result<ListResult<kfp::Pipeline>> Store::ListPipelines(const ListRequest& req,
                                                       const std::string& namespace_) {
  auto plan = PlanList(req, PipelineFields(), "created_at", "id");
  if (!plan.ok()) return plan.error();
  std::lock_guard lock(mu_);
  return RunList<kfp::Pipeline>(*db_, "pipelines", kPipelineColumns, *plan, "namespace = ?",
                                {namespace_}, [&](const Statement& s) {
                                  auto p = ReadPipeline(s);
                                  std::string id = p.pipeline_id;
                                  return std::make_tuple(std::move(p), std::move(id),
                                                         SortValue(s, 6, *plan));
                                });
}

Status Store::DeletePipeline(const std::string& id, bool cascade) {
  std::lock_guard lock(mu_);
  auto count = db_->Prepare("SELECT COUNT(*) FROM pipeline_versions WHERE pipeline_id = ?");
  if (!count.ok()) return count.error();
  count->Bind(1, id);
  if (auto row = count->Step(); !row.ok()) return row.error();
  int64_t versions = count->Int(0);
  count->Reset();
  if (versions > 0 && !cascade) {
    return Error{fmt::format("pipeline {} still has {} version(s); delete them first or pass "
                             "cascade=true",
                             id, versions),
                 400};
  }
  if (Status s = db_->Exec("BEGIN"); !s.ok()) return s;
  auto versions_delete = db_->Prepare("DELETE FROM pipeline_versions WHERE pipeline_id = ?");
  Status s = versions_delete.ok() ? versions_delete->Bind(1, id).Run() : versions_delete.error();
  if (s.ok()) {
    s = DeleteOne(*db_, "DELETE FROM pipelines WHERE id = ?", id, NotFound("pipeline", id));
  }
  (void)db_->Exec(s.ok() ? "COMMIT" : "ROLLBACK");
  return s;
}

Status Store::InsertPipelineVersion(const kfp::PipelineVersion& v) {
  std::lock_guard lock(mu_);
  return Insert(*db_,
                "INSERT INTO pipeline_versions (id, pipeline_id, name, display_name, description, "
                "created_at_ns, package_url, code_source_url, pipeline_spec) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                {v.pipeline_version_id, v.pipeline_id, v.name, v.display_name, v.description,
                 ToNs(v.created_at), v.package_url, v.code_source_url, v.pipeline_spec.dump()},
                fmt::format("pipeline {} already has a version named '{}'", v.pipeline_id, v.name));
}

Result<kfp::PipelineVersion> Store::GetPipelineVersion(const std::string& pipeline_id,
                                                       const std::string& version_id) {
  std::lock_guard lock(mu_);
  return GetOne<kfp::PipelineVersion>(
      *db_,
      fmt::format("SELECT {} FROM pipeline_versions WHERE id = ? AND pipeline_id = ?",
                  kVersionColumns),
      {version_id, pipeline_id}, ReadVersion, NotFound("pipeline version", version_id));
}

Result<kfp::PipelineVersion> Store::LatestPipelineVersion(const std::string& pipeline_id) {
  std::lock_guard lock(mu_);
  return GetOne<kfp::PipelineVersion>(
      *db_,
      fmt::format("SELECT {} FROM pipeline_versions WHERE pipeline_id = ? "
                  "ORDER BY created_at_ns DESC, id DESC LIMIT 1",
                  kVersionColumns),
      {pipeline_id}, ReadVersion,
      Error{fmt::format("pipeline {} has no versions", pipeline_id), 404});
}

Result<ListResult<kfp::PipelineVersion>> Store::ListPipelineVersions(const std::string& pipeline_id,
                                                                     const ListRequest& req) {
  auto plan = PlanList(req, VersionFields(), "created_at", "id");
  if (!plan.ok()) return plan.error();
  std::lock_guard lock(mu_);
  return RunList<kfp::PipelineVersion>(*db_, "pipeline_versions", kVersionColumns, *plan,
                                       "pipeline_id = ?", {pipeline_id}, [&](const Statement& s) {
                                         auto v = ReadVersion(s);
                                         std::string id = v.pipeline_version_id;
                                         return std::make_tuple(std::move(v), std::move(id),
                                                                SortValue(s, 9, *plan));
                                       });
}

Status Store::InsertExperiment(const kfp::Experiment& e) {
  std::lock_guard lock(mu_);
  return Insert(*db_,
                "INSERT INTO experiments (id, display_name, description, namespace, "
                "storage_state, created_at_ns) VALUES (?, ?, ?, ?, ?, ?)",
                {e.experiment_id, e.display_name, e.description, e.namespace_,
                 e.storage_state.empty() ? "AVAILABLE" : e.storage_state, ToNs(e.created_at)},
                fmt::format("an experiment named '{}' already exists", e.display_name));
}

Result<kfp::Experiment> Store::GetExperiment(const std::string& id) {
  std::lock_guard lock(mu_);
  return GetOne<kfp::Experiment>(
      *db_, fmt::format("SELECT {} FROM experiments WHERE id = ?", kExperimentColumns), {id},
      ReadExperiment, NotFound("experiment", id));
}

Result<ListResult<kfp::Experiment>> Store::ListExperiments(const ListRequest& req,
                                                           const std::string& namespace_) {
  auto plan = PlanList(req, ExperimentFields(), "created_at", "id");
  if (!plan.ok()) return plan.error();
  std::lock_guard lock(mu_);
  return RunList<kfp::Experiment>(*db_, "experiments", kExperimentColumns, *plan, "namespace = ?",
                                  {namespace_}, [&](const Statement& s) {
                                    auto e = ReadExperiment(s);
                                    std::string id = e.experiment_id;
                                    return std::make_tuple(std::move(e), std::move(id),
                                                           SortValue(s, 7, *plan));
                                  });
}

Status Store::DeleteExperiment(const std::string& id) {
  std::lock_guard lock(mu_);
  return DeleteOne(*db_, "DELETE FROM experiments WHERE id = ?", id, NotFound("experiment", id));
}

Status Store::InsertRun(const kfp::Run& r) {
  json rc = json::object();
  if (!r.runtime_config.parameters.is_null()) rc["parameters"] = r.runtime_config.parameters;
  if (!r.runtime_config.pipeline_root.empty()) rc["pipeline_root"] = r.runtime_config.pipeline_root;
  RunStatus status{r.state, r.finished_at, r.error, r.state_history, r.task_details};
  std::lock_guard lock(mu_);
  Status s =
      Insert(*db_,
             "INSERT INTO runs (id, experiment_id, display_name, description, pipeline_id, "
             "pipeline_version_id, pipeline_spec, runtime_config, service_account, storage_state, "
             "state, created_at_ns, scheduled_at_ns, finished_at_ns, recurring_run_id, status) "
             "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
             {r.run_id, r.experiment_id, r.display_name, r.description, r.pipeline_id,
              r.pipeline_version_reference_id,
              r.pipeline_spec.is_null() ? SqlValue(nullptr) : SqlValue(r.pipeline_spec.dump()),
              rc.dump(), r.service_account, r.storage_state.empty() ? "AVAILABLE" : r.storage_state,
              std::string(RuntimeStateName(r.state)), ToNs(r.created_at),
              r.scheduled_at.time_since_epoch().count() ? ToNs(r.scheduled_at) : 0,
              r.finished_at.time_since_epoch().count() ? ToNs(r.finished_at) : 0,
              r.recurring_run_id, StatusJson(status)},
             fmt::format("run {} already exists", r.run_id));
  if (!s.ok() || r.experiment_id.empty()) return s;
  auto touch = db_->Prepare(
      "UPDATE experiments SET last_run_created_at_ns = MAX(last_run_created_at_ns, ?) WHERE id = "
      "?");
  if (!touch.ok()) return touch.error();
  return touch->BindAll({ToNs(r.created_at), r.experiment_id}).Run();
}

Status Store::UpdateRunStatus(const std::string& run_id, const RunStatus& status) {
  std::string text = StatusJson(status);
  std::lock_guard lock(mu_);
  auto stmt =
      db_->Prepare("UPDATE runs SET state = ?, finished_at_ns = ?, status = ? WHERE id = ?");
  if (!stmt.ok()) return stmt.error();
  stmt->BindAll({std::string(RuntimeStateName(status.state)),
                 status.finished_at.time_since_epoch().count() ? ToNs(status.finished_at) : 0, text,
                 run_id});
  if (Status s = stmt->Run(); !s.ok()) return s;
  if (db_->Changes() == 0) return NotFound("run", run_id);
  return Ok();
}

Result<kfp::Run> Store::GetRun(const std::string& id) {
  std::lock_guard lock(mu_);
  return GetOne<kfp::Run>(*db_, fmt::format("SELECT {} FROM runs WHERE id = ?", kRunColumns), {id},
                          ReadRun, NotFound("run", id));
}

Result<ListResult<kfp::Run>> Store::ListRuns(const ListRequest& req,
                                             const std::string& experiment_id,
                                             const std::string& namespace_) {
  auto plan = PlanList(req, RunFields(), "created_at", "id");
  if (!plan.ok()) return plan.error();
  std::string scope = "namespace = ?";
  std::vector<SqlValue> binds = {namespace_};
  if (!experiment_id.empty()) {
    scope += " AND experiment_id = ?";
    binds.push_back(experiment_id);
  }
  std::lock_guard lock(mu_);
  return RunList<kfp::Run>(*db_, "runs", kRunColumns, *plan, scope, binds, [&](const Statement& s) {
    auto r = ReadRun(s);
    std::string id = r.run_id;
    return std::make_tuple(std::move(r), std::move(id), SortValue(s, 16, *plan));
  });
}

Status Store::DeleteRun(const std::string& id) {
  std::lock_guard lock(mu_);
  return DeleteOne(*db_, "DELETE FROM runs WHERE id = ?", id, NotFound("run", id));
}

}  // namespace kfpbench::store
