#include "sim/simulator.h"

#include <algorithm>
#include <fstream>
#include <functional>
#include <optional>
#include <random>

#include <fmt/format.h>

#include "engine/engine.h"
#include "ir/quantity.h"
#include "sim/autoscaler.h"
#include "sim/binding.h"
#include "sim/budget.h"
#include "sim/shared_server.h"
#include "sim/sim_executor.h"
#include "sim/virtual_loop.h"
#include "util/files.h"
#include "util/human.h"

namespace kfpbench::sim {
namespace {

// Records each run's end. Runs alive are counted, not kept: each knows its
// arrival (RunRequest::created_at).
class Collector : public engine::RunObserver {
 public:
  Collector(SimResult& result, const SimOptions& options) : result_(result), options_(options) {}

  void Arrived() {
    ++alive_;
    result_.peak_runs_alive = std::max<int64_t>(result_.peak_runs_alive, alive_);
  }

  void OnRunChanged(const engine::RunSnapshot& s) override {
    if (!IsTerminal(s.state)) return;
    if (options_.on_run_end) options_.on_run_end(s, s.created_at);
    result_.run_ms.Record(ToMillis(s.finished_at - s.created_at));
    --alive_;
    last_end_ = std::max(last_end_, s.finished_at);
    if (alive_ == 0 && on_idle) on_idle();
    if (on_run_end) on_run_end();
    if (s.state == RuntimeState::kSucceeded) {
      ++result_.succeeded;
    } else {
      ++result_.failed;
      if (result_.first_error.empty()) result_.first_error = s.error;
    }
    for (const auto& t : s.task_states) {
      if (!t.executor_label->empty() && t.start_time != WallTime{}) {
        result_.pending_ms.Record(ToMillis(t.scheduling_delay));
        CountTask(t.executor_label);
      }
    }
  }

  // Moves the tasks counted by label into the result.
  void Finish() {
    for (const auto& [label, n] : tasks_by_label_) result_.tasks_by_label[*label] += n;
    tasks_by_label_.clear();
  }

  size_t alive() const { return static_cast<size_t>(alive_); }
  std::function<void()> on_idle;     // called when the last run alive ends
  std::function<void()> on_run_end;  // called when any run ends
  WallTime last_end() const { return last_end_; }

 private:
  // By the spec's label strings: a run's tasks point at the same few.
  void CountTask(const std::string* label) {
    for (auto& [counted, n] : tasks_by_label_) {
      if (counted == label) {
        ++n;
        return;
      }
    }
    tasks_by_label_.emplace_back(label, 1);
  }

