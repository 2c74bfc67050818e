#include "store/store.h"

#include <fmt/format.h>

#include "store/store_internal.h"
#include "util/json_reader.h"

namespace kfpbench::store {
namespace {

using nlohmann::json;
using namespace internal;  // NOLINT: this file is the store

constexpr const char* kSchema = R"sql(
CREATE TABLE IF NOT EXISTS pipelines (
  id TEXT PRIMARY KEY,
  name TEXT NOT NULL,
  display_name TEXT NOT NULL,
  description TEXT NOT NULL DEFAULT '',
  namespace TEXT NOT NULL DEFAULT '',
  created_at_ns INTEGER NOT NULL,
  tags TEXT NOT NULL DEFAULT '{}',
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
  tags TEXT NOT NULL DEFAULT '{}',
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
CREATE INDEX IF NOT EXISTS runs_by_recurring ON runs (recurring_run_id, state);
CREATE TABLE IF NOT EXISTS recurring_runs (
  id TEXT PRIMARY KEY,
  display_name TEXT NOT NULL,
  namespace TEXT NOT NULL DEFAULT '',
  experiment_id TEXT NOT NULL DEFAULT '',
  status TEXT NOT NULL,
  created_at_ns INTEGER NOT NULL,
  updated_at_ns INTEGER NOT NULL,
  last_fire_ns INTEGER NOT NULL DEFAULT 0,
  body TEXT NOT NULL
);
CREATE TRIGGER IF NOT EXISTS run_counts_insert AFTER INSERT ON runs BEGIN
  INSERT INTO run_counts VALUES (NEW.experiment_id, NEW.state, NEW.storage_state, 1)
    ON CONFLICT DO UPDATE SET n = n + 1;
END;
CREATE TRIGGER IF NOT EXISTS run_counts_delete AFTER DELETE ON runs BEGIN
  UPDATE run_counts SET n = n - 1 WHERE experiment_id = OLD.experiment_id
    AND state = OLD.state AND storage_state = OLD.storage_state;
END;
CREATE TRIGGER IF NOT EXISTS run_counts_update
  AFTER UPDATE OF experiment_id, state, storage_state ON runs
  WHEN OLD.experiment_id IS NOT NEW.experiment_id OR OLD.state IS NOT NEW.state
    OR OLD.storage_state IS NOT NEW.storage_state
BEGIN
  UPDATE run_counts SET n = n - 1 WHERE experiment_id = OLD.experiment_id
    AND state = OLD.state AND storage_state = OLD.storage_state;
  INSERT INTO run_counts VALUES (NEW.experiment_id, NEW.state, NEW.storage_state, 1)
    ON CONFLICT DO UPDATE SET n = n + 1;
END;
CREATE INDEX IF NOT EXISTS recurring_by_created ON recurring_runs (created_at_ns, id);
CREATE TABLE IF NOT EXISTS task_cache (
  scope TEXT NOT NULL,
  fingerprint TEXT NOT NULL,
  run_id TEXT NOT NULL,
  task_id TEXT NOT NULL,
  outputs TEXT NOT NULL,
  created_at_ns INTEGER NOT NULL,
  PRIMARY KEY (scope, fingerprint)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS retry_tasks (
  run_id TEXT NOT NULL,
  task_key TEXT NOT NULL,
  record TEXT NOT NULL,
  PRIMARY KEY (run_id, task_key)
) WITHOUT ROWID;
CREATE TRIGGER IF NOT EXISTS retry_tasks_delete AFTER DELETE ON runs BEGIN
  DELETE FROM retry_tasks WHERE run_id = OLD.id;
END;
)sql";
// The fields of KFP's APIToModelFieldMap per model (backend/src/apiserver/
// model/*.go), v1beta1 and v2beta1 names alike; nothing else is accepted.
const Listable& PipelineListable() {
  static const Listable listable{
      "Pipeline",
      {Id("pipeline_id"), Text("name"), Text("display_name"), Time("created_at"),
       Text("description"), Text("namespace"), TagPrefix()},
      "created_at",
      "id"};
  return listable;
}

const Listable& VersionListable() {
  static const Listable listable{
      "PipelineVersion",
      {Id("pipeline_version_id"), Text("name"), Text("display_name"), Time("created_at"),
       // Every stored version is READY: the embedded backend has no
       // CREATING or DELETING phase.
       Text({"status"}, "'READY'"), Text("description"), Text("pipeline_spec"), TagPrefix()},
      "created_at",
      "id"};
  return listable;
}

const Listable& ExperimentListable() {
  static const Listable listable{
      "Experiment",
      {Id("experiment_id"), DisplayName(), Time("created_at"), Time("last_run_created_at"),
       Text("description"), Text("namespace"), Text("storage_state")},
      "created_at",
      "id"};
  return listable;
}

// Tags are kept as one JSON object per row (KFP keeps a table of them).
std::string TagsJson(const std::optional<kfp::Tags>& tags) {
  return tags ? json(*tags).dump() : "{}";
}
std::optional<kfp::Tags> ReadTags(const std::string& text) {
  json j = ParseJson(text);
  kfp::Tags tags;
  if (j.is_object()) {
    for (const auto& [k, v] : j.items()) {
      if (v.is_string()) tags[k] = v.get<std::string>();
    }
  }
  return tags;
}

constexpr const char* kPipelineColumns =
    "id, name, display_name, description, namespace, created_at_ns, tags";
kfp::Pipeline ReadPipeline(const Statement& s) {
  kfp::Pipeline p;
  p.pipeline_id = s.Text(0);
  p.name = s.Text(1);
  p.display_name = s.Text(2);
  p.description = s.Text(3);
  p.namespace_ = s.Text(4);
  p.created_at = FromNs(s.Int(5));
  p.tags = ReadTags(s.Text(6));
  return p;
}

constexpr const char* kVersionColumns =
    "id, pipeline_id, name, display_name, description, created_at_ns, package_url, "
    "code_source_url, pipeline_spec, tags";
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
  v.pipeline_spec = ParseJson(s.Text(8));
  if (v.pipeline_spec.is_discarded()) v.pipeline_spec = nullptr;
  v.tags = ReadTags(s.Text(9));
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

Status InsertPipelineRow(Database& db, const kfp::Pipeline& p) {
  return Insert(db,
                "INSERT INTO pipelines (id, name, display_name, description, namespace, "
                "created_at_ns, tags) VALUES (?, ?, ?, ?, ?, ?, ?)",
                {p.pipeline_id, p.name, p.display_name, p.description, p.namespace_,
                 ToNs(p.created_at), TagsJson(p.tags)},
                fmt::format("a pipeline named '{}' already exists", p.name));
}

Status InsertVersionRow(Database& db, const kfp::PipelineVersion& v) {
  return Insert(db,
                "INSERT INTO pipeline_versions (id, pipeline_id, name, display_name, description, "
                "created_at_ns, package_url, code_source_url, pipeline_spec, tags) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                {v.pipeline_version_id, v.pipeline_id, v.name, v.display_name, v.description,
                 ToNs(v.created_at), v.package_url, v.code_source_url, v.pipeline_spec.dump(),
                 TagsJson(v.tags)},
                fmt::format("pipeline {} already has a version named '{}'", v.pipeline_id, v.name));
}

const Table<kfp::Pipeline> kPipelines{
    "pipelines", kPipelineColumns, 7, ReadPipeline, &kfp::Pipeline::pipeline_id, "pipeline"};
const Table<kfp::PipelineVersion> kVersions{"pipeline_versions",
                                            kVersionColumns,
                                            10,
                                            ReadVersion,
                                            &kfp::PipelineVersion::pipeline_version_id,
                                            "pipeline version"};
const Table<kfp::Experiment> kExperiments{
    "experiments", kExperimentColumns, 7, ReadExperiment, &kfp::Experiment::experiment_id,
    "experiment"};

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

// Runs per (experiment, state, storage state), kept by triggers in the
// same transaction as every change to runs. ListRuns answers total_size from
// it when the filter is EQUALS on those columns only (the common "runs of
// this experiment in this state" query): a COUNT(*) over 140,000 matching
// rows costs ~8 ms, the sum over a few count rows microseconds.
constexpr const char* kRunCountsTable = R"sql(
CREATE TABLE run_counts (
  experiment_id TEXT NOT NULL,
  state TEXT NOT NULL,
  storage_state TEXT NOT NULL,
  n INTEGER NOT NULL,
  PRIMARY KEY (experiment_id, state, storage_state)
) WITHOUT ROWID;
)sql";

Status Store::CreateSchema(bool on_disk) {
  if (on_disk) {
    // WAL: readers never block the writer; NORMAL sync is durable across
    // process crashes (SIGKILL), which is the failure the backend must survive.
    if (Status s = db_->Exec("PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;"); !s.ok()) {
      return s;
    }
  }
  // A database from before run_counts existed gets it filled once.
  auto exists = db_->Prepare(
      "SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = 'run_counts'");
  if (!exists.ok()) return exists.error();
  if (auto row = exists->Step(); !row.ok()) return row.error();
  bool have_counts = exists->Int(0) > 0;
  exists->Reset();
  if (!have_counts) {
    if (Status s = db_->Exec(kRunCountsTable); !s.ok()) return s;
  }
  if (Status s = db_->Exec(kSchema); !s.ok()) return s;
  // A database from before tags existed gets the column, empty.
  for (const char* table : {"pipelines", "pipeline_versions"}) {
    auto has_tags = db_->Prepare(
        fmt::format("SELECT COUNT(*) FROM pragma_table_info('{}') WHERE name = 'tags'", table));
    if (!has_tags.ok()) return has_tags.error();
    if (auto row = has_tags->Step(); !row.ok()) return row.error();
    if (has_tags->Int(0) == 0) {
      Status s = db_->Exec(
          fmt::format("ALTER TABLE {} ADD COLUMN tags TEXT NOT NULL DEFAULT '{{}}'", table));
      if (!s.ok()) return s;
    }
  }
  if (!have_counts) {
    return db_->Exec(
        "INSERT INTO run_counts SELECT experiment_id, state, storage_state, COUNT(*) FROM runs "
        "GROUP BY experiment_id, state, storage_state");
  }
  return Ok();
}

Status Store::InsertPipeline(const kfp::Pipeline& p) {
  std::lock_guard lock(mu_);
  return InsertPipelineRow(*db_, p);
}

Result<kfp::Pipeline> Store::GetPipeline(const std::string& id) {
  std::lock_guard lock(mu_);
  return GetById(*db_, kPipelines, id);
}

Result<ListResult<kfp::Pipeline>> Store::ListPipelines(const ListRequest& req,
                                                       const std::string& namespace_) {
  auto plan = PlanList(req, PipelineListable());
  if (!plan.ok()) return plan.error();
  std::lock_guard lock(mu_);
  return RunList(*db_, kPipelines, *plan, Where{"namespace = ?", {namespace_}});
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
    // KFP's ResourceManager.DeletePipeline, naming its latest version.
    auto latest = db_->Prepare(
        "SELECT id FROM pipeline_versions WHERE pipeline_id = ? ORDER BY created_at_ns DESC, id "
        "DESC "
        "LIMIT 1");
    if (!latest.ok()) return latest.error();
    latest->Bind(1, id);
    if (auto row = latest->Step(); !row.ok()) return row.error();
    std::string example = latest->Text(0);
    latest->Reset();
    return Error{fmt::format("Failed to delete pipeline with id {} as it has existing pipeline "
                             "versions (e.g. {}). Set cascade=true to delete all versions",
                             id, example),
                 400};
  }
  return InTransaction([&]() -> Status {
    auto versions_delete = db_->Prepare("DELETE FROM pipeline_versions WHERE pipeline_id = ?");
    if (!versions_delete.ok()) return versions_delete.error();
    if (Status s = versions_delete->Bind(1, id).Run(); !s.ok()) return s;
    return ChangeOne(*db_, "DELETE FROM pipelines WHERE id = ?", {id}, NotFound("pipeline", id));
  });
}

