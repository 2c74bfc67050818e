// Runs a workload on a simulated cluster: the real engine on a VirtualLoop,
// SimExecutor for the steps, Nodes + Autoscaler for the cluster. Keeps only
// histograms and a bounded time series, so memory follows what is alive at
// once (runs in flight, nodes), not how many runs there were.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "metrics/histogram.h"
#include "sim/model.h"
#include "sim/series.h"
#include "util/result.h"

namespace kfpbench::sim {

// A shared service's load over the simulation (SharedServer).
struct ServiceStats {
  bool modelled = false;
  uint64_t served = 0;
  double utilisation = 0;   // busy time / makespan
  double mean_seconds = 0;  // per request, waiting plus service
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
  int peak_nodes = 0;
  // Requested over allocatable, each integrated exactly over time from the
  // first task placed to the last run's end.
  double cpu_utilisation = 0;
  double memory_utilisation = 0;
  int64_t peak_runs_alive = 0;
  uint64_t events = 0;                            // loop events run
  std::map<std::string, int64_t> tasks_by_label;  // container tasks launched, by executor label
  ServiceStats api;                               // run creations and task status updates
  ServiceStats artifact_store;                    // uploads
  Series series{10};
};

struct SimOptions {
  // Cluster samples (and autoscaler scans when it is off) this often.
  Duration sample_interval = std::chrono::seconds(10);
  size_t max_series_points = 2048;
};

Result<SimResult> Simulate(const ClusterSpec& cluster, const WorkloadSpec& workload,
                           const SimOptions& options = {});

// A cluster is impossible if it can never hold a node (no pools, max 0) or a
// pool is malformed (min > max, sizes not positive).
Status ValidateCluster(const ClusterSpec& cluster);

nlohmann::json ToJson(const SimResult& r);
// A few lines for the console.
std::string Summary(const SimResult& r);

// Writes ToJson(r) to `path` atomically (a temporary file, then rename).
Status WriteResultJson(const SimResult& r, const std::filesystem::path& path);

}  // namespace kfpbench::sim
