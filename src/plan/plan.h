// The three capacity questions, answered by search over the simulator, each
// with the analytic cross-check (waves x single-run time) beside it:
//   NodesFor: fewest nodes that finish N runs within T;
//   TimeFor:  how long N runs take on K nodes;
//   RunsIn:   most runs that finish within T on K nodes.
// Runs arrive all at once; nodes are the cluster's first pool, fixed at K
// (no autoscaler: the question is about a size, not a policy).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/model.h"
#include "sim/simulator.h"
#include "util/result.h"

namespace kfpbench::plan {

struct Probe {
  int nodes = 0;
  int64_t runs = 0;
  Duration makespan{0};
};

struct Analytic {
  Duration single_run{0};  // one run alone on the cluster: its critical path
  int width = 0;           // most tasks of one run at once (widest level of the DAG)
  int slots_per_node = 0;  // tasks of the largest request that fit one node
  int64_t runs_per_wave = 0;
  int64_t waves = 0;
  Duration time{0};  // waves x single_run
};

struct Answer {
  int nodes = 0;
  int64_t runs = 0;
  Duration makespan{0};  // simulated, for the answer
  Analytic analytic;
  int analytic_nodes = 0;     // NodesFor: what the waves formula asks for
  int64_t analytic_runs = 0;  // RunsIn
  std::string explanation;    // when the two disagree by more than 15%
  std::vector<Probe> probes;  // every simulation the search ran
};

Result<Answer> TimeFor(const sim::ClusterSpec& cluster, const sim::WorkloadSpec& workload,
                       int64_t runs, int nodes);
Result<Answer> NodesFor(const sim::ClusterSpec& cluster, const sim::WorkloadSpec& workload,
                        int64_t runs, Duration deadline);
Result<Answer> RunsIn(const sim::ClusterSpec& cluster, const sim::WorkloadSpec& workload,
                      Duration deadline, int nodes);

// The waves model for `runs` on `nodes`.
Result<Analytic> Waves(const sim::ClusterSpec& cluster, const sim::WorkloadSpec& workload,
                       int64_t runs, int nodes);

// `cluster` with its first pool fixed at `nodes` and no autoscaler: what
// every probe of the search simulates.
sim::ClusterSpec FixedNodes(const sim::ClusterSpec& cluster, int nodes);

// `runs` runs submitted at once on `nodes` nodes, simulated; an Error when the
// simulation fails or any run fails in it.
Result<sim::SimResult> SimulateAllAtOnce(const sim::ClusterSpec& cluster,
                                         const sim::WorkloadSpec& workload, int64_t runs,
                                         int nodes);

nlohmann::json ToJson(const Answer& a);
std::string Describe(const Answer& a);

}  // namespace kfpbench::plan
