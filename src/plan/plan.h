// The three capacity questions, answered by search over the simulator, each
// with the analytic cross-check (waves x expected single-run time) beside it:
//   NodesFor: fewest nodes that finish N runs within T;
//   TimeFor:  how long N runs take on K nodes;
//   RunsIn:   most runs that finish within T on K nodes.
// Runs arrive all at once; nodes are the cluster's first pool, fixed at K
// (no autoscaler: the question is about a size, not a policy).
//
// Every probe is simulated once per replication (seeds seed, seed + 1, ...)
// and judged by its makespan at the chosen quantile over them, so an answer
// says "90% of replications finish in T". Step times are common random
// numbers (sim/step_draw.h): a probe with more runs or nodes keeps every step
// time of a smaller one, so the searches compare like with like.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/model.h"
#include "sim/simulator.h"
#include "util/result.h"

namespace kfpbench::plan {

// How many seeds each probe is simulated with, and the quantile of their
// makespans an answer is held to.
struct Replications {
  int count = 20;
  double quantile = 0.9;
  // Replications simulated at once, each on a thread of its own: they are
  // independent, and a simulation is single-threaded. 0: one per hardware
  // thread. Memory grows with it: each holds its own runs.
  int threads = 0;
};

// `count` in [1, 10000] and `quantile` in (0, 1].
Status CheckReplications(const Replications& r);

// "0.9", "90%", "p90" or "P90" -> 0.9.
Result<double> ParseQuantile(const std::string& text);

struct Probe {
  int nodes = 0;
  int64_t runs = 0;
  Duration makespan{0};  // at the quantile over replications
  Duration median{0};
  Duration min{0};
  Duration max{0};
  std::vector<Duration> makespans;  // one per replication, in seed order
  // How many replications finish within `limit`.
  int Within(Duration limit) const;
};

struct Analytic {
  Duration single_run{0};  // one run alone with every step at its expected time
  int width = 0;           // most tasks of one run at once (widest level of the DAG)
  int slots_per_node = 0;  // tasks of the largest request that fit one node
  int64_t runs_per_wave = 0;
  int64_t waves = 0;
  Duration time{0};  // waves x single_run
  // What one run asks of each shared service (the single run's demand):
  // N runs ask N times as much, which no number of nodes shortens.
  sim::ServiceStats api_per_run;
  sim::ServiceStats store_per_run;
};

// The shared service whose demand for `runs` runs alone reaches `share` of
// `horizon`, in words and numbers ("the artifact store: 1800 uploads, 3.5Ti
// at 200Mi/s = 5h7m of transfer for 600 runs; more nodes cannot help");
// empty when none does.
std::string ServiceLimit(const Analytic& a, int64_t runs, Duration horizon, double share = 0.8);

struct Answer {
  int nodes = 0;
  int64_t runs = 0;
  Duration deadline{0};  // NodesFor and RunsIn: the time allowed
  Replications replications;
  Probe at_answer;       // the probe of the answer, with its spread
  Duration makespan{0};  // at_answer.makespan: at the quantile
  Analytic analytic;
  int analytic_nodes = 0;     // NodesFor: what the waves formula asks for
  int64_t analytic_runs = 0;  // RunsIn
  std::string explanation;    // when the two disagree by more than 15%
  std::string bottleneck;     // ServiceLimit at the answer, against its makespan
  std::vector<Probe> probes;  // every probe the search ran
};

Result<Answer> TimeFor(const sim::ClusterSpec& cluster, const sim::WorkloadSpec& workload,
                       int64_t runs, int nodes, const Replications& reps = {});
Result<Answer> NodesFor(const sim::ClusterSpec& cluster, const sim::WorkloadSpec& workload,
                        int64_t runs, Duration deadline, const Replications& reps = {});
Result<Answer> RunsIn(const sim::ClusterSpec& cluster, const sim::WorkloadSpec& workload,
                      Duration deadline, int nodes, const Replications& reps = {});

// The waves model for `runs` on `nodes`, its single run simulated with the
// expected step times (sim::ExpectedSteps).
Result<Analytic> Waves(const sim::ClusterSpec& cluster, const sim::WorkloadSpec& workload,
                       int64_t runs, int nodes);

// `cluster` with its first pool fixed at `nodes` and no autoscaler: what
// every probe of the search simulates.
sim::ClusterSpec FixedNodes(const sim::ClusterSpec& cluster, int nodes);

// `runs` runs submitted at once on `nodes` nodes, simulated within
// `memory_budget` bytes (0: sim's default); an Error when the simulation
// fails, cannot fit, or any run fails in it.
Result<sim::SimResult> SimulateAllAtOnce(const sim::ClusterSpec& cluster,
                                         const sim::WorkloadSpec& workload, int64_t runs, int nodes,
                                         uint64_t memory_budget = 0);

// SimulateAllAtOnce once per replication seed, summarised.
Result<Probe> Replicate(const sim::ClusterSpec& cluster, const sim::WorkloadSpec& workload,
                        int64_t runs, int nodes, const Replications& reps);

// A duration rounded up to the whole second and printed to it ("2h0m47s"),
// so a time above a limit never prints as the limit.
std::string FormatUpToSecond(Duration d);

// "P90"; "P99.5".
std::string QuantileName(double q);

nlohmann::json ToJson(const Answer& a);
std::string Describe(const Answer& a);

}  // namespace kfpbench::plan
