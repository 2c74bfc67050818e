// The simulator's workload, expanded: every run it ran with its arrival,
// its tasks (the DAG as the engine unfolded it: ParallelFor iterations,
// conditions decided, DAG tasks kept) and each step's requests and the
// duration the simulation drew for it. Another executor of the same
// workload (the local stack's Argo Workflows: stack/argo/cmd/argo-run-plan)
// then runs exactly these runs, so its answer and the simulator's are
// paired: the same arrivals, the same step times, only the cluster differs.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/model.h"
#include "sim/simulator.h"
#include "util/result.h"

namespace kfpbench::sim {

inline constexpr std::string_view kWorkloadPlanFormat = "kfpbench-workload-plan/1";

struct PlannedTask {
  int id = 0;              // unique in its run
  int parent = -1;         // id of its DAG task; -1: the root DAG
  std::string name;        // in its DAG ("train", "for-loop-2-iteration-0")
  bool container = false;  // a step (a pod); else a DAG (a group, a loop or an iteration)
  // Names of tasks of the same DAG it waits for (ran ones only: a
  // dependency on a task whose condition was false is met, as in Argo).
  std::vector<std::string> dependencies;
  // A step's: start to end in the simulation (overhead + the drawn duration),
  // and what it asks of a node, as the engine placed it (request, else limit,
  // else the cluster's defaultTask).
  double seconds = 0;
  int64_t cpu_millis = 0;
  int64_t memory_bytes = 0;
  std::string label;  // its executor label
};

struct PlannedRun {
  std::string name;  // the simulation's run id ("run-0")
  double arrival_seconds = 0;
  std::vector<PlannedTask> tasks;  // parents before their children
};

struct WorkloadPlan {
  std::vector<PlannedRun> runs;  // in arrival order
};

// Simulates `workload` on `cluster` and records each run as it ran (each
// step's own time: a plan is for another control plane, so the cluster's
// requeueTime is not in it); the simulation's result on `cluster`, its
// requeue time included, goes to `result` when given. Refused: a run that
// failed in the simulation, a step run by the driver (importers), a
// closed-loop workload (its arrivals follow the cluster, so no plan can
// fix them), and steps whose requests come from placeholders.
Result<WorkloadPlan> PlanWorkload(const ClusterSpec& cluster, const WorkloadSpec& workload,
                                  SimResult* result = nullptr);

nlohmann::json ToJson(const WorkloadPlan& plan);
// Reads what ToJson wrote; a malformed plan is an error naming the field.
Result<WorkloadPlan> ParseWorkloadPlan(std::string_view text);

}  // namespace kfpbench::sim
