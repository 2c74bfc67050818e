// The three capacity questions, answered by search over the simulator, each
// with the analytic cross-check (waves x expected single-run time) beside it:
//   NodesFor: fewest nodes that finish N runs within T;
//   TimeFor:  how long N runs take on K nodes;
//   RunsIn:   most runs that finish within T on K nodes.
// Runs arrive all at once; nodes are the cluster's first pool, fixed at K
// (no autoscaler: the question is about a size, not a policy).
//
// Every probe is simulated once per replication (seeds seed, seed + 1, ...).
// A probe judged against a time allowed T is replicated sequentially: a first
// batch, then doubled, until the Wilson interval of "the fraction of
// replications finishing within T" lies wholly above or wholly below the
// quantile (a decision), or the cap is reached (undecided, and said so). An
// answer is K (or N) with that fraction and its interval. Step times are
// common random numbers (sim/step_draw.h): a probe with more runs or nodes
// keeps every step time of a smaller one, so the searches compare like with
// like.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "plan/proportion.h"
#include "sim/binding.h"
#include "sim/model.h"
#include "sim/simulator.h"
#include "util/result.h"

namespace kfpbench::plan {

// The figure each replication of a probe yields, held against the time
// allowed: the makespan (the runs all at once, the default question), or
// on a recorded arrival pattern the run-duration p95 or the task queue-wait
// (ready to placed) p95.
enum class Metric { kMakespan, kRunP95, kWaitP95 };
const char* MetricName(Metric m);  // "makespan", "run p95", "queue-wait p95"
// "makespan", "run-p95", "wait-p95".
Result<Metric> ParseMetric(const std::string& text);

// What each replication of a probe simulates. By default the probe's runs
// submitted at once; with `recorded_arrivals`, the workload's own arrivals
// (a capture's day, F times its runs by sim::ScaleArrivals, so bursts stay
// where they were), whose runs are the probe's runs.
struct Measure {
  bool recorded_arrivals = false;
  double arrival_scale = 1;  // for the text: the pattern carries this many times its runs
  Metric metric = Metric::kMakespan;
};

// How many seeds each probe is simulated with, and the quantile of their
// makespans an answer is held to.
struct Replications {
  // The first batch of a probe judged against T, and every replication of
  // one that is not (TimeFor).
  int count = 20;
  double quantile = 0.9;
  // Replications simulated at once, each on a thread of its own: they are
  // independent, and a simulation is single-threaded. 0: one per hardware
  // thread. Memory grows with it: each holds its own runs.
  int threads = 0;
  // The cap of sequential replication: a probe still undecided here is
  // reported undecided.
  int max = 400;
  // Of the Wilson interval each decision is read from.
  double confidence = 0.95;
  // What each replication simulates and yields (the makespan by default).
  Measure measure{};
};

// `count` in [1, 10000], `max` in [count, 100000], `quantile` in (0, 1],
// `confidence` in [0.5, 1).
Status CheckReplications(const Replications& r);

// "0.9", "90%", "p90" or "P90" -> 0.9.
Result<double> ParseQuantile(const std::string& text);

// Where a probe's fraction within T stands against the quantile.
enum class Verdict {
  kNotJudged,  // no time allowed (TimeFor)
  kMeets,      // the whole interval is at or above the quantile
  kMisses,     // the whole interval is below it
  kUndecided,  // the interval straddles it at the cap
};
const char* VerdictName(Verdict v);  // "meets", "misses", "undecided", "not judged"

struct Probe {
  int nodes = 0;
  int64_t runs = 0;
  // The figure of Replications::measure (the makespan unless it says
  // otherwise): at the quantile over replications, median, range, and one
  // per replication in seed order.
  Duration makespan{0};
  Duration median{0};
  Duration min{0};
  Duration max{0};
  std::vector<Duration> makespans;
  // How many replications finish within `limit`.
  int Within(Duration limit) const;
  // Judged against a time allowed (ReplicateUntilDecided):
  Verdict verdict = Verdict::kNotJudged;
  Proportion within;  // replications finishing in time, with its interval
  // Nothing in the workload is random (constant steps, no branches) and
  // every replication came out the same: the fraction is 0 or 1 exactly,
  // and it covers only what the model holds.
  bool deterministic = false;
  // What bound the first replication (the workload's own seed).
  sim::Binding binding;
};

struct Analytic {
  Duration single_run{0};  // one run alone with every step at its expected time
  int width = 0;           // most tasks of one run at once (widest level of the DAG)
  int slots_per_node = 0;  // tasks of the largest request that fit one node
  int slots_by_cpu = 0;    // of them by CPU alone, and by memory alone
  int slots_by_memory = 0;
  // By each other resource a task asks for (an accelerator) alone:
  // "nvidia.com/gpu" -> 4.
  std::map<std::string, int> slots_by_resource;
  // What a node of the pool offers beyond CPU and memory ("4 nvidia.com/gpu"),
  // so that an answer in nodes reads as one in GPU nodes; empty: nothing.
  std::string node_offers;
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
  // NodesFor: the probe at one node fewer; RunsIn: at one run more; the
  // other side of the decision (verdict kNotJudged when it was not run).
  Probe neighbour;
  std::string binds;   // BindsAt: what binds at the answer, in words
  bool random = true;  // IsRandom(workload): false, the spread covers only what is modelled
  // The calibration behind the workload could not decide (plan/calibration.h
  // UndecidedWarning): repeated beside the answer. Empty: nothing to warn of.
  std::string warning;
  // The calibration's error on levels it did not see (plan/calibration.h
  // UnseenError): the simulated figures are shown no finer than it allows.
  double model_error = 0;
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

// One replication of a probe as `measure` says: SimulateAllAtOnce, or the
// workload's own arrivals on `nodes` fixed nodes; an Error when runs fail.
Result<sim::SimResult> SimulateProbe(const sim::ClusterSpec& cluster,
                                     const sim::WorkloadSpec& workload, int64_t runs, int nodes,
                                     const Measure& measure, uint64_t memory_budget = 0);
// The figure `metric` of a simulation.
Duration FigureOf(const sim::SimResult& r, Metric metric);

// SimulateProbe once per replication seed, summarised.
Result<Probe> Replicate(const sim::ClusterSpec& cluster, const sim::WorkloadSpec& workload,
                        int64_t runs, int nodes, const Replications& reps);

// Replicate, then more replications (doubling, up to reps.max) until the
// fraction finishing within `limit` is decided against reps.quantile.
Result<Probe> ReplicateUntilDecided(const sim::ClusterSpec& cluster,
                                    const sim::WorkloadSpec& workload, int64_t runs, int nodes,
                                    const Replications& reps, Duration limit);

// `probe` judged against `limit`: the fraction within it, its interval, the
// verdict (undecided when the interval straddles the quantile).
void Judge(Probe& probe, const Replications& reps, Duration limit, bool random_workload);

// Whether anything in the workload is drawn from its seed: a step duration
// that is not constant, or a branch probability.
bool IsRandom(const sim::WorkloadSpec& workload);

// "94%": a fraction as a whole percentage, truncated.
std::string Percent(double fraction);

// "200 runs on 18 nodes finish within 2h0m0s in 94% of replications (95%
// interval 90% to 97%, Wilson; 160 replications): at least P90".
std::string DescribeWithin(const Probe& p, Duration limit, const Replications& reps);

// "P90"; "P99.5".
std::string QuantileName(double q);

// What binds at `probe` (its first replication), with the nodes' count per
// node when they do: "nodes' memory (2 per node: memory): tasks spent ...".
std::string BindsAt(const Probe& probe, const Analytic& analytic);

nlohmann::json ToJson(const Answer& a);
std::string Describe(const Answer& a);

}  // namespace kfpbench::plan
