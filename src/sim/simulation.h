// One simulation of a workload on a cluster: the real engine on a
// VirtualLoop, SimExecutor for the steps, Nodes + Autoscaler for the
// cluster, runs arriving as the workload's ArrivalSchedule says. Its state
// is its members and its steps are its methods (Arrive, Tick, a run's end);
// Simulate (simulator.h) checks the input, makes one and runs it.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "engine/engine.h"
#include "sim/arrivals.h"
#include "sim/autoscaler.h"
#include "sim/budget.h"
#include "sim/shared_server.h"
#include "sim/sim_executor.h"
#include "sim/simulator.h"
#include "sim/virtual_loop.h"

namespace kfpbench::sim {

class Simulation : private engine::RunObserver {
 public:
  // The inputs have been checked (ValidateCluster, ArrivalSchedule::Check,
  // CheckSimulationFits) and outlive the simulation.
  Simulation(const ClusterSpec& cluster, const WorkloadSpec& workload, const SimOptions& options,
             const ArrivalSchedule& schedule, const SimEstimate& estimate, uint64_t budget);
  Simulation(const Simulation&) = delete;
  Simulation& operator=(const Simulation&) = delete;

  // Runs the loop until every run has ended (or the simulation stops).
  Result<SimResult> Run();

 private:
  // Submits every arrival now due, then waits for the next one's time (or,
  // in a closed loop, for a run to end).
  void Arrive();
  void Submit(const Arrival* row);
  // Samples the cluster and scans with the autoscaler, every scan interval
  // until the last run ends.
  void Tick();
  void OnRunChanged(const engine::RunSnapshot& s) override;
  void RunEnded(const engine::RunSnapshot& s);
  // By the spec's label strings: a run's tasks point at the same few.
  void CountTask(const std::string* label);
  // Closes node-hours and utilisation at `t`, the last run's end.
  void CloseUtilisation(WallTime t);
  ServiceStats Stats(const SharedServer& server, bool modelled) const;
  void Finish();
  static engine::EngineOptions EngineOptionsFor(const ClusterSpec& cluster,
                                                const WorkloadSpec& workload, Simulation& self);

  const ClusterSpec& cluster_;
  const WorkloadSpec& workload_;
  const SimOptions& options_;
  const ArrivalSchedule& schedule_;
  const SimEstimate& estimate_;
  const uint64_t budget_;
  const int64_t total_;
  // Open-loop arrivals the cluster cannot keep up with pile up as runs in
  // flight: the simulation stops, saying so, before they outgrow the budget.
  const int64_t max_in_flight_;

  SimResult result_;
  VirtualLoop loop_;
  const WallTime start_;
  // The cluster file's store, else the one calibrated from load levels;
  // likewise the API.
  const ArtifactStoreSpec& store_spec_;
  const ApiSpec& api_spec_;
  SharedServer api_;
  SharedServer store_;
  const engine::Resources default_task_;
  SimExecutor executor_;
  // Branches draw from their own stream so that listing one does not shift
  // the step durations the other tasks draw.
  std::mt19937_64 branch_rng_;
  engine::Engine engine_;
  Nodes nodes_;
  Autoscaler autoscaler_;
  MixPicker mix_;

  // Arrivals: one timer at a time, so pending arrivals cost nothing.
  int64_t submitted_ = 0;
  Status error_ = Ok();
  // Runs alive are counted, not kept: each knows its arrival.
  int64_t alive_ = 0;
  WallTime last_end_{};
  // The nodes joined and requested at most, as the last run ended: nodes
  // that come up after it (the loop drains their timers) never served.
  int peak_nodes_at_end_ = -1, peak_requested_at_end_ = -1;
  std::vector<std::pair<const std::string*, int64_t>> tasks_by_label_;
  // Node-hours and utilisation stop at the last run's end, not when the
  // loop drains; utilisation starts at the first task placed, so neither
  // idle nodes before any work nor after it dilute it.
  double node_seconds_ = 0;
  double capacity_cpu_before_ = 0, capacity_memory_before_ = 0;
  std::array<double, engine::kResourceSlots> capacity_before_{};  // slots past memory
  std::optional<WallTime> utilisation_end_;
  WallTime last_tick_;
};

}  // namespace kfpbench::sim
