// The capacity page: one self-contained HTML file (uPlot inlined, nothing
// fetched) with makespan (at the quantile, median and the band of every
// replication) and run duration versus the number of runs and versus the
// number of nodes, the waves estimate beside them, the target time T and the
// answer marked, and the cluster over time (nodes, CPU allocated, pending
// tasks, runs alive).
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "plan/plan.h"
#include "sim/model.h"
#include "sim/simulator.h"
#include "util/result.h"

namespace kfpbench::plan {

struct SweepPoint {
  int nodes = 0;
  int64_t runs = 0;
  double makespan_s = 0;  // at the quantile over replications
  double median_s = 0;    // makespan, median over replications
  double min_s = 0;       // makespan, fastest and slowest replication
  double max_s = 0;
  double p50_s = 0;  // run duration, in the workload's own seed
  double p95_s = 0;
  double waves_s = 0;  // the analytic estimate, waves x single-run time
  // The shared services' demand for these runs alone (runs x one run's):
  // a floor under the makespan that no number of nodes lowers. 0: not modelled.
  double api_s = 0;
  double store_s = 0;
  // Against a time allowed: the share of the replications finishing within
  // it and its Wilson interval; -1 when no time was given.
  double within = -1;
  double within_low = 0;
  double within_high = 0;
  // What binds (sim/binding.h) in the workload's own seed, and the figures
  // it is named by.
  std::string binds;
  double cpu_util = 0;
  double memory_util = 0;
  double pending_share = 0;
  double store_share = 0;
  double api_share = 0;
};

struct Sweeps {
  std::vector<SweepPoint> by_runs;   // at `nodes`, runs from an eighth to twice `runs`
  std::vector<SweepPoint> by_nodes;  // `runs`, nodes from a quarter to four times `nodes`
};

// Simulates the workload (all at once, first pool fixed) around (runs, nodes),
// each point judged against `limit` when it is above zero.
Result<Sweeps> SweepAround(const sim::ClusterSpec& cluster, const sim::WorkloadSpec& workload,
                           int64_t runs, int nodes, const Replications& reps = {},
                           Duration limit = Duration::zero());

struct CapacityPage {
  std::string title;
  std::string summary;             // plain text shown as is (escaped), e.g. plan::Describe
  const Sweeps* sweeps = nullptr;  // omitted when null
  const sim::SimResult* over_time = nullptr;  // its series; omitted when null
  const Answer* answer = nullptr;  // marked on the sweeps (T, K or N, the band); may be null
  // A calibration file's fit.summary (sim/summary_fit.h): the levels fitted,
  // held out and asked, drawn with their errors; may be null.
  const nlohmann::json* fit = nullptr;
};

nlohmann::json PageData(const CapacityPage& page);
std::string RenderCapacityPage(const CapacityPage& page);
// Written atomically (a temporary file, then rename).
Status WriteCapacityPage(const CapacityPage& page, const std::filesystem::path& path);

}  // namespace kfpbench::plan
