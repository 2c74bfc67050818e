// What a benchmark measured: every API call (per-operation histograms) and
// every run (durations, queue wait, per-task timing), plus what it ran against.
#pragma once

#include <algorithm>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kfp/runtime_state.h"
#include "metrics/histogram.h"
#include "metrics/recorder.h"
#include "results/growth.h"
#include "results/pod_lifecycle.h"
#include "util/time.h"

namespace kfpbench::results {

struct TaskTiming {
  std::string name;
  RuntimeState state = RuntimeState::kUnspecified;
  WallTime created{}, started{}, finished{};
  bool dag = false;  // a DAG task (it has children); it starts with its run, so it is no step
  // Answered from KFP's cache: SKIPPED with a cache fingerprint (a task
  // skipped by a condition has none). It ran nothing.
  bool cached = false;
  // Braced defaults keep brace-initialised TaskTimings free of
  // -Wmissing-field-initializers.
  std::string pod_name{};  // as the server reports it; how resource series name the task
  // The step's container CPU seconds and peak working-set memory, when a
  // source gave them (resource_source: "prometheus" for --prometheus).
  std::optional<double> cpu_seconds{};
  std::optional<int64_t> peak_memory_bytes{};
  std::string resource_source{};
  // Fuller figures, from `kfpbench profile` or a cluster's own monitoring
  // (docs/CAPACITY.md): CPU cores and memory bytes, peak and p95, and the
  // samples behind them when kept.
  struct Usage {
    double peak = 0, p95 = 0;
  };
  std::optional<Usage> cpu_cores{}, memory_bytes{};
  std::vector<double> cpu_cores_samples{}, memory_bytes_samples{};
  int resource_samples = 0;
  // Its pod_name, then its child_tasks' pod names (run --kube-context reads them).
  std::vector<std::string> pods = {};
};

struct RunRecord;
// A run whose every step was answered from KFP's cache: it ran nothing, and
// its duration is the control plane's alone.
bool FullyCached(const RunRecord& run);

struct RunRecord {
  size_t scenario = 0;
  std::string run_id;
  RuntimeState state = RuntimeState::kUnspecified;  // last state seen
  std::string error;
  WallTime intended{};           // open loop: when the run was meant to start (zero in closed loop)
  std::string recurring_run_id;  // scheduled runs: the schedule that made it
  // The server's experiment of the run, as the follower lists it by (not
  // written to results.json).
  std::string experiment_id;
  WallTime scheduled{};  // scheduled runs: the fire time the server meant
  WallTime submitted{};  // client: CreateRun sent
  WallTime created{};    // server: created_at
  WallTime finished{};   // server: finished_at (zero until terminal)
  WallTime observed{};   // client: terminal state first seen
  std::vector<TaskTiming> tasks;

  bool Finished() const { return IsTerminal(state) && finished.time_since_epoch().count() != 0; }
  // created_at -> finished_at, as the server recorded them.
  Duration RunDuration() const { return finished - created; }
  // Open loop: how late CreateRun was sent after its intended start.
  std::optional<Duration> StartDelay() const;
  // Open loop: intended start -> the client saw the run finish. Timed from the
  // intended start, so a server that falls behind shows up here.
  std::optional<Duration> LatencyFromIntended() const;
  // Scheduled runs: created_at - scheduled_at, how late the trigger fired.
  std::optional<Duration> TriggerLag() const;
  // created_at -> the first step (non-DAG task) started: time spent waiting
  // for the control plane and for capacity.
  std::optional<Duration> QueueWait() const;
};

// Thread-safe collection of run records.
class RunLog {
 public:
  void Add(RunRecord record);
  std::vector<RunRecord> Records() const;
  size_t size() const;
  // Records of runs whose CreateRun failed (no run_id): never created.
  size_t NotCreated() const;
  // Counts for live metrics, without copying the records.
  std::map<std::string, int> CountByState() const;
  int LateStarts() const;

