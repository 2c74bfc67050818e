// The growth shape (docs/SCENARIOS.md): filling a target through its API up
// to a number of runs stored, measuring a read-and-write mix there, and
// deleting what the fill made. Everything the fill creates is named from one
// prefix (experiments <prefix>-e<n>, pipelines <prefix>-p<n>, runs inside those
// experiments), so a fill or a clean-up that was interrupted resumes by
// listing what is there: nothing is kept in memory between attempts.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/scenario.h"
#include "kfp/client.h"
#include "results/growth.h"
#include "util/result.h"

namespace kfpbench::harness {

// The growth shape's settings (scenario key "growth"): level by level, fill
// the target through the API until it stores `levels[i]` runs (with
// experiments, pipelines and versions in proportion), then measure a
// read-and-write mix there for measure_time.
struct GrowthSettings : ShapeData {
  std::vector<int64_t> levels;  // runs stored, strictly increasing
  Duration measure_time{};      // per level
  int fill_concurrency = 8;     // CreateRun calls in flight while filling
  int measure_concurrency = 4;  // closed-loop workers of the mix
  int runs_per_experiment = 100;
  int runs_per_pipeline = 1000;
  int versions_per_pipeline = 2;  // the first comes with the upload
  Duration settle_timeout = std::chrono::minutes(5);
  int64_t extrapolate_to = 1000000;  // runs; 0: none
};

struct FillPlan {
  std::string prefix;         // names of everything the fill creates
  std::string pipeline_text;  // the tiny pipeline each fill pipeline and version is
  nlohmann::json params = nlohmann::json::object();
  int concurrency = 8;
  int runs_per_experiment = 100;
  int runs_per_pipeline = 1000;
  int versions_per_pipeline = 2;
};

// The plan of a scenario's growth shape under `prefix`.
FillPlan PlanFill(const Scenario& scenario, const std::string& prefix, std::string pipeline_text);

// What the target stores, as it says (total_size of unfiltered lists).
struct StoredCounts {
  int64_t runs = 0, experiments = 0, pipelines = 0;
};
Result<StoredCounts> CountStored(kfp::Client& client);

struct FillOutcome {
  int64_t runs_created = 0, experiments_created = 0, pipelines_created = 0, versions_created = 0;
  int64_t failures = 0;  // CreateRun calls refused
  double seconds = 0;
  bool stopped = false;  // `stop` said so before the level was reached
};

// Creates runs (and the experiments, pipelines and versions they go in, in
// the plan's proportion) until the target stores `level` runs, `concurrency`
// CreateRun calls at a time. Stops early, without error, once `stop()` is
// true; called again it carries on from what the target stores. An Error when
// the target keeps refusing (more than 5% of at least 100 calls, or 20 in a
// row), with the last reason.
Result<FillOutcome> FillTo(kfp::Client& client, const FillPlan& plan, int64_t level,
                           const std::function<bool()>& stop);

// What a fill made that the measured mix uses: its experiments (where
// ListRuns:experiment looks and CreateRun adds) and each pipeline's first
// version (pipeline id, version id).
struct FillObjects {
  std::vector<std::string> experiment_ids;
  std::vector<std::pair<std::string, std::string>> pipeline_versions;
};
Result<FillObjects> FindFill(kfp::Client& client, const std::string& prefix);

// Waits until no run is PENDING or RUNNING, or `give_up` passes, or `stop()`.
// Returns how many were still active (0: settled).
Result<int64_t> Settle(kfp::Client& client, WallTime give_up, const std::function<bool()>& stop);

struct CleanUpOutcome {
  int64_t runs_deleted = 0, experiments_deleted = 0, pipelines_deleted = 0;
  std::vector<std::string> failures;
  bool stopped = false;
};

// Deletes every run in the experiments named <prefix>-e<n>, then those
// experiments, then the pipelines named <prefix>-p<n> (with their versions),
// `concurrency` calls at a time; nothing else. Stops early once `stop()` is
// true; called again it deletes what is left.
CleanUpOutcome CleanUpFill(kfp::Client& client, const std::string& prefix, int concurrency,
                           const std::function<bool()>& stop);

}  // namespace kfpbench::harness
