// The embedded backend's state in SQLite: pipelines, versions, experiments
// and runs. Thread-safe (one connection behind a mutex; WAL when on disk).
// Errors carry the HTTP status the API should answer with (400, 404, 409, 500).
#pragma once

#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "kfp/model.h"
#include "store/list_query.h"
#include "store/sqlite.h"
#include "util/result.h"

namespace kfpbench::store {

// One page of a list, as the API answers it.
template <typename T>
using ListResult = kfp::Page<T>;

// The parts of a run that change while it executes.
struct RunStatus {
  RuntimeState state = RuntimeState::kUnspecified;
  WallTime finished_at{};
  std::optional<kfp::RpcStatus> error;
  std::vector<kfp::RuntimeStatus> state_history;
  std::vector<kfp::PipelineTaskDetail> task_details;
};

struct CachedExecutionRow {
  std::string scope;
  std::string fingerprint;
  std::string run_id;
  std::string task_id;
  std::string outputs;  // JSON
  WallTime created_at{};
};

// What the scheduler needs to know about one enabled recurring run.
struct ScheduleState {
  kfp::RecurringRun recurring_run;
  WallTime last_fire{};  // intended time of the last run it created; epoch: none yet
};

class Store {
 public:
  // An empty path opens an in-memory database.
  static Result<std::unique_ptr<Store>> Open(const std::string& path);

  Status InsertPipeline(const kfp::Pipeline& p);
  Result<kfp::Pipeline> GetPipeline(const std::string& id);
  Result<ListResult<kfp::Pipeline>> ListPipelines(const ListRequest& req,
                                                  const std::string& namespace_);
  Result<kfp::Pipeline> GetPipelineByName(const std::string& namespace_, const std::string& name);
  // Writes display_name and description, the fields KFP lets one change.
  Status UpdatePipeline(const kfp::Pipeline& p);
  // Without `cascade`, a pipeline that still has versions is not deleted (400).
  Status DeletePipeline(const std::string& id, bool cascade);
  // Both or neither, in one transaction.
  Status InsertPipelineAndVersion(const kfp::Pipeline& p, const kfp::PipelineVersion& v);

  // The version's pipeline_spec is stored as JSON text.
  Status InsertPipelineVersion(const kfp::PipelineVersion& v);
  Result<kfp::PipelineVersion> GetPipelineVersion(const std::string& pipeline_id,
                                                  const std::string& version_id);
  Result<ListResult<kfp::PipelineVersion>> ListPipelineVersions(const std::string& pipeline_id,
                                                                const ListRequest& req);
  // A version by its id alone (v1 resource references name only the version).
  Result<kfp::PipelineVersion> FindPipelineVersion(const std::string& version_id);
  // The newest version of a pipeline (KFP runs it when no version is named).
  Result<kfp::PipelineVersion> LatestPipelineVersion(const std::string& pipeline_id);
  Status UpdatePipelineVersion(const kfp::PipelineVersion& v);  // display_name, description
  Status DeletePipelineVersion(const std::string& pipeline_id, const std::string& version_id);

  Status InsertExperiment(const kfp::Experiment& e);
  Result<kfp::Experiment> GetExperiment(const std::string& id);
  Result<ListResult<kfp::Experiment>> ListExperiments(const ListRequest& req,
                                                      const std::string& namespace_);
  Status DeleteExperiment(const std::string& id);
  // "ARCHIVED" also archives the experiment's runs and disables its recurring
  // runs, as KFP does; "AVAILABLE" restores the experiment only.
  Status SetExperimentStorageState(const std::string& id, const std::string& state, WallTime now);

  // With `recurring_fire`, also records it as the last fire time of the run's
  // recurring run, in the same transaction, so a restart neither repeats nor
  // skips a scheduled run.
  Status InsertRun(const kfp::Run& run, std::optional<WallTime> recurring_fire = std::nullopt);
  Status UpdateRunStatus(const std::string& run_id, const RunStatus& status);
  Result<kfp::Run> GetRun(const std::string& id);
  Result<ListResult<kfp::Run>> ListRuns(const ListRequest& req, const std::string& experiment_id,
                                        const std::string& namespace_);
  Status DeleteRun(const std::string& id);
  Status SetRunStorageState(const std::string& id, const std::string& state);
  // Runs per state, for metrics.
  Result<std::vector<std::pair<std::string, int64_t>>> CountRunsByState();
  // Ends every PENDING, RUNNING or CANCELING run (or only `run_id`, if it
  // is one) in `state`, with `message`, and its unfinished tasks with it: for
  // runs nothing executes any more (their processes died with the previous
  // server, or the engine no longer knows them). Returns how many it ended.
  struct InFlightEnd {
    std::optional<std::string> run_id;
    RuntimeState state = RuntimeState::kFailed;
    kfp::GrpcCode code = kfp::GrpcCode::kAborted;
    std::string message;
    WallTime now;
  };
  Result<int> EndInFlightRuns(const InFlightEnd& end);

  Status InsertRecurringRun(const kfp::RecurringRun& r);
  Result<kfp::RecurringRun> GetRecurringRun(const std::string& id);
  Result<ListResult<kfp::RecurringRun>> ListRecurringRuns(const ListRequest& req,
                                                          const std::string& experiment_id,
                                                          const std::string& namespace_);
  Status DeleteRecurringRun(const std::string& id);
  Status SetRecurringRunEnabled(const std::string& id, bool enabled, WallTime now);
  Result<std::vector<ScheduleState>> EnabledSchedules();
  // Runs of a recurring run that have not finished (max_concurrency counts them).
  Result<int64_t> CountActiveRuns(const std::string& recurring_run_id);

  // Execution cache (cachingOptions.enableCache), keyed by KFP's scope
  // ("pipeline/<name>") and fingerprint; `outputs` is JSON text. A newer
  // entry for the same key replaces the older one.
  Status PutCachedExecution(const CachedExecutionRow& row);
  Result<std::optional<CachedExecutionRow>> GetCachedExecution(const std::string& scope,
                                                               const std::string& fingerprint);

  // What `:retry` keeps of a failed run: its finished tasks by key (a path
  // within the run), as JSON text. Replaces what was kept for the run before.
  Status PutRetryTasks(const std::string& run_id,
                       const std::vector<std::pair<std::string, std::string>>& tasks);
  Result<std::vector<std::pair<std::string, std::string>>> GetRetryTasks(const std::string& run_id);

 private:
  explicit Store(std::unique_ptr<Database> db) : db_(std::move(db)) {}
  Status CreateSchema(bool on_disk);
  // Runs `fn` inside BEGIN/COMMIT, rolling back when it fails. Hold mu_.
  template <typename Fn>
  Status InTransaction(Fn&& fn);

  std::mutex mu_;
  std::unique_ptr<Database> db_;
};

}  // namespace kfpbench::store
