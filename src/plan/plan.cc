#include "plan/plan.h"

#include <algorithm>
#include <atomic>
#include <charconv>
#include <cmath>
#include <map>
#include <optional>
#include <thread>

#include <fmt/format.h>

#include "engine/placement.h"
#include "plan/pipeline_fit.h"
#include "sim/budget.h"
#include "sim/simulator.h"
#include "sim/step_draw.h"
#include "util/enum_names.h"
#include "util/human.h"
#include "util/percentile.h"

namespace kfpbench::plan {

Status CheckReplications(const Replications& r) {
  if (r.count < 1 || r.count > 10000) {
    return Error{fmt::format("replications must be between 1 and 10000, got {}", r.count)};
  }
  if (r.max < r.count || r.max > 100000) {
    return Error{
        fmt::format("the cap on replications must be between the first batch ({}) and "
                    "100000, got {}",
                    r.count, r.max)};
  }
  if (!(r.confidence >= 0.5 && r.confidence < 1)) {
    return Error{
        fmt::format("confidence must be at least 50% and below 100%, got {}", r.confidence)};
  }
  if (!(r.quantile > 0 && r.quantile <= 1)) {
    return Error{fmt::format("quantile must be above 0 and at most 1, got {}", r.quantile)};
  }
  return Ok();
}

Result<double> ParseQuantile(const std::string& text) {
  std::string_view t = text;
  double scale = 1;
  if (!t.empty() && (t.front() == 'p' || t.front() == 'P')) {
    t.remove_prefix(1);
    scale = 100;
  } else if (!t.empty() && t.back() == '%') {
    t.remove_suffix(1);
    scale = 100;
  }
  double v = 0;
  auto [ptr, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
  if (t.empty() || ec != std::errc() || ptr != t.data() + t.size() || !std::isfinite(v)) {
    return Error{fmt::format("quantile '{}': expected 0.9, 90% or P90", text)};
  }
  v /= scale;
  if (!(v > 0 && v <= 1)) {
    return Error{fmt::format("quantile '{}': must be above 0 and at most 1 (100%)", text)};
  }
  return v;
}

std::string QuantileName(double q) { return fmt::format("P{:g}", q * 100); }

int Probe::Within(Duration limit) const {
  return static_cast<int>(
      std::count_if(makespans.begin(), makespans.end(), [&](Duration d) { return d <= limit; }));
}

Result<sim::SimResult> SimulateAllAtOnce(const sim::ClusterSpec& cluster,
                                         const sim::WorkloadSpec& workload, int64_t runs, int nodes,
                                         uint64_t memory_budget) {
  sim::WorkloadSpec w = workload;
  w.arrival_kind = sim::WorkloadSpec::ArrivalKind::kAllAtOnce;
  w.runs = runs;
  sim::SimOptions options;
  options.memory_budget = memory_budget;
  auto r = sim::Simulate(FixedNodes(cluster, nodes), w, options);
  if (!r.ok()) return r.error();
  if (r->failed > 0) return Error{"runs fail in the simulation: " + r->first_error};
  return r;
}

const char* MetricName(Metric m) {
  constexpr EnumName<Metric> kNames[] = {{Metric::kMakespan, "makespan"},
                                         {Metric::kRunP95, "run p95"},
                                         {Metric::kWaitP95, "queue-wait p95"}};
  return NameIn(kNames, m, "makespan").data();
}

Result<Metric> ParseMetric(const std::string& text) {
  if (text == "makespan") return Metric::kMakespan;
  if (text == "run-p95") return Metric::kRunP95;
  if (text == "wait-p95") return Metric::kWaitP95;
  return Error{fmt::format("'{}': expected makespan, run-p95 or wait-p95", text)};
}

Result<sim::SimResult> SimulateProbe(const sim::ClusterSpec& cluster,
                                     const sim::WorkloadSpec& workload, int64_t runs, int nodes,
                                     const Measure& measure, uint64_t memory_budget) {
  if (!measure.recorded_arrivals) {
    return SimulateAllAtOnce(cluster, workload, runs, nodes, memory_budget);
  }
  sim::SimOptions options;
  options.memory_budget = memory_budget;
  auto r = sim::Simulate(FixedNodes(cluster, nodes), workload, options);
  if (!r.ok()) return r.error();
  if (r->failed > 0) return Error{"runs fail in the simulation: " + r->first_error};
  return r;
}

Duration FigureOf(const sim::SimResult& r, Metric metric) {
  switch (metric) {
    case Metric::kRunP95:
      return FromSeconds(r.run_ms.ValueAtPercentile(95) / 1000.0);
    case Metric::kWaitP95:
      return FromSeconds(r.pending_ms.ValueAtPercentile(95) / 1000.0);
    case Metric::kMakespan:
      break;
  }
  return r.makespan;
}

namespace {

// Simulates replications [p.makespans.size(), count) into `p`, then
// summarises every replication it holds.
Status Extend(Probe& p, const sim::ClusterSpec& cluster, const sim::WorkloadSpec& workload,
              size_t count, const Replications& reps) {
  const size_t first = p.makespans.size();
  if (count <= first) return Ok();
  p.makespans.resize(count);
  const size_t todo = count - first;
  std::vector<std::optional<Error>> errors(todo);
  std::atomic<size_t> next{0};
  const size_t hardware = std::max(1u, std::thread::hardware_concurrency());
  const size_t threads =
      std::min(todo, reps.threads > 0 ? static_cast<size_t>(reps.threads) : hardware);
  // The simulations in flight share the memory one may hold.
  const uint64_t memory_budget = sim::DefaultMemoryBudget() / threads;
  // Each worker takes the next replication until none is left; results land
  // by index, so they are in seed order whatever the threads.
  auto work = [&] {
    for (size_t k = next++; k < todo; k = next++) {
      const size_t i = first + k;
      sim::WorkloadSpec w = workload;
      w.seed = sim::ReplicationSeed(workload.seed, static_cast<int>(i));
      try {
        auto r = SimulateProbe(cluster, w, p.runs, p.nodes, reps.measure, memory_budget);
        if (r.ok()) {
          p.makespans[i] = FigureOf(*r, reps.measure.metric);
          if (i == 0) p.binding = sim::WhatBinds(*r);
        } else {
          errors[k] = r.error();
        }
      } catch (const std::bad_alloc&) {
        errors[k] = Error{fmt::format("out of memory simulating {} runs", p.runs)};
      }
    }
  };
  std::vector<std::thread> workers;
  for (size_t t = 1; t < threads; ++t) workers.emplace_back(work);
  work();
  for (auto& t : workers) t.join();
  for (auto& e : errors) {
    if (e) return *e;
  }
  std::vector<Duration> sorted = p.makespans;
  std::sort(sorted.begin(), sorted.end());
  auto at = [&](double q) { return sorted[NearestRank(sorted.size(), q) - 1]; };
  p.makespan = at(reps.quantile);
  p.median = at(0.5);
  p.min = sorted.front();
  p.max = sorted.back();
  return Ok();
}

}  // namespace

const char* VerdictName(Verdict v) {
  constexpr EnumName<Verdict> kNames[] = {
      {Verdict::kMeets, "meets"}, {Verdict::kMisses, "misses"}, {Verdict::kUndecided, "undecided"}};
  return NameIn(kNames, v, "not judged").data();  // literals: NUL-terminated
}

bool IsRandom(const sim::WorkloadSpec& workload) {
  if (!workload.branches.empty()) return true;
  auto random = [](const sim::StepModel& m) {
    return m.duration.kind != exec::DurationDist::Kind::kConstant;
  };
  if (random(workload.steps.fallback)) return true;
  return std::any_of(workload.steps.by_label.begin(), workload.steps.by_label.end(),
                     [&](const auto& kv) { return random(kv.second); });
}

void Judge(Probe& p, const Replications& reps, Duration limit, bool random_workload) {
  const auto n = static_cast<int64_t>(p.makespans.size());
  const int64_t hits = p.Within(limit);
  p.deterministic = !random_workload && n > 0 && p.min == p.max;
  if (p.deterministic) {
    // Every replication is the same simulation: the fraction is exact.
    const double f = hits == n ? 1.0 : 0.0;
    p.within = Proportion{hits, n, f, f};
  } else {
    p.within = WilsonInterval(hits, n, reps.confidence);
  }
  if (p.within.low >= reps.quantile) {
    p.verdict = Verdict::kMeets;
  } else if (p.within.high < reps.quantile) {
    p.verdict = Verdict::kMisses;
  } else {
    p.verdict = Verdict::kUndecided;
  }
}

Result<Probe> Replicate(const sim::ClusterSpec& cluster, const sim::WorkloadSpec& workload,
                        int64_t runs, int nodes, const Replications& reps) {
  if (auto st = CheckReplications(reps); !st.ok()) return st.error();
  Probe p;
  p.nodes = nodes;
  p.runs = runs;
  if (auto st = Extend(p, cluster, workload, static_cast<size_t>(reps.count), reps); !st.ok()) {
    return st.error();
  }
  return p;
}

Result<Probe> ReplicateUntilDecided(const sim::ClusterSpec& cluster,
                                    const sim::WorkloadSpec& workload, int64_t runs, int nodes,
                                    const Replications& reps, Duration limit) {
  auto p = Replicate(cluster, workload, runs, nodes, reps);
  if (!p.ok()) return p;
  const bool random = IsRandom(workload);
  Judge(*p, reps, limit, random);
  // Doubling keeps the looks at the interval few (20, 40, ... 320, 400 by
  // default: six), each a fresh batch of seeds after the last.
  while (p->verdict == Verdict::kUndecided && !p->deterministic &&
         p->makespans.size() < static_cast<size_t>(reps.max)) {
    const size_t next = std::min(p->makespans.size() * 2, static_cast<size_t>(reps.max));
    if (auto st = Extend(*p, cluster, workload, next, reps); !st.ok()) return st.error();
    Judge(*p, reps, limit, random);
  }
  return p;
}

namespace {

void Explain(Answer& a, Duration simulated, Duration analytic) {
  double s = ToSeconds(simulated), w = ToSeconds(analytic);
  if (w <= 0 || std::abs(s - w) / w <= 0.15) return;
  if (s > w && !a.bottleneck.empty()) {
    a.explanation = fmt::format(
        "the simulation is {:.0f}% slower than waves x single-run time, which counts nodes "
        "only: {}",
        (s - w) / w * 100, a.bottleneck);
    return;
  }
  if (s < w) {
    a.explanation = fmt::format(
        "the simulation is {:.0f}% faster than waves x single-run time: waves assume each run "
        "holds its widest stage's {} slots for its whole duration, while the scheduler fills "
        "the slots narrower stages leave free with tasks of later runs",
        (w - s) / w * 100, a.analytic.width);
  } else {
    a.explanation = fmt::format(
        "the simulation is {:.0f}% slower than waves x single-run time: runs started together "
        "compete for slots in FIFO order, so stages interleave and a run's later steps wait "
        "behind other runs' earlier ones (fragmentation by CPU and memory adds to it), and "
        "the slowest of many runs is slower than the expected one",
        (s - w) / w * 100);
  }
}

void SetAnswer(Answer& a, const Probe& p) {
  a.nodes = p.nodes;
  a.runs = p.runs;
  a.at_answer = p;
  a.makespan = p.makespan;
}

}  // namespace

sim::ClusterSpec FixedNodes(const sim::ClusterSpec& cluster, int nodes) {
  sim::ClusterSpec c = cluster;
  c.pools.resize(1);
  c.pools[0].min = c.pools[0].max = c.pools[0].initial = nodes;
  c.autoscaler.enabled = false;
  return c;
}

Result<Analytic> Waves(const sim::ClusterSpec& cluster, const sim::WorkloadSpec& workload,
                       int64_t runs, int nodes) {
  if (cluster.pools.empty()) return Error{"cluster has no node pools"};
  if (workload.pipeline == nullptr || !workload.pipeline->root.dag) {
    return Error{"workload has no pipeline DAG"};
  }
  const ir::PipelineSpec& spec = *workload.pipeline;
  const ir::DagSpec& dag = *spec.root.dag;
  // The widest level is how many tasks one run has at once.
  std::map<std::string, int> level = TaskLevels(dag);
  std::map<int, int> per_level;
  // The largest request of each resource over the tasks (not one task's).
  engine::ResourceList largest(1, 1);
  engine::Resources fallback{cluster.default_task_cpu, 0, cluster.default_task_memory, 0, {}};
  for (const auto& [name, task] : dag.tasks) {
    ++per_level[level[name]];
    const ir::ComponentSpec* comp = spec.FindComponent(task.component_ref);
    const ir::ExecutorSpec* exec =
        comp != nullptr ? spec.FindExecutor(comp->executor_label) : nullptr;
    engine::Resources r;
    if (exec != nullptr) r = engine::ResourcesOf(exec->container.resources);
    const engine::Demand d = engine::DemandOf(r, fallback);
    for (size_t slot = 0; slot < engine::kResourceSlots; ++slot) {
      largest[slot] = std::max(largest[slot], d.amounts[slot]);
    }
  }
  Analytic a;
  for (const auto& [l, n] : per_level) a.width = std::max(a.width, n);
  const sim::NodePool& pool = cluster.pools[0];
  const engine::ResourceList node = pool.Node(pool.name).allocatable;
  a.slots_by_cpu = static_cast<int>(node[engine::kCpu] / largest[engine::kCpu]);
  a.slots_by_memory = static_cast<int>(node[engine::kMemory] / largest[engine::kMemory]);
  a.slots_per_node = std::min(a.slots_by_cpu, a.slots_by_memory);
  for (size_t slot = engine::kMemory + 1; slot < engine::kResourceSlots; ++slot) {
    if (node[slot] > 0) {
      a.node_offers += fmt::format("{}{} {}", a.node_offers.empty() ? "" : ", ", node[slot],
                                   engine::SlotName(slot));
    }
    if (largest[slot] <= 0) continue;
    const int slots = static_cast<int>(node[slot] / largest[slot]);
    a.slots_by_resource[engine::SlotName(slot)] = slots;
    a.slots_per_node = std::min(a.slots_per_node, slots);
  }
  if (a.slots_per_node == 0) return Error{"the largest task does not fit a node of the pool"};
  a.runs_per_wave =
      std::max<int64_t>(1, static_cast<int64_t>(nodes) * a.slots_per_node / std::max(a.width, 1));
  a.waves = (runs + a.runs_per_wave - 1) / a.runs_per_wave;
  // The run a person would time by hand: every step at its expected length,
  // not one draw of them.
  sim::WorkloadSpec expected = workload;
  expected.steps = sim::ExpectedSteps(workload.steps);
  auto single = SimulateAllAtOnce(cluster, expected, 1, std::max(nodes, 1));
  if (!single.ok()) return single.error();
  a.single_run = single->makespan;
  a.time = a.single_run * a.waves;
  a.api_per_run = single->api;
  a.store_per_run = single->artifact_store;
  return a;
}

std::string ServiceLimit(const Analytic& a, int64_t runs, Duration horizon, double share) {
  auto scaled = [runs](sim::ServiceStats st) {
    const auto n = static_cast<double>(runs);
    st.served = static_cast<uint64_t>(static_cast<double>(st.served) * n);
    st.demand_seconds *= n;
    st.bytes *= n;
    return st;
  };
  const sim::ServiceStats api = scaled(a.api_per_run), store = scaled(a.store_per_run);
  const sim::ServiceStats* worst = sim::BusiestService(api, store);
  if (worst == nullptr || worst->demand_seconds <= 0 ||
      worst->demand_seconds < share * ToSeconds(horizon)) {
    return "";
  }
  return fmt::format("the {}: {} for {} runs; more nodes cannot help", sim::ServiceName(*worst),
                     sim::DescribeDemand(*worst), runs);
}

Result<Answer> TimeFor(const sim::ClusterSpec& cluster, const sim::WorkloadSpec& workload,
                       int64_t runs, int nodes, const Replications& reps) {
  if (runs <= 0 || nodes <= 0) return Error{"runs and nodes must be positive"};
  auto p = Replicate(cluster, workload, runs, nodes, reps);
  if (!p.ok()) return p.error();
  Answer a;
  a.replications = reps;
  a.random = IsRandom(workload);
  SetAnswer(a, *p);
  a.probes.push_back(*p);
  auto w = Waves(cluster, workload, runs, nodes);
  if (!w.ok()) return w.error();
  a.analytic = *w;
  a.binds = BindsAt(a.at_answer, a.analytic);
  // The waves cross-check is of runs all at once; a recorded pattern has
  // none to check against.
  if (reps.measure.recorded_arrivals) return a;
  a.bottleneck = ServiceLimit(a.analytic, a.runs, a.makespan);
  Explain(a, a.makespan, a.analytic.time);
  return a;
}

Result<Answer> NodesFor(const sim::ClusterSpec& cluster, const sim::WorkloadSpec& workload,
                        int64_t runs, Duration deadline, const Replications& reps) {
  if (runs <= 0 || deadline <= Duration::zero()) return Error{"runs and time must be positive"};
  if (cluster.pools.empty()) return Error{"cluster has no node pools"};
  Answer a;
  a.runs = runs;
  a.deadline = deadline;
  a.replications = reps;
  a.random = IsRandom(workload);
  int hi = std::max(cluster.pools[0].max, 1);
  auto top = ReplicateUntilDecided(cluster, workload, runs, hi, reps, deadline);
  if (!top.ok()) return top.error();
  a.probes.push_back(*top);
  if (top->verdict != Verdict::kMeets) {
    std::string why;
    if (auto w = Waves(cluster, workload, runs, hi); w.ok() && !reps.measure.recorded_arrivals) {
      if (std::string limit = ServiceLimit(*w, runs, deadline); !limit.empty()) {
        why = "; " + limit;
      }
    }
    return Error{fmt::format("{} even on the pool's max of {}, not {} of the time{}",
                             DescribeWithin(*top, deadline, reps), Plural(hi, "node"),
                             QuantileName(reps.quantile), why)};
  }
  // Bisect on the node count: every probe shown to meet the deadline had at
  // least as many nodes as the answer and every other probe fewer, so the
  // answer never contradicts a simulation the search ran. A probe left
  // undecided at the cap counts as not shown to meet it.
  int lo = 1;
  Probe best = *top;
  while (lo < hi) {
    int mid = lo + (hi - lo) / 2;
    auto p = ReplicateUntilDecided(cluster, workload, runs, mid, reps, deadline);
    if (!p.ok()) return p.error();
    a.probes.push_back(*p);
    if (p->verdict == Verdict::kMeets) {
      hi = mid;
      best = *p;
    } else {
      lo = mid + 1;
    }
  }
  for (const Probe& p : a.probes) {
    if (p.nodes == best.nodes - 1) a.neighbour = p;
  }
  SetAnswer(a, best);
  // Analytic: fewest nodes whose waves fit the deadline.
  auto one = Waves(cluster, workload, runs, a.nodes);
  if (!one.ok()) return one.error();
  a.analytic = *one;
  a.binds = BindsAt(a.at_answer, a.analytic);
  if (reps.measure.recorded_arrivals) return a;
  a.bottleneck = ServiceLimit(a.analytic, a.runs, a.makespan);
  int64_t waves_allowed =
      a.analytic.single_run > Duration::zero() ? deadline / a.analytic.single_run : runs;
  if (waves_allowed <= 0) {
    a.analytic_nodes = 0;
    a.explanation = "a single run takes longer than the deadline";
  } else {
    int64_t per_wave = (runs + waves_allowed - 1) / waves_allowed;
    a.analytic_nodes = static_cast<int>(
        (per_wave * std::max(a.analytic.width, 1) + a.analytic.slots_per_node - 1) /
        a.analytic.slots_per_node);
    if (a.analytic_nodes > 0 && std::abs(a.analytic_nodes - a.nodes) > 0.15 * a.analytic_nodes) {
      Explain(a, a.makespan, a.analytic.time);
      if (a.explanation.empty()) {
        a.explanation = fmt::format(
            "waves need {} nodes for whole waves of {} runs; the simulator packs partial waves "
            "into the time left",
            a.analytic_nodes, per_wave);
      }
    }
  }
  return a;
}

Result<Answer> RunsIn(const sim::ClusterSpec& cluster, const sim::WorkloadSpec& workload,
                      Duration deadline, int nodes, const Replications& reps) {
  if (nodes <= 0 || deadline <= Duration::zero()) return Error{"nodes and time must be positive"};
  Answer a;
  a.nodes = nodes;
  a.deadline = deadline;
  a.replications = reps;
  a.random = IsRandom(workload);
  auto one = ReplicateUntilDecided(cluster, workload, 1, nodes, reps, deadline);
  if (!one.ok()) return one.error();
  a.probes.push_back(*one);
  if (one->verdict != Verdict::kMeets) {
    return Error{fmt::format("{}, not {} of the time", DescribeWithin(*one, deadline, reps),
                             QuantileName(reps.quantile))};
  }
  // Double until it is not shown to fit, then bisect: every probe shown to
  // meet the deadline had at most as many runs as the answer, every other
  // one more.
  int64_t lo = 1, hi = 2;
  Probe best = *one;
  while (true) {
    auto p = ReplicateUntilDecided(cluster, workload, hi, nodes, reps, deadline);
    if (!p.ok()) return p.error();
    a.probes.push_back(*p);
    if (p->verdict != Verdict::kMeets) break;
    best = *p;
    lo = hi;
    if (hi > (int64_t{1} << 40)) break;
    hi *= 2;
  }
  while (hi - lo > 1) {
    int64_t mid = lo + (hi - lo) / 2;
    auto p = ReplicateUntilDecided(cluster, workload, mid, nodes, reps, deadline);
    if (!p.ok()) return p.error();
    a.probes.push_back(*p);
    if (p->verdict == Verdict::kMeets) {
      lo = mid;
      best = *p;
    } else {
      hi = mid;
    }
  }
  for (const Probe& p : a.probes) {
    if (p.runs == best.runs + 1) a.neighbour = p;
  }
  SetAnswer(a, best);
  auto w = Waves(cluster, workload, a.runs, nodes);
  if (!w.ok()) return w.error();
  a.analytic = *w;
  a.bottleneck = ServiceLimit(a.analytic, a.runs, a.makespan);
  a.binds = BindsAt(a.at_answer, a.analytic);
  int64_t waves_allowed = deadline / a.analytic.single_run;
  a.analytic_runs = waves_allowed * a.analytic.runs_per_wave;
  if (a.analytic_runs > 0 && std::abs(a.analytic_runs - a.runs) > 0.15 * a.analytic_runs) {
    Explain(a, a.makespan, a.analytic.time);
  }
  return a;
}

}  // namespace kfpbench::plan