  SimResult& result_;
  const SimOptions& options_;
  int64_t alive_ = 0;
  std::vector<std::pair<const std::string*, int64_t>> tasks_by_label_;
  WallTime last_end_{};
};

// What a cluster or workload cannot be: the input's fault (400), so that
// `plan` and `simulate` exit as for any bad input.
Error Refused(std::string message) { return Error{std::move(message), kHttpBadRequest}; }

}  // namespace

Status ValidateCluster(const ClusterSpec& cluster) {
  if (cluster.pools.empty()) return Refused("cluster has no node pools");
  int64_t max_total = 0;
  for (const auto& p : cluster.pools) {
    if (p.cpu <= 0 || p.memory <= 0) {
      return Refused(fmt::format("pool '{}': cpu and memory must be positive", p.name));
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
  int64_t total = workload.arrival_kind == WorkloadSpec::ArrivalKind::kCsv
                      ? static_cast<int64_t>(workload.csv.size())
                      : workload.runs;
  if (total <= 0) return Refused("workload has no runs");
  if (workload.arrival_kind == WorkloadSpec::ArrivalKind::kRate &&
      !(workload.rate_per_second >= kMinRatePerSecond &&
        workload.rate_per_second <= kMaxRatePerSecond)) {
    return Refused(fmt::format("arrival rate must be between {:g} and {:g} runs a second, got {:g}",
                               kMinRatePerSecond, kMaxRatePerSecond, workload.rate_per_second));
  }
  if (workload.arrival_kind == WorkloadSpec::ArrivalKind::kClosed && workload.concurrency <= 0) {
    return Refused("closed-loop concurrency must be positive");
  }
  const SimEstimate estimate = EstimateSimulation(cluster, workload, options.sample_interval);
  const uint64_t budget = options.memory_budget > 0 ? options.memory_budget : DefaultMemoryBudget();
  if (Status fits = CheckSimulationFits(estimate, budget); !fits.ok()) return fits.error();
  // Open-loop arrivals the cluster cannot keep up with pile up as runs in
  // flight: the simulation stops, saying so, before they outgrow the budget.
  const int64_t max_in_flight = MaxRunsInFlight(estimate, budget);

  SimResult result;
  result.series = Series(ToSeconds(options.sample_interval), options.max_series_points);
  VirtualLoop loop;
  const WallTime start = loop.Now();
  // The cluster file's store, else the one calibrated from load levels.
  const ArtifactStoreSpec& store_spec = cluster.artifact_store.bandwidth > 0
                                            ? cluster.artifact_store
                                            : workload.calibrated_artifact_store;
  // Likewise the API.
  const ApiSpec& api_spec = cluster.api.modelled() ? cluster.api : workload.calibrated_api;
  SharedServer api(loop, SharedServer::Discipline::kFifo, api_spec.workers);
  SharedServer store(loop, store_spec.fifo ? SharedServer::Discipline::kFifo
                                           : SharedServer::Discipline::kProcessorSharing);
  SharedServices services{&api, api_spec.task_update, &store, store_spec.bandwidth};
  const engine::Resources default_task{cluster.default_task_cpu, 0, cluster.default_task_memory, 0};
  SimExecutor executor(loop, workload.steps, workload.seed, services, default_task);
  Collector collector(result, options);
  engine::EngineOptions eo;
  eo.random_seed = workload.seed;
  eo.light_snapshots = true;
  eo.task_details = false;
  eo.resolve_command_lines = false;
  // Branches draw from their own stream so that listing one does not shift
  // the step durations the other tasks draw.
  std::mt19937_64 branch_rng(workload.seed ^ 0x9e3779b97f4a7c15ULL);
  if (!workload.branches.empty()) {
    eo.decide_condition = [&](const std::string& task) -> std::optional<bool> {
      auto it = workload.branches.find(task);
      if (it == workload.branches.end()) return std::nullopt;
      return std::uniform_real_distribution<double>(0, 1)(branch_rng) < it->second;
    };
  }
  eo.default_task_resources = default_task;
  for (const auto& p : cluster.pools) eo.node_shapes.push_back(p.Node(p.name));
  engine::Engine engine(loop, executor, collector, eo);
  Nodes nodes(loop, engine, cluster);
  for (size_t p = 0; p < cluster.pools.size(); ++p) {
    int n = std::max(cluster.pools[p].initial, cluster.pools[p].min);
    for (int i = 0; i < n; ++i) nodes.Add(p);
  }
  Autoscaler autoscaler(loop, engine, cluster, nodes);

  // Arrivals: one timer at a time, so pending arrivals cost nothing.
  int64_t submitted = 0;
  Status submit_error = Ok();
  std::function<void()> arrive;
  MixPicker mix(workload.mix);
  // A CSV row's parameters and pipeline, or null.
  auto submit_one = [&](const nlohmann::json* extra,
                        const std::shared_ptr<const ir::PipelineSpec>& extra_pipeline) {
    engine::RunRequest req;
    req.run_id = "run-";
    req.run_id += std::to_string(submitted++);
    req.spec = workload.pipeline;
    if (extra_pipeline != nullptr) {
      req.spec = extra_pipeline;
    } else if (!workload.mix.empty()) {
      req.spec = mix.Next().pipeline;
    }
    req.created_at = loop.Now();
    if (!workload.parameters.empty()) req.parameters = workload.parameters;
    if (extra != nullptr) {
      for (const auto& [k, v] : extra->items()) req.parameters[k] = v;
    }
    collector.Arrived();
    auto submit = [&engine, &submit_error](engine::RunRequest r) {
      if (auto st = engine.Submit(std::move(r)); !st.ok() && submit_error.ok()) {
        submit_error = st.error();
      }
    };
    if (api_spec.run_create > Duration::zero()) {
      // CreateRun queues at the API server; the run starts once it is served.
      api.Submit(api_spec.run_create,
                 [submit, r = std::move(req)]() mutable { submit(std::move(r)); });
    } else {
      submit(std::move(req));
    }
  };
  auto offset_of = [&](int64_t i) -> Duration {
    switch (workload.arrival_kind) {
      case WorkloadSpec::ArrivalKind::kAllAtOnce:
      case WorkloadSpec::ArrivalKind::kClosed:
        return Duration::zero();
      case WorkloadSpec::ArrivalKind::kRate:
        return FromSeconds(static_cast<double>(i) / workload.rate_per_second);
      case WorkloadSpec::ArrivalKind::kCsv:
        return workload.csv[static_cast<size_t>(i)].offset;
    }
    return Duration::zero();
  };
  std::vector<size_t> csv_order(workload.csv.size());
  for (size_t i = 0; i < csv_order.size(); ++i) csv_order[i] = i;
  std::stable_sort(csv_order.begin(), csv_order.end(), [&](size_t a, size_t b) {
    return workload.csv[a].offset < workload.csv[b].offset;
  });
  const bool closed = workload.arrival_kind == WorkloadSpec::ArrivalKind::kClosed;
  arrive = [&] {
    while (submitted < total && submit_error.ok()) {
      if (closed && static_cast<int64_t>(collector.alive()) >= workload.concurrency) return;
      if (static_cast<int64_t>(collector.alive()) >= max_in_flight) {
        submit_error = Error{fmt::format(
            "stopped after {} of {} runs: {} runs were in flight at once, as many as fit in {} "
            "({} each); the cluster does not keep up with the arrivals",
            submitted, total, collector.alive(), FormatBytes(static_cast<double>(budget)),
            FormatBytes(static_cast<double>(estimate.run_bytes)))};
        return;
      }
      int64_t i = submitted;
      bool csv = workload.arrival_kind == WorkloadSpec::ArrivalKind::kCsv;
      int64_t row = csv ? static_cast<int64_t>(csv_order[static_cast<size_t>(i)]) : i;
      Duration due = offset_of(row);
      if (start + due > loop.Now()) {
        // A reference to `arrive`, not a copy: its captures would not fit
        // std::function's inline buffer, and a copy per run would allocate.
        loop.After(start + due - loop.Now(), [&arrive] { arrive(); });
        return;
      }
      if (csv) {
        const Arrival& a = workload.csv[static_cast<size_t>(row)];
        submit_one(&a.parameters, a.pipeline);
      } else {
        submit_one(nullptr, nullptr);
      }
    }
  };
  loop.Post(arrive);
  // Closed loop: each run that ends makes room for the next (posted, so the
  // engine is not re-entered from its own observer).
  if (closed) collector.on_run_end = [&] { loop.Post(arrive); };

  // Node-hours and utilisation stop at the last run's end, not when the loop
  // drains; utilisation starts at the first task placed, so neither idle
  // nodes before any work nor after it dilute it.
  double node_seconds = 0;
  double capacity_cpu_before = 0, capacity_memory_before = 0;
  std::optional<WallTime> utilisation_end;
  executor.on_first_launch = [&] {
    capacity_cpu_before = nodes.CpuSeconds(loop.Now());
    capacity_memory_before = nodes.MemorySeconds(loop.Now());
  };
  auto close_utilisation = [&](WallTime t) {
    double cpu = nodes.CpuSeconds(t) - capacity_cpu_before;
    double memory = nodes.MemorySeconds(t) - capacity_memory_before;
    result.task_time.allocated_cpu = executor.AllocatedCpuSeconds(t);
    result.task_time.allocated_memory = executor.AllocatedMemorySeconds(t);
    result.task_time.held = executor.TaskSeconds(t);
    result.cpu_utilisation = cpu > 0 ? result.task_time.allocated_cpu / cpu : 0;
    result.memory_utilisation = memory > 0 ? result.task_time.allocated_memory / memory : 0;
    utilisation_end = t;
  };
  collector.on_idle = [&] {
    if (submitted >= total) {
      node_seconds = nodes.NodeSeconds(loop.Now());
      close_utilisation(loop.Now());
    }
  };

  // Sampling and autoscaler scans share one tick, which stops once every run
  // has ended so the loop goes idle.
  std::function<void()> tick;
  WallTime last_tick = start;
  tick = [&] {
    const engine::Placement& pl = engine.placement();
    // The wait since the last tick, at the queue it has now: a sample.
    const double waited = static_cast<double>(pl.queued()) * ToSeconds(loop.Now() - last_tick);
    last_tick = loop.Now();
    result.task_time.pending_sampled += waited;
    if (autoscaler.provisioning() > 0) result.task_time.pending_while_provisioning += waited;
    SeriesPoint s;
    s.t = ToSeconds(loop.Now() - start);
    s.nodes = nodes.live_total();
    s.cpu_used = static_cast<double>(pl.used_total().cpu_millis) / 1000.0;
    s.cpu_capacity = nodes.CpuCapacity();
    s.pending = static_cast<double>(pl.queued());
    s.running_runs = static_cast<double>(collector.alive());
    result.series.Add(s);
    if (submitted >= total && collector.alive() == 0) return;
    if (!submit_error.ok()) return;
    if (loop.events_run() > kMaxEvents) {
      submit_error =
          Error{fmt::format("stopped after {} events ({} of {} runs submitted), the "
                            "most one simulation takes",
                            loop.events_run(), submitted, total)};
      return;
    }
    autoscaler.Scan();
    loop.After(
        cluster.autoscaler.enabled ? cluster.autoscaler.scan_interval : options.sample_interval,
        tick);
  };
  loop.Post(tick);
  loop.RunUntilIdle();
  collector.Finish();
  if (!submit_error.ok()) return submit_error.error();

  result.runs = submitted;
  WallTime end = collector.last_end() == WallTime{} ? loop.Now() : collector.last_end();
  result.makespan = end - start;
  result.node_hours = node_seconds / 3600.0;
  result.peak_nodes = nodes.peak();
  result.events = loop.events_run();
  if (!utilisation_end) close_utilisation(end);
  switch (workload.arrival_kind) {
    case WorkloadSpec::ArrivalKind::kRate:
      result.arrival_window = offset_of(total - 1);
      break;
    case WorkloadSpec::ArrivalKind::kCsv:
      result.arrival_window = offset_of(static_cast<int64_t>(csv_order.back())) -
                              offset_of(static_cast<int64_t>(csv_order.front()));
      break;
    default:
      break;
  }
  auto stats = [&](const SharedServer& server, bool modelled) {
    ServiceStats st;
    st.modelled = modelled;
    st.served = server.served();
    double span = ToSeconds(result.makespan);
    st.utilisation = span > 0 ? ToSeconds(server.busy()) / span : 0;
    if (st.served > 0) {
      st.mean_seconds = ToSeconds(server.total_sojourn()) / static_cast<double>(st.served);
    }
    st.demand_seconds = ToSeconds(server.work_submitted()) / server.servers();
    if (result.arrival_window > Duration::zero()) {
      st.offered_load = st.demand_seconds / ToSeconds(result.arrival_window);
    }
    return st;
  };
  result.api = stats(api, api_spec.modelled());
  result.api.workers = api_spec.workers;
  result.artifact_store = stats(store, store_spec.bandwidth > 0);
  result.artifact_store.bandwidth = store_spec.bandwidth;
  result.artifact_store.bytes = result.artifact_store.demand_seconds * store_spec.bandwidth;
  result.task_time.pending = result.pending_ms.sum() / 1000.0;
  result.task_time.api = executor.api_hold();
  result.task_time.store = executor.store_hold();
  return result;
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
  j["cpu_utilisation"] = r.cpu_utilisation;
  j["memory_utilisation"] = r.memory_utilisation;
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
  j["series"] = r.series.ToJson();
  return j;
}

std::string Summary(const SimResult& r) {
  std::string s;
  s += fmt::format("runs        {} ({} succeeded, {} failed)\n", r.runs, r.succeeded, r.failed);
  if (!r.first_error.empty()) s += fmt::format("first error {}\n", r.first_error);
  s += fmt::format("makespan    {}\n", FormatDuration(r.makespan));
  s += fmt::format("run time    p50 {}  p95 {}  max {}\n",
                   FormatMillis(r.run_ms.ValueAtPercentile(50)),
                   FormatMillis(r.run_ms.ValueAtPercentile(95)),
                   FormatMillis(static_cast<double>(r.run_ms.max())));
  s += fmt::format("pending     p50 {}  p95 {} per task\n",
                   FormatMillis(r.pending_ms.ValueAtPercentile(50)),
                   FormatMillis(r.pending_ms.ValueAtPercentile(95)));
  s += fmt::format(
      "nodes       peak {}, {:.2f} node-hours, CPU allocated {:.1f}%, memory {:.1f}% "
      "(time-weighted, first placement to last end)\n",
      r.peak_nodes, r.node_hours, r.cpu_utilisation * 100, r.memory_utilisation * 100);
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

Status WriteResultJson(const SimResult& r, const std::filesystem::path& path) {
  std::error_code ec;
  if (path.has_parent_path()) std::filesystem::create_directories(path.parent_path(), ec);
  return WriteFileAtomically(path, ToJson(r).dump(2) + "\n");
}

}  // namespace kfpbench::sim
