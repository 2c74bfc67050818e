// Runs a workload on a simulated cluster: the real engine on a VirtualLoop,
// SimExecutor for the steps, Nodes + Autoscaler for the cluster. Keeps only
// histograms and a bounded time series, so memory follows what is alive at
// once (runs in flight, nodes), not how many runs there were.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/engine.h"
#include "metrics/histogram.h"
#include "sim/model.h"
#include "sim/series.h"
#include "sim/sim_executor.h"
#include "util/result.h"

namespace kfpbench::sim {

// A shared service's load over the simulation (SharedServer).
struct ServiceStats {
  bool modelled = false;
  uint64_t served = 0;
  double utilisation = 0;   // busy time / makespan
  double mean_seconds = 0;  // per request, waiting plus service
  // What was asked of it: all its work at full capacity, so the shortest
  // time in which it could have served everything, however many nodes.
  double demand_seconds = 0;
  // Demand over the window in which runs arrived (open-loop arrivals only;
  // 0 otherwise): above 1, the queue in front of it grows while runs arrive.
  double offered_load = 0;
  int workers = 0;       // the API: calls served at once
  double bandwidth = 0;  // the artifact store: bytes per second
  double bytes = 0;      // the artifact store: bytes uploaded
};

// Where the tasks' time went, for naming what binds (sim/binding.h). Over
// the same window as the utilisation: first task placed to the last run's end.
struct TaskTime {
  double held = 0;     // task-seconds on nodes (placed to end)
  double pending = 0;  // task-seconds ready but not yet placed (every task's, summed)
  // Pending tasks x time, sampled at every tick (scan interval), and the part
  // of it when the autoscaler had nodes on their way.
  double pending_sampled = 0;
  double pending_while_provisioning = 0;
  double allocated_cpu = 0;     // core-seconds requested by tasks on nodes
  double allocated_memory = 0;  // byte-seconds
  ServiceHold api;              // held inside the API (status updates)
  ServiceHold store;            // held inside the artifact store (uploads)
};

// A resource beyond CPU and memory (an accelerator) that nodes offered or
// tasks held, over the same window as the CPU and memory utilisation.
struct ResourceUse {
  std::string name;        // "nvidia.com/gpu"
  double allocated = 0;    // unit-seconds requested by tasks on nodes
  double capacity = 0;     // unit-seconds nodes offered
  double utilisation = 0;  // allocated / capacity
};

struct SimResult {
  int64_t runs = 0;
  int64_t succeeded = 0;
  int64_t failed = 0;
  std::string first_error;        // of the first failed run
  Duration makespan{0};           // first arrival to the last run's end
  metrics::Histogram run_ms;      // run duration: arrival to end
  metrics::Histogram pending_ms;  // per task: ready -> placed
  double node_hours = 0;          // up to the last run's end
  int peak_nodes = 0;             // the most nodes joined at once, up to the last run's end
  // The most nodes live or on their way at once up to the last run's end:
  // above peak_nodes when the autoscaler asked for nodes that had not come
  // up by then.
  int peak_nodes_requested = 0;
  // Requested over allocatable, each integrated exactly over time from the
  // first task placed to the last run's end.
  double cpu_utilisation = 0;
  double memory_utilisation = 0;
  // Likewise for each resource beyond CPU and memory; empty when none was
  // offered or asked for.
  std::vector<ResourceUse> resources;
  int64_t peak_runs_alive = 0;
  uint64_t events = 0;                            // loop events run
  std::map<std::string, int64_t> tasks_by_label;  // container tasks launched, by executor label
  ServiceStats api;                               // run creations and task status updates
  ServiceStats artifact_store;                    // uploads
  Series series{10};
  // Open-loop arrivals (rate, CSV): first to last arrival; 0 otherwise.
  Duration arrival_window{0};
  TaskTime task_time;
};

struct SimOptions {
  // Cluster samples (and autoscaler scans when it is off) this often.
  Duration sample_interval = std::chrono::seconds(10);
  size_t max_series_points = 2048;
  // What the simulation may hold (sim/budget.h); 0: DefaultMemoryBudget().
  uint64_t memory_budget = 0;
  // Called as each run ends, with its final snapshot and its arrival: for a
  // caller that wants per-run records (tests replaying measured levels).
  std::function<void(const engine::RunSnapshot&, WallTime arrived)> on_run_end;
};

Result<SimResult> Simulate(const ClusterSpec& cluster, const WorkloadSpec& workload,
                           const SimOptions& options = {});

// A cluster is impossible if it can never hold a node (no pools, max 0) or a
// pool is malformed (min > max, sizes not positive).
Status ValidateCluster(const ClusterSpec& cluster);

nlohmann::json ToJson(const SimResult& r);
// A few lines for the console. `model_error` (a fraction, the calibration's
// error on levels it did not see; 0: none known) rounds the durations to
// the precision it allows (FormatDurationKnownTo).
std::string Summary(const SimResult& r, double model_error = 0);

// The shared service that bounds the makespan, in words and numbers ("the
// artifact store: 1500 uploads, 2.9Ti at 200Mi/s = 4h10m of transfer alone,
// 93% of the makespan; more nodes cannot help"); empty when no service's
// demand reaches `share` of the makespan or its capacity over the window in
// which runs arrived.
std::string Bottleneck(const SimResult& r, double share = 0.8);
// The demand of one service in words: "1500 uploads, 2.9Ti at 200Mi/s = 4h10m".
std::string DescribeDemand(const ServiceStats& st);
// "artifact store" (a service with a bandwidth) or "API server".
std::string ServiceName(const ServiceStats& st);
// Of the API and the store, the modelled one with the larger demand (the
// store on a tie); null when neither is modelled.
const ServiceStats* BusiestService(const ServiceStats& api, const ServiceStats& store);

// Writes ToJson(r), with the keys of `extra` (an object) beside them, to
// `path` atomically (a temporary file, then rename).
Status WriteResultJson(const SimResult& r, const std::filesystem::path& path,
                       const nlohmann::json& extra = nullptr);

}  // namespace kfpbench::sim
