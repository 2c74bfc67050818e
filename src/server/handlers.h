// The KFP REST handlers: each turns one request into store and engine calls
// and answers in KFP's JSON form. One class; its methods live in one file
// per resource (pipelines_api.cc, runs_api.cc, recurring_runs_api.cc,
// v1_api.cc, ...).
#pragma once

#include <filesystem>

#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <variant>

#include "engine/engine.h"
#include "http/router.h"
#include "ir/pipeline_spec.h"
#include "server/create_requests.h"
#include "server/metrics.h"
#include "server/run_tracker.h"
#include "store/store.h"

namespace kfpbench::server {

class Scheduler;
class PodMetrics;

class Handlers {
 public:
  using Params = http::PathParams;
  using Response = http::Response;
  using Request = http::Request;

  Handlers(store::Store& store, engine::Engine& engine, RunTracker& tracker,
           const ApiMetrics& metrics);

  // Creates KFP's "Default" experiment, which runs without one join.
  Status Init();
  void Register(http::Router& router);
  // Woken when recurring runs change; may be null.
  void set_scheduler(Scheduler* scheduler) { scheduler_ = scheduler; }
  // Where package_url may read local files; empty: nowhere.
  void set_package_root(std::filesystem::path root) { package_root_ = std::move(root); }
  // The engine's work root: the artifact read endpoint serves files below
  // <work root>/<run id> alone.
  void set_work_root(std::filesystem::path root) { work_root_ = std::move(root); }
  // Task resource series appended to /metrics; may be null (stub executor).
  void set_pod_metrics(PodMetrics* pod_metrics) { pod_metrics_ = pod_metrics; }
  // What healthz reports: KFP's multi-user mode (server/access.h).
  void set_multi_user(bool multi_user) { multi_user_ = multi_user; }

  // Stores a run PENDING and submits it to the engine, after checking its
  // pipeline (inline spec, or a stored version: the latest when none is
  // named) and experiment (Default when none). `fire`: the scheduled time
  // of a run a recurring run creates.
  Result<kfp::Run> StartRun(kfp::Run run, std::optional<WallTime> fire = std::nullopt);
  // The scheduler's way in: one run of `r` for `fire`.
  Status StartScheduledRun(const kfp::RecurringRun& r, WallTime fire);

  // A create request whose body was read (and, in multi-user mode,
  // authorized) already: acts on that value, never on a second reading.
  Response Create(CreateBody body);

 private:
  Response Healthz(const Request& r, const Params& p);
  Response Metrics(const Request& r, const Params& p);

  // pipelines_api.cc
  Response UploadPipeline(const Request& r, const Params& p);
  Response UploadPipelineVersion(const Request& r, const Params& p);
  Response CreatePipeline(NewPipeline body);
  Response CreatePipelineAndVersion(NewPipelineAndVersion body);
  Response ListPipelines(const Request& r, const Params& p);
  Response GetPipeline(const Request& r, const Params& p);
  Response GetPipelineByName(const Request& r, const Params& p);
  Response UpdatePipeline(const Request& r, const Params& p);
  Response DeletePipeline(const Request& r, const Params& p);
  Response ListPipelineVersions(const Request& r, const Params& p);
  Response CreatePipelineVersion(const Request& r, const Params& p);
  Response GetPipelineVersion(const Request& r, const Params& p);
  Response UpdatePipelineVersion(const Request& r, const Params& p);
  Response DeletePipelineVersion(const Request& r, const Params& p);

  // experiments_api.cc
  Response CreateExperiment(NewExperiment body);
  // A new experiment stored: its id, creation time and state set here.
  Result<kfp::Experiment> InsertNewExperiment(kfp::Experiment e);
  Response ListExperiments(const Request& r, const Params& p);
  Response GetExperiment(const Request& r, const Params& p);
  Response DeleteExperiment(const Request& r, const Params& p);
  Response ArchiveExperiment(const Request& r, const Params& p);
  Response UnarchiveExperiment(const Request& r, const Params& p);

  // runs_api.cc
  Response CreateRun(NewRun body);
  Response ListRuns(const Request& r, const Params& p);
  Response GetRun(const Request& r, const Params& p);
  Response DeleteRun(const Request& r, const Params& p);
  Response ArchiveRun(const Request& r, const Params& p);
  Response UnarchiveRun(const Request& r, const Params& p);
  Response TerminateRun(const Request& r, const Params& p);
  Response RetryRun(const Request& r, const Params& p);
  Response ReadArtifact(const Request& r, const Params& p);

  // recurring_runs_api.cc
  Response CreateRecurringRun(NewRecurringRun body);
  Response GetRecurringRun(const Request& r, const Params& p);
  Response ListRecurringRuns(const Request& r, const Params& p);
  Response DeleteRecurringRun(const Request& r, const Params& p);
  Response EnableRecurringRun(const Request& r, const Params& p);
  Response DisableRecurringRun(const Request& r, const Params& p);

  // v1_api.cc: the v1beta1 subset KFP's v1 client uses in benchmarks.
  Response V1Healthz(const Request& r, const Params& p);
  Response V1UploadPipeline(const Request& r, const Params& p);
  Response V1ListPipelines(const Request& r, const Params& p);
  Response V1GetPipeline(const Request& r, const Params& p);
  Response V1GetExperiment(const Request& r, const Params& p);
  Response V1ListExperiments(const Request& r, const Params& p);
  Response V1CreateExperiment(NewExperiment body);
  Response V1CreateRun(V1NewRun body);
  Response V1GetRun(const Request& r, const Params& p);
  Response V1ListRuns(const Request& r, const Params& p);
  Response V1DeleteRun(const Request& r, const Params& p);
  // What the harness's cleanup and RANDOM_GETS chain need under --api v1beta1.
  Response V1DeletePipeline(const Request& r, const Params& p);
  Response V1DeletePipelineVersion(const Request& r, const Params& p);
  Response V1ListPipelineVersions(const Request& r, const Params& p);
  Response V1DeleteExperiment(const Request& r, const Params& p);

  // Uploads (v1 and v2): a pipeline and its first version from a multipart
  // "uploadfile".
  // A pipeline upload stored, or refused in KFP's upload error shape.
  std::variant<std::pair<kfp::Pipeline, kfp::PipelineVersion>, Response> UploadFromRequest(
      const Request& r);
  // The parsed spec of a stored version, parsed once and shared by its runs.
  Result<std::shared_ptr<const ir::PipelineSpec>> SpecForVersion(
      const kfp::PipelineVersion& version);
  // The spec a run executes: inline, or its stored version's.
  Result<std::shared_ptr<const ir::PipelineSpec>> SpecForRun(const kfp::Run& run);
  void WakeScheduler();

  store::Store& store_;
  engine::Engine& engine_;
  RunTracker& tracker_;
  const ApiMetrics& metrics_;
  PodMetrics* pod_metrics_ = nullptr;
  Scheduler* scheduler_ = nullptr;
  std::filesystem::path package_root_;
  std::filesystem::path work_root_;
  std::string default_experiment_id_;
  bool multi_user_ = false;
  std::mutex cache_mu_;
  std::map<std::string, std::shared_ptr<const ir::PipelineSpec>> spec_cache_;
};

}  // namespace kfpbench::server
