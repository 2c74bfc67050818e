#include "plan/plan.h"

#include <algorithm>
#include <cmath>
#include <map>

#include <fmt/format.h>

#include "engine/placement.h"
#include "sim/simulator.h"

namespace kfpbench::plan {

Result<sim::SimResult> SimulateAllAtOnce(const sim::ClusterSpec& cluster,
                                         const sim::WorkloadSpec& workload, int64_t runs,
                                         int nodes) {
  sim::WorkloadSpec w = workload;
  w.arrival_kind = sim::WorkloadSpec::ArrivalKind::kAllAtOnce;
  w.runs = runs;
  auto r = sim::Simulate(FixedNodes(cluster, nodes), w);
  if (!r.ok()) return r.error();
  if (r->failed > 0) return Error{"runs fail in the simulation: " + r->first_error};
  return r;
}

namespace {

Result<Probe> Run(const sim::ClusterSpec& cluster, const sim::WorkloadSpec& workload, int64_t runs,
                  int nodes) {
  auto r = SimulateAllAtOnce(cluster, workload, runs, nodes);
  if (!r.ok()) return r.error();
  return Probe{nodes, runs, r->makespan};
}

void Explain(Answer& a, Duration simulated, Duration analytic) {
  double s = ToSeconds(simulated), w = ToSeconds(analytic);
  if (w <= 0 || std::abs(s - w) / w <= 0.15) return;
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
        "behind other runs' earlier ones (fragmentation by CPU and memory adds to it)",
        (s - w) / w * 100);
  }
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
  // Levels by longest path from the start; the widest level is how many
  // tasks one run has at once.
  std::map<std::string, int> level;
  for (const auto& name : dag.topo_order) {
    int l = 0;
    for (const auto& dep : dag.tasks.at(name).dependent_tasks) l = std::max(l, level[dep] + 1);
    level[name] = l;
  }
  std::map<int, int> per_level;
  engine::Demand largest{1, 1};
  engine::Resources fallback{cluster.default_task_cpu, 0, cluster.default_task_memory, 0};
  for (const auto& [name, task] : dag.tasks) {
    ++per_level[level[name]];
    const ir::ComponentSpec* comp = spec.FindComponent(task.component_ref);
    const ir::ExecutorSpec* exec =
        comp != nullptr ? spec.FindExecutor(comp->executor_label) : nullptr;
    engine::Resources r;
    if (exec != nullptr) {
      const auto& res = exec->container.resources;
      r = {res.cpu_request, res.cpu_limit, res.memory_request, res.memory_limit};
    }
    engine::Demand d = engine::DemandOf(r, fallback);
    largest.cpu_millis = std::max(largest.cpu_millis, d.cpu_millis);
    largest.memory = std::max(largest.memory, d.memory);
  }
  Analytic a;
  for (const auto& [l, n] : per_level) a.width = std::max(a.width, n);
  const sim::NodePool& pool = cluster.pools[0];
  a.slots_per_node =
      static_cast<int>(std::min(static_cast<int64_t>(pool.cpu * 1000 + 0.5) / largest.cpu_millis,
                                pool.memory / largest.memory));
  if (a.slots_per_node == 0) return Error{"the largest task does not fit a node of the pool"};
  a.runs_per_wave =
      std::max<int64_t>(1, static_cast<int64_t>(nodes) * a.slots_per_node / std::max(a.width, 1));
  a.waves = (runs + a.runs_per_wave - 1) / a.runs_per_wave;
  auto single = Run(cluster, workload, 1, std::max(nodes, 1));
  if (!single.ok()) return single.error();
  a.single_run = single->makespan;
  a.time = a.single_run * a.waves;
  return a;
}

Result<Answer> TimeFor(const sim::ClusterSpec& cluster, const sim::WorkloadSpec& workload,
                       int64_t runs, int nodes) {
  if (runs <= 0 || nodes <= 0) return Error{"runs and nodes must be positive"};
  auto p = Run(cluster, workload, runs, nodes);
  if (!p.ok()) return p.error();
  Answer a;
  a.nodes = nodes;
  a.runs = runs;
  a.makespan = p->makespan;
  a.probes.push_back(*p);
  auto w = Waves(cluster, workload, runs, nodes);
  if (!w.ok()) return w.error();
  a.analytic = *w;
  Explain(a, a.makespan, a.analytic.time);
  return a;
}

