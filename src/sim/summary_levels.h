// Load levels given as summary measurements: what a table from an earlier
// test or a dashboard holds (runs, how they arrived, the nodes, the
// makespan, maybe the p50/p95 run time and the peak nodes), where a
// results.json would hold every run. `kfpbench calibrate` takes such a file
// beside results.json levels and fits the simulator's free parameters to it
// (sim/summary_fit.h). The format is documented in docs/CAPACITY.md:
//
//   {"node": {"cpu": "16", "memory": "64Gi"},
//    "summary_levels": [
//      {"name": "1 run", "runs": 1, "nodes": {"min": 1, "max": 20},
//       "makespan": "8m40s", "p95": "8m40s", "peak_nodes": 1},
//      {"runs": 1000, "nodes": 20, "arrivals": {"kind": "rate", "rate_per_second": 0.5},
//       "makespan": "6h10m", "held_out": true},
//      {"name": "the question", "runs": 1000, "nodes": 40}]}
//
// A level without a makespan is a question: every fit predicts it. Every
// error names the field ("summary_levels[1].makespan: ...").
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/model.h"
#include "util/result.h"
#include "util/time.h"

namespace kfpbench::sim {

struct SummaryLevel {
  std::string name;  // "level 3" when the file gives none
  int64_t runs = 0;
  WorkloadSpec::ArrivalKind arrival_kind = WorkloadSpec::ArrivalKind::kAllAtOnce;
  double rate_per_second = 0;
  int64_t concurrency = 0;
  // Node shape and count: min = max for a fixed count, initial = min.
  NodePool pool;
  // Measured, in seconds; no makespan: a question, predicted only.
  std::optional<double> makespan, p50, p95;
  std::optional<int> peak_nodes;
  bool held_out = false;  // measured but kept out of the fit: predicted and checked

  bool measured() const { return makespan.has_value(); }
};

struct SummaryLevels {
  std::vector<SummaryLevel> levels;
  // How closely the measurements are known (relative): fits whose error on
  // every fitted level is within it explain the data equally well.
  double tolerance = 0.03;
  AutoscalerSpec autoscaler;  // its provisioning delay is fitted unless given
  bool delay_given = false;
  std::optional<Duration> overhead;  // per step; fitted unless given
  // Step seconds by executor label, measured (a results.json given beside
  // the file): the split across steps is then theirs, not fitted.
  std::map<std::string, double> measured_steps;
};

// Whether `file` (a parsed JSON document) is a summary-levels file.
bool IsSummaryLevels(const nlohmann::json& file);

Result<SummaryLevels> ParseSummaryLevels(std::string_view text);

}  // namespace kfpbench::sim
