#include "sim/simulator.h"

#include <algorithm>
#include <fstream>

#include <fmt/format.h>

#include "sim/binding.h"
#include "sim/budget.h"
#include "sim/simulation.h"
#include "util/files.h"
#include "util/human.h"

namespace kfpbench::sim {
Status ValidateCluster(const ClusterSpec& cluster) {
  if (cluster.pools.empty()) return Refused("cluster has no node pools");
  int64_t max_total = 0;
  for (const auto& p : cluster.pools) {
    if (p.cpu <= 0 || p.memory <= 0) {
      return Refused(fmt::format("pool '{}': cpu and memory must be positive", p.name));
    }
    for (const auto& r : p.resources) {
      if (r.amount < 0) {
        return Refused(fmt::format("pool '{}': {} must not be negative", p.name, r.name));
      }
      if (!engine::SlotOf(r.name)) {
        return Refused(fmt::format(
            "pool '{}': resource '{}' is one more than the {} extended resources a simulation "
            "tracks",
            p.name, r.name, engine::kUntracked - engine::kStandardResources));
      }
    }
    if (p.min < 0 || p.max < p.min) {
      return Refused(
          fmt::format("pool '{}': need 0 <= min <= max (min {}, max {})", p.name, p.min, p.max));
    }
    if (p.initial > p.max) {
      return Refused(
          fmt::format("pool '{}': initial {} is above max {}", p.name, p.initial, p.max));
    }
    if (p.max > kMaxNodes) {
      return Refused(fmt::format("pool '{}': max {} is above the {} nodes a simulation takes",
                                 p.name, p.max, kMaxNodes));
    }
    max_total += p.max;
  }
  if (max_total > kMaxNodes) {
    return Refused(fmt::format("the pools' max add up to {} nodes, above the {} a simulation takes",
                               max_total, kMaxNodes));
  }
  if (max_total == 0) return Refused("cluster can never have a node (every pool has max 0)");
  bool starts_empty = true;
  for (const auto& p : cluster.pools)
    starts_empty = starts_empty && std::max(p.initial, p.min) <= 0;
  if (starts_empty && !cluster.autoscaler.enabled) {
    return Refused("cluster starts with no nodes and the autoscaler is off");
  }
  if (cluster.autoscaler.scan_interval < kMinScanInterval) {
    return Refused(fmt::format("autoscaler scanInterval must be at least {}",
                               FormatDuration(kMinScanInterval)));
  }
  return Ok();
}

Result<SimResult> Simulate(const ClusterSpec& cluster, const WorkloadSpec& workload,
                           const SimOptions& options) {
  if (auto st = ValidateCluster(cluster); !st.ok()) return st.error();
  if (workload.pipeline == nullptr) return Refused("workload has no pipeline");
  const std::unique_ptr<ArrivalSchedule> schedule = ScheduleOf(workload);
  if (Status st = schedule->Check(); !st.ok()) return st.error();
  const SimEstimate estimate = EstimateSimulation(cluster, workload, options.sample_interval);
  const uint64_t budget = options.memory_budget > 0 ? options.memory_budget : DefaultMemoryBudget();
  if (Status fits = CheckSimulationFits(estimate, budget); !fits.ok()) return fits.error();
  Simulation simulation(cluster, workload, options, *schedule, estimate, budget);
  return simulation.Run();
}

nlohmann::json ToJson(const SimResult& r) {
  auto hist = [](const metrics::Histogram& h) {
    return nlohmann::json{{"count", h.count()},
                          {"mean", h.mean() / 1000.0},
                          {"min", h.min() / 1000.0},
                          {"p50", h.ValueAtPercentile(50) / 1000.0},
                          {"p95", h.ValueAtPercentile(95) / 1000.0},
                          {"p99", h.ValueAtPercentile(99) / 1000.0},
                          {"max", h.max() / 1000.0},
                          {"histogram_ms", h.ToJson()}};
  };
  nlohmann::json j;
  j["runs"] = {{"total", r.runs}, {"succeeded", r.succeeded}, {"failed", r.failed}};
  if (!r.first_error.empty()) j["runs"]["first_error"] = r.first_error;
  j["makespan_seconds"] = ToSeconds(r.makespan);
  j["run_duration_seconds"] = hist(r.run_ms);
  j["task_pending_seconds"] = hist(r.pending_ms);
  j["node_hours"] = r.node_hours;
  j["peak_nodes"] = r.peak_nodes;
  // Only when some requested node had not joined by the end: output where
  // every requested node joined stays as it was.
  if (r.peak_nodes_requested > r.peak_nodes) j["peak_nodes_requested"] = r.peak_nodes_requested;
  j["cpu_utilisation"] = r.cpu_utilisation;
  j["memory_utilisation"] = r.memory_utilisation;
  // Only when some resource beyond CPU and memory was in play: output for
  // CPU and memory alone stays as it was.
  for (const auto& use : r.resources) j["resource_utilisation"][use.name] = use.utilisation;
  j["peak_runs_alive"] = r.peak_runs_alive;
  j["events"] = r.events;
  j["tasks_by_label"] = r.tasks_by_label;
  auto service = [](const ServiceStats& st) {
    return nlohmann::json{{"requests", st.served},
                          {"utilisation", st.utilisation},
                          {"mean_seconds", st.mean_seconds},
                          {"demand_seconds", st.demand_seconds},
                          {"offered_load", st.offered_load}};
  };
  if (r.api.modelled) {
    j["api"] = service(r.api);
    j["api"]["workers"] = r.api.workers;
  }
  if (r.artifact_store.modelled) {
    j["artifact_store"] = service(r.artifact_store);
    j["artifact_store"]["bandwidth_bytes_per_second"] = r.artifact_store.bandwidth;
    j["artifact_store"]["bytes"] = r.artifact_store.bytes;
  }
  j["arrival_window_seconds"] = ToSeconds(r.arrival_window);
  j["bottleneck"] = Bottleneck(r);
  const Binding binds = WhatBinds(r);
  const TaskTime& t = r.task_time;
  j["binds"] = {{"what", BindsKey(binds.what)},
                {"text", binds.text},
                {"pending_share", binds.pending_share},
                {"provisioning_share", binds.provisioning_share},
                {"api_share", binds.api_share},
                {"store_share", binds.store_share},
                {"task_seconds",
                 {{"held", t.held},
                  {"pending", t.pending},
                  {"in_api", t.api.task_seconds},
                  {"in_store", t.store.task_seconds}}}};
  if (binds.what == Binds::kResource) j["binds"]["resource"] = binds.resource;
  j["series"] = r.series.ToJson();
  return j;
}

std::string Summary(const SimResult& r, double model_error) {
  auto ms = [&](double millis) {
    return model_error > 0 ? FormatDurationKnownTo(FromSeconds(millis / 1000), model_error)
                           : FormatMillis(millis);
  };
  std::string s;
  s += fmt::format("runs        {} ({} succeeded, {} failed)\n", r.runs, r.succeeded, r.failed);
  if (!r.first_error.empty()) s += fmt::format("first error {}\n", r.first_error);
  s += fmt::format("makespan    {}\n", FormatDurationKnownTo(r.makespan, model_error));
  s += fmt::format("run time    p50 {}  p95 {}  max {}\n", ms(r.run_ms.ValueAtPercentile(50)),
                   ms(r.run_ms.ValueAtPercentile(95)), ms(static_cast<double>(r.run_ms.max())));
  s += fmt::format("pending     p50 {}  p95 {} per task\n", ms(r.pending_ms.ValueAtPercentile(50)),
                   ms(r.pending_ms.ValueAtPercentile(95)));
  const std::string requested =
      r.peak_nodes_requested > r.peak_nodes
          ? fmt::format(" ({} requested; the rest had not joined by the last run's end)",
                        r.peak_nodes_requested)
          : "";
  s += fmt::format(
      "nodes       peak {}{}, {:.2f} node-hours, CPU allocated {:.1f}%, memory {:.1f}% "
      "(time-weighted, first placement to last end)\n",
      r.peak_nodes, requested, r.node_hours, r.cpu_utilisation * 100, r.memory_utilisation * 100);
  for (const auto& use : r.resources) {
    s += fmt::format("            {} allocated {:.1f}%\n", use.name, use.utilisation * 100);
  }
  auto service = [&](const char* name, const ServiceStats& st) {
    if (!st.modelled) return;
    s += fmt::format("{:<11} {}; {:.0f}% busy, {} each incl. queueing", name, DescribeDemand(st),
                     st.utilisation * 100, FormatDuration(FromSeconds(st.mean_seconds)));
    if (st.offered_load > 0) {
      s += fmt::format("; offered {:.0f}% of capacity while runs arrived", st.offered_load * 100);
    }
    s += "\n";
  };
  service("api", r.api);
  service("artifacts", r.artifact_store);
  const std::string bottleneck = Bottleneck(r);
  if (!bottleneck.empty()) s += "bottleneck  " + bottleneck + "\n";
  if (std::string binds = WhatBinds(r).text; binds != bottleneck)
    s += "binds       " + binds + "\n";
  return s;
}

std::string DescribeDemand(const ServiceStats& st) {
  const std::string alone = FormatDuration(FromSeconds(st.demand_seconds));
  if (st.bandwidth > 0) {
    return fmt::format("{}, {} at {}/s = {} of transfer",
                       Plural(static_cast<int64_t>(st.served), "upload"), FormatBytes(st.bytes),
                       FormatBytes(st.bandwidth), alone);
  }
  return fmt::format("{} over {} = {} of service", Plural(static_cast<int64_t>(st.served), "call"),
                     Plural(st.workers, "worker"), alone);
}

std::string ServiceName(const ServiceStats& st) {
  return st.bandwidth > 0 ? "artifact store" : "API server";
}

const ServiceStats* BusiestService(const ServiceStats& api, const ServiceStats& store) {
  if (store.modelled && (!api.modelled || store.demand_seconds >= api.demand_seconds)) {
    return &store;
  }
  return api.modelled ? &api : nullptr;
}

std::string Bottleneck(const SimResult& r, double share) {
  const double makespan = ToSeconds(r.makespan);
  const ServiceStats* worst = BusiestService(r.api, r.artifact_store);
  // Runs asked more of it than it can serve while they arrived, or it needed
  // most of the makespan by itself.
  if (worst == nullptr || makespan <= 0 ||
      (worst->offered_load < 1 && worst->demand_seconds < share * makespan)) {
    return "";
  }
  std::string s = fmt::format("the {}: {} alone, {:.0f}% of the makespan", ServiceName(*worst),
                              DescribeDemand(*worst), worst->demand_seconds / makespan * 100);
  if (worst->offered_load > 1) {
    s += fmt::format("; runs offered {:.0f}% of its capacity", worst->offered_load * 100);
  }
  return s + "; more nodes cannot help";
}

Status WriteResultJson(const SimResult& r, const std::filesystem::path& path,
                       const nlohmann::json& extra) {
  std::error_code ec;
  if (path.has_parent_path()) std::filesystem::create_directories(path.parent_path(), ec);
  nlohmann::json j = ToJson(r);
  if (extra.is_object()) j.update(extra);
  return WriteFileAtomically(path, j.dump(2) + "\n");
}

}  // namespace kfpbench::sim
