// The embedded backend's state in SQLite: pipelines, versions, experiments
// and runs. Thread-safe (one connection behind a mutex; WAL when on disk).
// Errors carry the HTTP status the API should answer with (400, 404, 409, 500).
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "kfp/model.h"
#include "store/list_query.h"
#include "store/sqlite.h"
#include "util/result.h"

namespace kfpbench::store {

template <typename T>
struct ListResult {
  std::vector<T> items;
  int total_size = 0;
  std::string next_page_token;
};

// The parts of a run that change while it executes.
struct RunStatus {
  RuntimeState state = RuntimeState::kUnspecified;
  WallTime finished_at{};
  std::optional<kfp::RpcStatus> error;
  std::vector<kfp::RuntimeStatus> state_history;
  std::vector<kfp::PipelineTaskDetail> task_details;
};

class Store {
 public:
  // An empty path opens an in-memory database.
  static Result<std::unique_ptr<Store>> Open(const std::string& path);

  Status InsertPipeline(const kfp::Pipeline& p);
  Result<kfp::Pipeline> GetPipeline(const std::string& id);
  Result<ListResult<kfp::Pipeline>> ListPipelines(const ListRequest& req,
                                                  const std::string& namespace_);
  // Without `cascade`, a pipeline that still has versions is not deleted (400).
  Status DeletePipeline(const std::string& id, bool cascade);

  // The version's pipeline_spec is stored as JSON text.
  Status InsertPipelineVersion(const kfp::PipelineVersion& v);
  Result<kfp::PipelineVersion> GetPipelineVersion(const std::string& pipeline_id,
                                                  const std::string& version_id);
  Result<ListResult<kfp::PipelineVersion>> ListPipelineVersions(const std::string& pipeline_id,
                                                                const ListRequest& req);
  // The newest version of a pipeline (KFP runs it when no version is named).
  Result<kfp::PipelineVersion> LatestPipelineVersion(const std::string& pipeline_id);

  Status InsertExperiment(const kfp::Experiment& e);
  Result<kfp::Experiment> GetExperiment(const std::string& id);
  Result<ListResult<kfp::Experiment>> ListExperiments(const ListRequest& req,
                                                      const std::string& namespace_);
  Status DeleteExperiment(const std::string& id);

  Status InsertRun(const kfp::Run& run);
  Status UpdateRunStatus(const std::string& run_id, const RunStatus& status);
  Result<kfp::Run> GetRun(const std::string& id);
  Result<ListResult<kfp::Run>> ListRuns(const ListRequest& req, const std::string& experiment_id,
                                        const std::string& namespace_);
  Status DeleteRun(const std::string& id);

 private:
  explicit Store(std::unique_ptr<Database> db) : db_(std::move(db)) {}
  Status CreateSchema(bool on_disk);

  std::mutex mu_;
  std::unique_ptr<Database> db_;
};

}  // namespace kfpbench::store
