// What a workload plan (workload_plan.h) did on a real control plane:
// stack/argo/cmd/argo-run-plan's record of each run's workflow and each
// step's pod, timed as it watched them, in wall seconds from its start.
// StackResult turns it into the simulator's result form, over the same
// definitions (makespan from the start, a run from its arrival to its end,
// a task's wait from ready to placed), so `simulate` and the stack compare
// figure by figure.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "sim/model.h"
#include "sim/simulator.h"
#include "sim/workload_plan.h"
#include "util/result.h"

namespace kfpbench::sim {

inline constexpr std::string_view kStackRecordFormat = "kfpbench-stack-record/1";

// Times in wall seconds since the recorder started; -1: never seen.
struct StackPod {
  int task = 0;  // PlannedTask::id
  std::string node;
  double created = -1, scheduled = -1, started = -1, finished = -1;
  int exit_code = 0;
};

struct StackRun {
  std::string name;
  double due = 0;  // its arrival over the time scale
  double submitted = -1, finished = -1;
  std::string phase;  // Argo's: Succeeded, Failed, Error; empty: unfinished
  std::string message;
  std::vector<StackPod> pods;
};

struct StackRecord {
  double time_scale = 1;  // simulated seconds per wall second
  int nodes = 0;
  bool complete = false;  // every run finished
  std::vector<StackRun> runs;
};

Result<StackRecord> ParseStackRecord(std::string_view text);

// The record in simulated time (wall x time_scale), as a SimResult: runs,
// makespan, run durations, task waits (ready = its dependencies done, or its
// run's arrival; placed = bound to a node), peak nodes and node-hours (the
// stack's nodes are fixed), CPU and memory allocated (bound to the main
// container's end, over the nodes of `cluster`'s pools), tasks by label and
// a series sampled every `sample_seconds`. Refused: a record of another
// plan (runs or tasks it does not have), or without any finished run.
Result<SimResult> StackResult(const WorkloadPlan& plan, const StackRecord& record,
                              const ClusterSpec& cluster, double sample_seconds = 10);

}  // namespace kfpbench::sim