Result<Answer> NodesFor(const sim::ClusterSpec& cluster, const sim::WorkloadSpec& workload,
                        int64_t runs, Duration deadline) {
  if (runs <= 0 || deadline <= Duration::zero()) return Error{"runs and time must be positive"};
  if (cluster.pools.empty()) return Error{"cluster has no node pools"};
  Answer a;
  a.runs = runs;
  int hi = std::max(cluster.pools[0].max, 1);
  auto top = Run(cluster, workload, runs, hi);
  if (!top.ok()) return top.error();
  a.probes.push_back(*top);
  if (top->makespan > deadline) {
    return Error{fmt::format("{} runs need {} even on the pool's max of {} nodes, more than {}",
                             runs, FormatDuration(top->makespan), hi, FormatDuration(deadline))};
  }
  // Makespan does not grow with nodes (more room never delays first fit
  // FIFO placement here), so bisect on the node count.
  int lo = 1;
  Probe best = *top;
  while (lo < hi) {
    int mid = lo + (hi - lo) / 2;
    auto p = Run(cluster, workload, runs, mid);
    if (!p.ok()) return p.error();
    a.probes.push_back(*p);
    if (p->makespan <= deadline) {
      hi = mid;
      best = *p;
    } else {
      lo = mid + 1;
    }
  }
  if (best.nodes != hi) {
    auto p = Run(cluster, workload, runs, hi);
    if (!p.ok()) return p.error();
    best = *p;
  }
  a.nodes = hi;
  a.makespan = best.makespan;
  // Analytic: fewest nodes whose waves fit the deadline.
  auto one = Waves(cluster, workload, runs, hi);
  if (!one.ok()) return one.error();
  a.analytic = *one;
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
                      Duration deadline, int nodes) {
  if (nodes <= 0 || deadline <= Duration::zero()) return Error{"nodes and time must be positive"};
  Answer a;
  a.nodes = nodes;
  auto one = Run(cluster, workload, 1, nodes);
  if (!one.ok()) return one.error();
  a.probes.push_back(*one);
  if (one->makespan > deadline) {
    return Error{fmt::format("a single run takes {}, more than {}", FormatDuration(one->makespan),
                             FormatDuration(deadline))};
  }
  // Double until it no longer fits, then bisect.
  int64_t lo = 1, hi = 2;
  Probe best = *one;
  while (true) {
    auto p = Run(cluster, workload, hi, nodes);
    if (!p.ok()) return p.error();
    a.probes.push_back(*p);
    if (p->makespan > deadline) break;
    best = *p;
    lo = hi;
    if (hi > (int64_t{1} << 40)) break;
    hi *= 2;
  }
  while (hi - lo > 1) {
    int64_t mid = lo + (hi - lo) / 2;
    auto p = Run(cluster, workload, mid, nodes);
    if (!p.ok()) return p.error();
    a.probes.push_back(*p);
    if (p->makespan <= deadline) {
      lo = mid;
      best = *p;
    } else {
      hi = mid;
    }
  }
  a.runs = lo;
  a.makespan = best.makespan;
  auto w = Waves(cluster, workload, lo, nodes);
  if (!w.ok()) return w.error();
  a.analytic = *w;
  int64_t waves_allowed = deadline / a.analytic.single_run;
  a.analytic_runs = waves_allowed * a.analytic.runs_per_wave;
  if (a.analytic_runs > 0 && std::abs(a.analytic_runs - a.runs) > 0.15 * a.analytic_runs) {
    Explain(a, a.makespan, a.analytic.time);
  }
  return a;
}

nlohmann::json ToJson(const Answer& a) {
  nlohmann::json probes = nlohmann::json::array();
  for (const auto& p : a.probes) {
    probes.push_back(
        {{"nodes", p.nodes}, {"runs", p.runs}, {"makespan_seconds", ToSeconds(p.makespan)}});
  }
  return {{"nodes", a.nodes},
          {"runs", a.runs},
          {"makespan_seconds", ToSeconds(a.makespan)},
          {"analytic",
           {{"single_run_seconds", ToSeconds(a.analytic.single_run)},
            {"width", a.analytic.width},
            {"slots_per_node", a.analytic.slots_per_node},
            {"runs_per_wave", a.analytic.runs_per_wave},
            {"waves", a.analytic.waves},
            {"time_seconds", ToSeconds(a.analytic.time)},
            {"nodes", a.analytic_nodes},
            {"runs", a.analytic_runs}}},
          {"explanation", a.explanation},
          {"probes", probes}};
}

std::string Describe(const Answer& a) {
  std::string s = fmt::format("simulated   {} runs on {} nodes: {}\n", a.runs, a.nodes,
                              FormatDuration(a.makespan));
  s += fmt::format(
      "analytic    {} waves of {} runs x {} single run = {} ({} tasks wide, {} per node)\n",
      a.analytic.waves, a.analytic.runs_per_wave, FormatDuration(a.analytic.single_run),
      FormatDuration(a.analytic.time), a.analytic.width, a.analytic.slots_per_node);
  if (a.analytic_nodes > 0) s += fmt::format("analytic    nodes: {}\n", a.analytic_nodes);
  if (a.analytic_runs > 0) s += fmt::format("analytic    runs: {}\n", a.analytic_runs);
  if (!a.explanation.empty()) s += "why         " + a.explanation + "\n";
  s += fmt::format("searched    {} simulations\n", a.probes.size());
  return s;
}

}  // namespace kfpbench::plan
