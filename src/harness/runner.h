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
#include <string_view>
#include <vector>

#include "harness/follower_calls.h"
#include "harness/scenario.h"
#include "kfp/client.h"
#include "results/results.h"
#include "util/result.h"

namespace kfpbench::harness {

struct HarnessOptions {
  Duration poll_interval = std::chrono::milliseconds(500);
  // The run followers' budget: their ListRuns and GetRun calls together, per
  // second (harness/follower_calls.h). 0: unlimited.
  double observer_qps = 20;
  // Poll every run with GetRun each poll interval instead of listing (the
  // follower before listing; for comparison, and targets that list wrongly).
  bool observe_each_run = false;
  // After runTime, how long runs still in flight are awaited (ML runs are
  // long; the wait ends as soon as they do).
  Duration drain_timeout = std::chrono::minutes(30);
  // After an interruption (Ctrl-C), how long runs in flight are awaited.
  Duration grace = std::chrono::seconds(30);
  bool keep = false;  // leave what the benchmark created on the target
  // What every name the benchmark gives on the target starts with
  // ("kfpbench-1a2b3c4d"): RunBenchmark makes one when empty.
  std::string benchmark_id;
  // The target is kfpbench's embedded backend (its database goes with it).
  bool embedded_target = false;
  // run --growth-fill: the name a growth scenario's fill may create under on
  // a real target (experiments NAME-e0, NAME-e1, ...; pipelines NAME-p0, ...).
  // Empty: growth scenarios fill the embedded backend only.
  std::string growth_fill;
  const std::atomic<bool>* interrupted = nullptr;
  // Set by a second Ctrl-C: stop waiting at once and skip the clean-up.
  const std::atomic<bool>* hurry = nullptr;
  // The client's cancel flag (http::ClientOptions::cancel): the harness sets
  // it when calls in flight must end (the grace has run out, a second
  // Ctrl-C), so a frozen target cannot hold the run for request timeouts.
  std::atomic<bool>* cancel_calls = nullptr;
  // Stop the load when more than this fraction of API calls failed (after at
  // least kMinCallsForErrorRate calls). 1.0: never.
  double max_error_rate = 1.0;
  static constexpr uint64_t kMinCallsForErrorRate = 20;
  // Called once the runs are done and before clean-up deletes them (and their
  // pods): e.g. run --kube-context reading pod lifecycles.
  std::function<void(results::BenchmarkResults&)> before_cleanup;
  // Called with the results as they stand (redacted, marked partial) when
  // the load starts, every `checkpoint_interval` while it runs, and once it
  // has ended, before clean-up: a clean-up that hangs, a second Ctrl-C or a
  // SIGKILL then loses at most one interval of what was measured.
  std::function<void(const results::BenchmarkResults&)> checkpoint;
  Duration checkpoint_interval = std::chrono::seconds(10);
};

struct UploadedPipeline {
  std::string pipeline_id;
  std::string name;
};

// What shapes and modes measure beyond calls and runs: the sections of
// results::kMeasuredFields (a stress search's steps, a schedule's fires, a
// growth curve), which runners fill through Context::Record. Only those
// sections are set.
using Findings = results::BenchmarkResults;
// `findings`' sections added to `results` by their merge rules.
void AddFindings(const Findings& findings, results::BenchmarkResults& results);

class Context {
 public:
  // `started`: the benchmark's start, which every scenario's startTime
  // counts from.
  Context(kfp::Client& client, results::RunLog& runs, const HarnessOptions& options,
          WallTime started);

  kfp::Client& client() { return client_; }
  // The run followers' client and budget, recorded apart from the workload.
  FollowerCalls& follower_calls() { return *follower_calls_; }
  const FollowerCalls& follower_calls() const { return *follower_calls_; }
  results::RunLog& runs() { return runs_; }
  const HarnessOptions& options() const { return options_; }
  WallTime started() const { return started_; }

  // True once Ctrl-C was pressed or the benchmark aborted itself.
  bool Interrupted() const;
  // True after a second Ctrl-C.
  bool Hurried() const;
  // When to stop waiting for anything: `give_up`, or sooner once interrupted
  // (the grace after the interruption was first noticed; WallTime::min(),
  // already past, if hurried).
  WallTime StopWaitingAt(WallTime give_up) const;
  void Abort(std::string reason);
  std::string abort_reason() const;
  size_t runs_created() const;
  // Sleeps until `t`, waking early on interruption. False if interrupted.
  bool SleepUntil(WallTime t) const;

  // Uploads a pipeline file once per benchmark; later calls share the upload.
  // `cache` false uploads it with every task's caching off (a second upload
  // of the same file, shared by the scenarios that ask so).
  Result<UploadedPipeline> EnsurePipeline(const std::filesystem::path& path, bool cache = true);
  // Reads a pipeline file (the same text for every upload of it).
  Result<std::string> ReadPipelineFile(const std::filesystem::path& path);
  // Texts already read (path -> text), e.g. by the preflight: not read again.
  void AddPipelineTexts(const std::map<std::string, std::string>& texts);
  void TrackPipeline(const UploadedPipeline& pipeline);
  void TrackRun(const std::string& run_id);
  void TrackExperiment(const std::string& experiment_id);
  void TrackRecurringRun(const std::string& recurring_run_id);
  // What a shape or mode measures beyond calls and runs (a stress search's
  // steps, a schedule's fires, a growth curve), one results section each:
  // runners add to them through `update`, under the context's lock.
  void Record(const std::function<void(Findings&)>& update);
  Findings findings() const;
  // What a growth fill created under `prefix` is deleted by experiment at
  // clean-up (harness/growth_fill.h), unless --keep.
  void TrackGrowthFill(const std::string& prefix);

  // "<benchmark id>-<what>": every name the benchmark gives on the target,
  // so `kfpbench cleanup --benchmark-id` finds exactly its objects.
  std::string Name(std::string_view what) const;
  // A description that says which benchmark made the object.
  std::string Description(std::string_view what) const;

  struct CleanUpReport {
    results::TargetObjects created, deleted;
    std::vector<std::string> failures;  // what could not be deleted, and why
  };
  // Deletes what was created (recurring runs, runs, experiments, pipelines),
  // unless --keep.
  CleanUpReport CleanUp();
  results::TargetObjects created() const;

 private:
  kfp::Client& client_;
  results::RunLog& runs_;
  const HarnessOptions& options_;
  const WallTime started_;
  std::unique_ptr<FollowerCalls> follower_calls_;
  mutable std::mutex mu_;
  std::atomic<bool> aborted_{false};
  mutable std::atomic<int64_t> interrupted_at_ns_{0};  // 0: not noticed yet
  std::string abort_reason_;
  std::map<std::string, UploadedPipeline> pipelines_;  // by canonical path, or by id
  std::map<std::string, std::string> file_cache_;      // path -> content
  std::vector<std::string> run_ids_;
  std::vector<std::string> experiment_ids_;
  std::vector<std::string> recurring_run_ids_;
  Findings findings_;
  std::vector<std::string> growth_fills_;
  results::TargetObjects created_;
};

class ModeRunner {
 public:
  virtual ~ModeRunner() = default;
  // Runs one scenario from now for scenario.run_time. Records what it measures
  // into the context; an Error means the scenario could not go on.
  virtual Status Run(const Scenario& scenario, Context& context) = 0;
};

}  // namespace kfpbench::harness
