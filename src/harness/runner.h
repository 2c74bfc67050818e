// Every scenario mode is a ModeRunner. The harness gives each one a Context:
// the KFP client, where to record runs, the scenario's deadline, and shared
// services (pipelines uploaded once, clean-up lists, interruption).
#pragma once

#include <atomic>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "harness/results.h"
#include "harness/scenario.h"
#include "kfp/client.h"
#include "util/result.h"

namespace kfpbench::harness {

struct HarnessOptions {
  Duration poll_interval = std::chrono::milliseconds(500);
  // After runTime, how long runs still in flight are awaited.
  Duration drain_timeout = std::chrono::minutes(10);
  // After an interruption (Ctrl-C), how long runs in flight are awaited.
  Duration grace = std::chrono::seconds(30);
  bool keep = false;  // leave what the benchmark created on the target
  const std::atomic<bool>* interrupted = nullptr;
  // Stop the load when more than this fraction of API calls failed (after at
  // least kMinCallsForErrorRate calls). 1.0: never.
  double max_error_rate = 1.0;
  static constexpr uint64_t kMinCallsForErrorRate = 20;
  // Called once the runs are done and before clean-up deletes them (and their
  // pods): e.g. run --kube-context reading pod lifecycles.
  std::function<void(BenchmarkResults&)> before_cleanup;
};

// A moment of a benchmark in progress, for a live status line.
struct Progress {
  Duration elapsed{};
  Duration planned{};  // the longest startTime + runTime
  size_t runs_created = 0;
  size_t runs_finished = 0;  // created runs followed to a terminal state (or given up on)
  size_t runs_refused = 0;   // CreateRun failed: never created
  uint64_t api_calls = 0;
  uint64_t api_errors = 0;
  int64_t p99_us = 0;                        // over every API call so far
  std::map<std::string, int> runs_by_state;  // runs followed to the end, by last state
  int late_starts = 0;                       // open loop: sent later than kLateStart
};

struct UploadedPipeline {
  std::string pipeline_id;
  std::string name;
};

class Context {
 public:
  Context(kfp::Client& client, RunLog& runs, const HarnessOptions& options);

  kfp::Client& client() { return client_; }
  RunLog& runs() { return runs_; }
  const HarnessOptions& options() const { return options_; }

  // True once Ctrl-C was pressed or the benchmark aborted itself.
  bool Interrupted() const;
  void Abort(std::string reason);
  std::string abort_reason() const;
  size_t runs_created() const;
  // Sleeps until `t`, waking early on interruption. False if interrupted.
  bool SleepUntil(WallTime t) const;

  // Uploads a pipeline file once per benchmark; later calls share the upload.
  Result<UploadedPipeline> EnsurePipeline(const std::filesystem::path& path);
  // Reads a pipeline file (the same text for every upload of it).
  Result<std::string> ReadPipelineFile(const std::filesystem::path& path);
  void TrackPipeline(const UploadedPipeline& pipeline);
  void TrackRun(const std::string& run_id);
  void TrackExperiment(const std::string& experiment_id);
  void TrackRecurringRun(const std::string& recurring_run_id);
  void AddStressStep(const StressStep& step);
  void AddSchedule(const ScheduleSummary& summary);
  std::vector<ScheduleSummary> schedules() const;
  std::vector<StressStep> stress_steps() const;

  // Deletes what was created (runs, experiments, pipelines), unless --keep.
  // Returns what could not be deleted.
  std::vector<std::string> CleanUp();

 private:
  kfp::Client& client_;
  RunLog& runs_;
  const HarnessOptions& options_;
  mutable std::mutex mu_;
  std::atomic<bool> aborted_{false};
  std::string abort_reason_;
  std::map<std::string, UploadedPipeline> pipelines_;  // by canonical path, or by id
  std::map<std::string, std::string> file_cache_;      // path -> content
  std::vector<std::string> run_ids_;
  std::vector<std::string> experiment_ids_;
  std::vector<StressStep> stress_steps_;
  std::vector<std::string> recurring_run_ids_;
  std::vector<ScheduleSummary> schedules_;
};

class ModeRunner {
 public:
  virtual ~ModeRunner() = default;
  // Runs one scenario from now for scenario.run_time. Records what it measures
  // into the context; an Error means the scenario could not go on.
  virtual Status Run(const Scenario& scenario, Context& context) = 0;
};

// The runner for a mode, or an Error naming a mode this build cannot run yet.
Result<std::unique_ptr<ModeRunner>> MakeRunner(Mode mode);

}  // namespace kfpbench::harness