Status Store::InsertPipelineVersion(const kfp::PipelineVersion& v) {
  std::lock_guard lock(mu_);
  return InsertVersionRow(*db_, v);
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
      Error{fmt::format("pipeline {} has no versions", pipeline_id), kHttpNotFound});
}

Result<ListResult<kfp::PipelineVersion>> Store::ListPipelineVersions(const std::string& pipeline_id,
                                                                     const ListRequest& req) {
  auto plan = PlanList(req, VersionListable());
  if (!plan.ok()) return plan.error();
  std::lock_guard lock(mu_);
  return RunList(*db_, kVersions, *plan, Where{"pipeline_id = ?", {pipeline_id}});
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
  return GetById(*db_, kExperiments, id);
}

Result<ListResult<kfp::Experiment>> Store::ListExperiments(const ListRequest& req,
                                                           const std::string& namespace_) {
  auto plan = PlanList(req, ExperimentListable());
  if (!plan.ok()) return plan.error();
  std::lock_guard lock(mu_);
  return RunList(*db_, kExperiments, *plan, Where{"namespace = ?", {namespace_}});
}

Status Store::DeleteExperiment(const std::string& id) {
  std::lock_guard lock(mu_);
  return ChangeOne(*db_, "DELETE FROM experiments WHERE id = ?", {id}, NotFound("experiment", id));
}

}  // namespace kfpbench::store