 private:
  mutable std::mutex mu_;
  std::vector<RunRecord> records_;
  std::map<std::string, int> by_state_;  // kept as records arrive, for CountByState()
  int late_starts_ = 0;
  size_t not_created_ = 0;
};

struct TargetInfo {
  std::string url;
  bool embedded = false;
  std::string api_version = "v2beta1";
  nlohmann::json healthz;
  // Braced defaults keep brace-initialised TargetInfos free of
  // -Wmissing-field-initializers.
  std::string origin{};      // where the target came from (harness::TargetOptions::origin)
  std::string namespace_{};  // --namespace as sent; empty: none
  // The embedded backend's executor ("process" or "stub") and, when the
  // preflight chose stub for pipelines that cannot run as processes, why.
  std::string executor{};
  std::string executor_reason{};
};

// What the report needs to know of each scenario beyond its source.
struct ScenarioInfo {
  size_t index = 0;
  std::string mode;
  int64_t artifact_bytes = 0;  // LARGE_DATASET
};

// Per step of LARGE_DATASET runs: artifact bytes over step duration.
struct StepThroughput {
  int64_t artifact_bytes = 0;
  metrics::Histogram kib_per_s;  // one sample per finished step
};

// Per step name, over every run: how long the step ran, and how long it
// waited between becoming ready (created) and starting (placed, launched).
struct StepStats {
  metrics::Histogram duration_ms;
  metrics::Histogram scheduling_delay_ms;
};

// One step of a stress scenario: the rate tried and whether the SLO held.
struct StressStep {
  size_t scenario = 0;
  double rate_per_minute = 0;
  int runs = 0;
  int failed = 0;      // CreateRun failed, or the run did not succeed
  int64_t p95_ms = 0;  // latency from intended start, finished runs
  double error_rate = 0;
  bool held = false;
};

// Why a stress scenario's search ended: only kSloBroken means the peak is
// the highest rate the target sustains; the others say it held as far as
// the search went.
enum class StressStopReason { kSloBroken, kRunTimeReached, kMaxRateReached, kInterrupted };
std::string_view StressStopReasonName(StressStopReason reason);  // "slo_broken", ...
std::optional<StressStopReason> ParseStressStopReason(std::string_view name);

struct StressStop {
  size_t scenario = 0;
  StressStopReason reason = StressStopReason::kRunTimeReached;
  std::string detail;  // for people: "at 16/min the p95 was 2.1s, above the SLO's 1s"
};

// A SCHEDULED_RUNS scenario: how many fires the schedules owed, how many runs
// the server made.
struct ScheduleSummary {
  size_t scenario = 0;
  int recurring_runs = 0;
  int expected_fires = 0;
  int observed_fires = 0;
  int Missed() const { return std::max(0, expected_fires - observed_fires); }
};

// `run --repeat N`: what one repetition measured, kept in the combined results
// so `compare` can test over repetitions.
struct RepetitionSummary {
  WallTime started{}, finished{};
  std::map<std::string, metrics::Histogram> latency_us;  // per operation
  metrics::Histogram run_duration_ms;                    // finished runs
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
  int64_t p99_us = 0;                              // over every API call so far
  std::map<std::string, int> runs_by_state;        // runs followed to the end, by last state
  int late_starts = 0;                             // open loop: sent later than kLateStart
  std::map<std::string, uint64_t> observer_calls;  // the run follower's calls, by operation
};

// What the benchmark itself asked of the target to follow its runs (the run
// follower's ListRuns and GetRun calls), kept apart from the workload's calls
// so a user sees what observing cost (docs/RESULTS.md, "observer").
struct ObserverSummary {
  double qps_budget = 0;  // --observer-qps; 0: unlimited
  Duration poll_interval{};
  std::map<std::string, metrics::OperationStats> operations;
  uint64_t list_sweeps = 0;      // passes over the in-flight runs by ListRuns
  uint64_t runs_by_listing = 0;  // runs whose end a listing discovered
  uint64_t runs_by_polling = 0;  // runs polled one by one (the fallback)
  std::string polling_reason;    // why the fallback was used, when it was
  // Client time the terminal state was first seen - the server's finished_at,
  // in ms, over finished runs: how much coarser observation widened
  // `observed` (never the durations, which are the server's own).
  metrics::Histogram observe_lag_ms;
  Duration budget_wait{};  // total time calls waited for the budget

