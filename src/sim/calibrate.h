// Fits the simulator's step models from measured runs (a results.json):
// per-step duration distributions, the per-task overhead between a task
// becoming ready and starting, and the scheduling delay seen.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "ir/pipeline_spec.h"
#include "metrics/histogram.h"
#include "results/results.h"
#include "sim/model.h"
#include "sim/sim_executor.h"
#include "sim/summary_fit.h"
#include "sim/summary_levels.h"
#include "util/result.h"
#include "util/time.h"

namespace kfpbench::sim {

// One load level as measured, beside what the simulator predicts for it.
struct LevelFit {
  std::string source;         // the results folder
  int64_t runs = 0;           // succeeded runs measured
  double runs_in_flight = 0;  // mean, by Little's law: run time summed over the makespan
  double measured_makespan = 0, predicted_makespan = 0;  // seconds
  double measured_p95 = 0, predicted_p95 = 0;            // run duration, seconds
};

// CreateRun at one level: the client's mean latency, and what a FIFO queue
// of the fitted workers and service time gives for the same submissions.
struct ApiLevelFit {
  std::string source;
  int64_t calls = 0;
  double measured_mean = 0, predicted_mean = 0;  // seconds
};

// The shared services fitted from two or more load levels.
struct SharedServiceFit {
  bool fitted = false;
  std::string why_not;  // when not fitted
  ArtifactStoreSpec artifact_store;
  std::vector<LevelFit> levels;   // predicted with the fitted store
  std::vector<LevelFit> without;  // predicted with steps fitted at the lightest level and no store
  // The API server, from CreateRun: its service time is the median latency
  // at the level with the fewest calls a second, its workers those with
  // which a FIFO queue replaying every level's submissions best gives each
  // level's mean latency.
  bool api_fitted = false;
  std::string api_why_not;
  ApiSpec api;
  std::vector<ApiLevelFit> api_levels;
};

struct Calibration {
  StepModels models;
  std::map<std::string, int64_t> samples;  // by executor label ("default" too)
  int64_t runs = 0;
  Duration overhead_p50{0};
  SharedServiceFit shared;
  // Levels given as summary measurements, and their fit (the step models'
  // source when no results.json level is given).
  SummaryLevels summary_levels;
  std::optional<SummaryFit> summary;
};

// One load level: the runs of one results.json, and its CreateRun
// latencies (empty when the file has no operations, as a hand-made one).
struct MeasuredLevel {
  std::string source;
  std::vector<results::RunRecord> runs;
  metrics::Histogram create_run_us;
};

// What the levels ran on and what the steps upload: the simulator replays
// each level (its measured arrival times) on `cluster`.
struct SharedServiceInputs {
  ClusterSpec cluster;
  std::map<std::string, int64_t> artifact_bytes;  // by executor label
  bool fifo = false;                              // the store serves one upload at a time
};

// Lognormal by log-moments (median = exp(mean ln d), sigma = sd ln d); a
// constant when sigma is below 2% (a stub, or a deterministic step).
exec::DurationDist FitDuration(const std::vector<double>& seconds);

// `runs` are the run records of a results.json. Task names map to executor
// labels through `pipeline` (root DAG tasks) when given; every step also feeds
// "default". Runs that did not succeed are skipped.
Result<Calibration> Calibrate(const std::vector<results::RunRecord>& runs,
                              const ir::PipelineSpec* pipeline);
// Two or more load levels: step models from the lightest (fewest runs in
// flight), with each uploading step's own time being its measured time less
// its upload at the fitted bandwidth; the bandwidth is the one with which
// the simulator best reproduces every level's makespan and p95 run duration
// (least squares on log ratios, a grid then golden-section search), and each
// level's error is stated. With one level, or no step uploading anything,
// only the step models are fitted and `shared.why_not` says why. The API is
// fitted from the levels' CreateRun latencies when some level queued for it
// (else `shared.api_why_not` says so).
Result<Calibration> CalibrateLevels(const std::vector<MeasuredLevel>& levels,
                                    std::shared_ptr<const ir::PipelineSpec> pipeline,
                                    const SharedServiceInputs& inputs);

// RESULTS_DIR/results.json (or a results.json path).
Result<Calibration> CalibrateFile(const std::filesystem::path& path,
                                  const ir::PipelineSpec* pipeline);

// When each of a run's tasks became ready, for the gap to its start: the
// latest end, at or before its start, of the run's tasks (`spans`: start,
// end), or the run's creation when none ended before. Sorted ends and a
// binary search per task, so a run of 300,000 tasks costs n log n, not n^2;
// `compared`, when given, counts the comparisons made.
std::vector<WallTime> ReadyTimes(const std::vector<std::pair<WallTime, WallTime>>& spans,
                                 WallTime created, int64_t* compared = nullptr);

// The file `simulate` reads back (ParseCalibration).
nlohmann::json ToJson(const Calibration& c);

}  // namespace kfpbench::sim