namespace kfpbench::store {

using namespace internal;  // NOLINT: this file is the store

Result<kfp::Pipeline> Store::GetPipelineByName(const std::string& namespace_,
                                               const std::string& name) {
  std::lock_guard lock(mu_);
  return GetOne<kfp::Pipeline>(
      *db_,
      fmt::format("SELECT {} FROM pipelines WHERE namespace = ? AND name = ?", kPipelineColumns),
      {namespace_, name}, ReadPipeline,
      Error{fmt::format("pipeline named '{}' not found", name), kHttpNotFound});
}

Status Store::UpdatePipeline(const kfp::Pipeline& p) {
  std::lock_guard lock(mu_);
  return ChangeOne(*db_,
                   "UPDATE pipelines SET display_name = ?, description = ?, tags = ? WHERE id = ?",
                   {p.display_name, p.description, TagsJson(p.tags), p.pipeline_id},
                   NotFound("pipeline", p.pipeline_id));
}

Status Store::InsertPipelineAndVersion(const kfp::Pipeline& p, const kfp::PipelineVersion& v) {
  std::lock_guard lock(mu_);
  return InTransaction([&]() -> Status {
    if (Status s = InsertPipelineRow(*db_, p); !s.ok()) return s;
    return InsertVersionRow(*db_, v);
  });
}

Result<kfp::PipelineVersion> Store::FindPipelineVersion(const std::string& version_id) {
  std::lock_guard lock(mu_);
  return GetById(*db_, kVersions, version_id);
}

Status Store::UpdatePipelineVersion(const kfp::PipelineVersion& v) {
  std::lock_guard lock(mu_);
  return ChangeOne(
      *db_,
      "UPDATE pipeline_versions SET display_name = ?, description = ?, tags = ? "
      "WHERE id = ? AND pipeline_id = ?",
      {v.display_name, v.description, TagsJson(v.tags), v.pipeline_version_id, v.pipeline_id},
      NotFound("pipeline version", v.pipeline_version_id));
}

Status Store::DeletePipelineVersion(const std::string& pipeline_id, const std::string& version_id) {
  std::lock_guard lock(mu_);
  return ChangeOne(*db_, "DELETE FROM pipeline_versions WHERE id = ? AND pipeline_id = ?",
                   {version_id, pipeline_id}, NotFound("pipeline version", version_id));
}

Status Store::SetExperimentStorageState(const std::string& id, const std::string& state,
                                        WallTime now) {
  std::lock_guard lock(mu_);
  return InTransaction([&]() -> Status {
    Status s = ChangeOne(*db_, "UPDATE experiments SET storage_state = ? WHERE id = ?", {state, id},
                         NotFound("experiment", id));
    if (!s.ok() || state != "ARCHIVED") return s;
    auto runs = db_->PrepareCached("UPDATE runs SET storage_state = ? WHERE experiment_id = ?");
    if (!runs.ok()) return runs.error();
    if (Status s = (*runs)->BindAll({state, id}).Run(); !s.ok()) return s;
    auto jobs = db_->PrepareCached(
        "UPDATE recurring_runs SET status = 'DISABLED', updated_at_ns = ? "
        "WHERE experiment_id = ? AND status != 'DISABLED'");
    if (!jobs.ok()) return jobs.error();
    return (*jobs)->BindAll({ToNs(now), id}).Run();
  });
}

}  // namespace kfpbench::store