  uint64_t Calls() const;
  bool Used() const { return Calls() > 0 || runs_by_listing + runs_by_polling > 0; }
};

// What kfpbench itself used while the benchmark ran (getrusage, /proc/self):
// evidence the load generator was not the bottleneck.
struct HarnessUsage {
  double wall_s = 0;
  double cpu_user_s = 0, cpu_system_s = 0;
  int64_t peak_rss_bytes = 0;  // the process's high-water mark (VmHWM)
  int64_t rss_bytes = 0;       // at the end (VmRSS)
  int threads = 0;             // at the end
  // CPU seconds over wall seconds: 1.0 is one core busy the whole time.
  double CpuCores() const { return wall_s > 0 ? (cpu_user_s + cpu_system_s) / wall_s : 0; }
  bool Measured() const { return wall_s > 0; }
};

// 429/503 answers that carried Retry-After (kfp/client.h): idempotent calls
// waited and were sent again; the others were not resent.
struct BackPressure {
  uint64_t waits = 0;  // idempotent calls that waited Retry-After and were resent
  Duration waited{};
  uint64_t not_resent = 0;  // non-idempotent calls refused with Retry-After: left failed
  std::map<std::string, uint64_t> by_operation;
  bool Seen() const { return waits + not_resent > 0; }
};

// Objects a benchmark made on the target, or deleted there afterwards.
struct TargetObjects {
  int64_t pipelines = 0, experiments = 0, runs = 0, recurring_runs = 0;
  int64_t total() const { return pipelines + experiments + runs + recurring_runs; }
};

struct BenchmarkResults {
  static constexpr int kSchemaVersion = 1;
  std::string kfpbench_version;
  WallTime started{}, finished{};
  bool partial = false;
  std::string partial_reason;
  TargetInfo target;
  std::string scenario_path;
  nlohmann::json scenario_source;
  double time_scale = 1.0;  // run --time-scale: every time of the file multiplied by it
  std::vector<ScenarioInfo> scenarios;
  int shard_index = 0;  // --shard i/N
  int shard_count = 1;
  std::map<std::string, metrics::OperationStats> operations;
  std::vector<RunRecord> runs;
  std::vector<StressStep> stress_steps;
  std::vector<StressStop> stress_stops;  // one per stress scenario
  std::vector<ScheduleSummary> schedules;
  std::vector<GrowthCurve> growth;            // one per growth scenario
  std::vector<std::string> errors;            // scenario-level failures
  std::vector<std::string> cleanup_failures;  // things left behind on the target
  // Every name the benchmark gives on the target starts with "<id>-"
  // (harness::Context::Name); `kfpbench cleanup --benchmark-id` deletes by it.
  std::string benchmark_id;
  TargetObjects created, deleted;  // deleted: by the clean-up at the end
  bool kept = false;               // --keep: nothing was deleted
  // Idempotent requests sent a second time because a kept-alive connection
  // closed as they went out (http::Client::retries); counted apart from the
  // operations, which record each call once.
  uint64_t resent_requests = 0;
  ObserverSummary observer;  // the run follower's own calls, apart from `operations`
  HarnessUsage harness_usage;
  BackPressure back_pressure;
  nlohmann::json collectors = nlohmann::json::array();  // --collector outputs
  PodLifecycle pod_lifecycle;                           // --kube-context
  std::vector<RepetitionSummary> repetitions;           // run --repeat: one per repetition

  // The workload's API calls, every operation's (the observer's apart).
  uint64_t ApiCalls() const;
  // Histograms of run duration and queue wait over finished runs, in ms.
  metrics::Histogram RunDurationsMs() const;
  metrics::Histogram QueueWaitsMs() const;
  metrics::Histogram StartDelaysMs() const;  // open-loop runs only
  metrics::Histogram TriggerLagsMs() const;  // scheduled runs only
  // A stress scenario's highest rate that held its SLO (runs per minute; 0:
  // none held).
  double StressPeakPerMinute(size_t scenario) const;
  // Open-loop runs sent later than this after their intended start count as late.
  static constexpr std::chrono::milliseconds kLateStart{100};
  int LateStarts() const;
  std::map<std::string, int> RunsByState() const;
  std::map<std::string, StepStats> Steps() const;
  // Step name -> throughput, over the runs of LARGE_DATASET scenarios.
  std::map<std::string, StepThroughput> ArtifactThroughput() const;

  // Replaces every registered secret (util/secrets.h) in the text the target
  // or the harness put into the results: run errors echo what the server
  // was sent, and a server that echoes request headers would otherwise put
  // a token into results.json and report.html. Called once the load is done.
  void RedactSecrets();
};

}  // namespace kfpbench::results
