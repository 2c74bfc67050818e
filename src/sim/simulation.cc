#include "sim/simulation.h"

#include <algorithm>

#include <fmt/format.h>

#include "util/human.h"

namespace kfpbench::sim {
namespace {

const ArtifactStoreSpec& StoreSpec(const ClusterSpec& cluster, const WorkloadSpec& workload) {
  return cluster.artifact_store.bandwidth > 0 ? cluster.artifact_store
                                              : workload.calibrated_artifact_store;
}

const ApiSpec& ApiSpecOf(const ClusterSpec& cluster, const WorkloadSpec& workload) {
  return cluster.api.modelled() ? cluster.api : workload.calibrated_api;
}

}  // namespace

Simulation::Simulation(const ClusterSpec& cluster, const WorkloadSpec& workload,
                       const SimOptions& options, const ArrivalSchedule& schedule,
                       const SimEstimate& estimate, uint64_t budget)
    : cluster_(cluster),
      workload_(workload),
      options_(options),
      schedule_(schedule),
      estimate_(estimate),
      budget_(budget),
      total_(schedule.total()),
      max_in_flight_(MaxRunsInFlight(estimate, budget)),
      start_(loop_.Now()),
      store_spec_(StoreSpec(cluster, workload)),
      api_spec_(ApiSpecOf(cluster, workload)),
      api_(loop_, SharedServer::Discipline::kFifo, api_spec_.workers),
      store_(loop_, store_spec_.fifo ? SharedServer::Discipline::kFifo
                                     : SharedServer::Discipline::kProcessorSharing),
      default_task_{cluster.default_task_cpu, 0, cluster.default_task_memory, 0, {}},
      executor_(loop_, workload.steps, workload.seed,
                SharedServices{&api_, api_spec_.task_update, &store_, store_spec_.bandwidth},
                default_task_),
      branch_rng_(workload.seed ^ 0x9e3779b97f4a7c15ULL),
      engine_(loop_, executor_, *this, EngineOptionsFor(cluster, workload, *this)),
      nodes_(loop_, engine_, cluster),
      autoscaler_(loop_, engine_, cluster, nodes_),
      mix_(workload.mix),
      last_tick_(start_) {
  result_.series = Series(ToSeconds(options.sample_interval), options.max_series_points);
  for (size_t p = 0; p < cluster.pools.size(); ++p) {
    int n = std::max(cluster.pools[p].initial, cluster.pools[p].min);
    for (int i = 0; i < n; ++i) nodes_.Add(p);
  }
  executor_.on_first_launch = [this] {
    capacity_cpu_before_ = nodes_.CpuSeconds(loop_.Now());
    capacity_memory_before_ = nodes_.MemorySeconds(loop_.Now());
    for (size_t slot = engine::kMemory + 1; slot < engine::kResourceSlots; ++slot) {
      capacity_before_[slot] = nodes_.CapacitySeconds(slot, loop_.Now());
    }
  };
}

engine::EngineOptions Simulation::EngineOptionsFor(const ClusterSpec& cluster,
                                                   const WorkloadSpec& workload, Simulation& self) {
  engine::EngineOptions eo;
  eo.random_seed = workload.seed;
  eo.light_snapshots = true;
  eo.requeue_time = cluster.requeue_time;
  eo.task_details = false;
  eo.resolve_command_lines = false;
  if (!workload.branches.empty()) {
    eo.decide_condition = [&self](const std::string& task) -> std::optional<bool> {
      auto it = self.workload_.branches.find(task);
      if (it == self.workload_.branches.end()) return std::nullopt;
      return std::uniform_real_distribution<double>(0, 1)(self.branch_rng_) < it->second;
    };
  }
  eo.default_task_resources = self.default_task_;
  for (const auto& p : cluster.pools) eo.node_shapes.push_back(p.Node(p.name));
  return eo;
}

Result<SimResult> Simulation::Run() {
  loop_.Post([this] { Arrive(); });
  loop_.Post([this] { Tick(); });
  loop_.RunUntilIdle();
  for (const auto& [label, n] : tasks_by_label_) result_.tasks_by_label[*label] += n;
  tasks_by_label_.clear();
  if (!error_.ok()) return error_.error();
  Finish();
  return std::move(result_);
}

void Simulation::Arrive() {
  while (submitted_ < total_ && error_.ok()) {
    if (alive_ >= schedule_.concurrency()) return;  // a run's end lets the next in
    if (alive_ >= max_in_flight_) {
      error_ = Error{fmt::format(
          "stopped after {} of {} runs: {} runs were in flight at once, as many as fit in {} "
          "({} each); the cluster does not keep up with the arrivals",
          submitted_, total_, alive_, FormatBytes(static_cast<double>(budget_)),
          FormatBytes(static_cast<double>(estimate_.run_bytes)))};
      return;
    }
    const Duration due = schedule_.Due(submitted_);
    if (start_ + due > loop_.Now()) {
      loop_.After(start_ + due - loop_.Now(), [this] { Arrive(); });
      return;
    }
    Submit(schedule_.Row(submitted_));
  }
}

void Simulation::Submit(const Arrival* row) {
  engine::RunRequest req;
  req.run_id = "run-";
  req.run_id += std::to_string(submitted_++);
  req.spec = workload_.pipeline;
  if (row != nullptr && row->pipeline != nullptr) {
    req.spec = row->pipeline;
  } else if (!workload_.mix.empty()) {
    req.spec = mix_.Next().pipeline;
  }
  req.created_at = loop_.Now();
  if (!workload_.parameters.empty()) req.parameters = workload_.parameters;
  if (row != nullptr) {
    for (const auto& [k, v] : row->parameters.items()) req.parameters[k] = v;
  }
  ++alive_;
  result_.peak_runs_alive = std::max(result_.peak_runs_alive, alive_);
  auto submit = [this](engine::RunRequest r) {
    if (auto st = engine_.Submit(std::move(r)); !st.ok() && error_.ok()) error_ = st.error();
  };
  if (api_spec_.run_create > Duration::zero()) {
    // CreateRun queues at the API server; the run starts once it is served.
    api_.Submit(api_spec_.run_create,
                [submit, r = std::move(req)]() mutable { submit(std::move(r)); });
  } else {
    submit(std::move(req));
  }
}

void Simulation::OnRunChanged(const engine::RunSnapshot& s) {
  if (IsTerminal(s.state)) RunEnded(s);
}

void Simulation::RunEnded(const engine::RunSnapshot& s) {
  if (options_.on_run_end) options_.on_run_end(s, s.created_at);
  result_.run_ms.Record(ToMillis(s.finished_at - s.created_at));
  --alive_;
  last_end_ = std::max(last_end_, s.finished_at);
  if (alive_ == 0 && submitted_ >= total_) {
    peak_nodes_at_end_ = nodes_.peak();
    peak_requested_at_end_ = autoscaler_.peak_requested();
    node_seconds_ = nodes_.NodeSeconds(loop_.Now());
    CloseUtilisation(loop_.Now());
  }
  // Closed loop: each run that ends makes room for the next (posted, so the
  // engine is not re-entered from its own observer).
  if (schedule_.closed()) loop_.Post([this] { Arrive(); });
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

void Simulation::CountTask(const std::string* label) {
  for (auto& [counted, n] : tasks_by_label_) {
    if (counted == label) {
      ++n;
      return;
    }
  }
  tasks_by_label_.emplace_back(label, 1);
}

void Simulation::CloseUtilisation(WallTime t) {
  const double cpu = nodes_.CpuSeconds(t) - capacity_cpu_before_;
  const double memory = nodes_.MemorySeconds(t) - capacity_memory_before_;
  TaskTime& tt = result_.task_time;
  tt.allocated_cpu = executor_.AllocatedCpuSeconds(t);
  tt.allocated_memory = executor_.AllocatedMemorySeconds(t);
  tt.held = executor_.TaskSeconds(t);
  result_.cpu_utilisation = cpu > 0 ? tt.allocated_cpu / cpu : 0;
  result_.memory_utilisation = memory > 0 ? tt.allocated_memory / memory : 0;
  result_.resources.clear();
  for (size_t slot = engine::kMemory + 1; slot < engine::kResourceSlots; ++slot) {
    ResourceUse use;
    use.allocated = executor_.AllocatedSeconds(slot, t);
    use.capacity = nodes_.CapacitySeconds(slot, t) - capacity_before_[slot];
    if (use.allocated <= 0 && use.capacity <= 0) continue;
    use.name = engine::SlotName(slot);
    use.utilisation = use.capacity > 0 ? use.allocated / use.capacity : 0;
    result_.resources.push_back(std::move(use));
  }
  utilisation_end_ = t;
}

void Simulation::Tick() {
  const engine::Placement& pl = engine_.placement();
  // The wait since the last tick, at the queue it has now: a sample.
  const double waited = static_cast<double>(pl.queued()) * ToSeconds(loop_.Now() - last_tick_);
  last_tick_ = loop_.Now();
  result_.task_time.pending_sampled += waited;
  if (autoscaler_.provisioning() > 0) result_.task_time.pending_while_provisioning += waited;
  SeriesPoint s;
  s.t = ToSeconds(loop_.Now() - start_);
  s.nodes = nodes_.live_total();
  s.cpu_used = static_cast<double>(pl.used_total()[engine::kCpu]) / 1000.0;
  s.cpu_capacity = nodes_.CpuCapacity();
  s.pending = static_cast<double>(pl.queued());
  s.running_runs = static_cast<double>(alive_);
  result_.series.Add(s);
  if (submitted_ >= total_ && alive_ == 0) return;
  if (!error_.ok()) return;
  if (loop_.events_run() > kMaxEvents) {
    error_ = Error{fmt::format(
        "stopped after {} events ({} of {} runs submitted), the most one simulation takes",
        loop_.events_run(), submitted_, total_)};
    return;
  }
  autoscaler_.Scan();
  loop_.After(
      cluster_.autoscaler.enabled ? cluster_.autoscaler.scan_interval : options_.sample_interval,
      [this] { Tick(); });
}

ServiceStats Simulation::Stats(const SharedServer& server, bool modelled) const {
  ServiceStats st;
  st.modelled = modelled;
  st.served = server.served();
  const double span = ToSeconds(result_.makespan);
  st.utilisation = span > 0 ? ToSeconds(server.busy()) / span : 0;
  if (st.served > 0) {
    st.mean_seconds = ToSeconds(server.total_sojourn()) / static_cast<double>(st.served);
  }
  st.demand_seconds = ToSeconds(server.work_submitted()) / server.servers();
  if (result_.arrival_window > Duration::zero()) {
    st.offered_load = st.demand_seconds / ToSeconds(result_.arrival_window);
  }
  return st;
}

void Simulation::Finish() {
  result_.runs = submitted_;
  const WallTime end = last_end_ == WallTime{} ? loop_.Now() : last_end_;
  result_.makespan = end - start_;
  result_.node_hours = node_seconds_ / 3600.0;
  result_.peak_nodes = peak_nodes_at_end_ >= 0 ? peak_nodes_at_end_ : nodes_.peak();
  result_.peak_nodes_requested =
      std::max(result_.peak_nodes,
               peak_requested_at_end_ >= 0 ? peak_requested_at_end_ : autoscaler_.peak_requested());
  result_.events = loop_.events_run();
  if (!utilisation_end_) CloseUtilisation(end);
  result_.arrival_window = schedule_.Window();
  result_.api = Stats(api_, api_spec_.modelled());
  result_.api.workers = api_spec_.workers;
  result_.artifact_store = Stats(store_, store_spec_.bandwidth > 0);
  result_.artifact_store.bandwidth = store_spec_.bandwidth;
  result_.artifact_store.bytes = result_.artifact_store.demand_seconds * store_spec_.bandwidth;
  result_.task_time.pending = result_.pending_ms.sum() / 1000.0;
  result_.task_time.api = executor_.api_hold();
  result_.task_time.store = executor_.store_hold();
}

}  // namespace kfpbench::sim
