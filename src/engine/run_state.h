// The engine's in-memory state of a run: DAG instances, their tasks, and the
// container attempts in flight. Internal to src/engine; the public view is
// RunSnapshot.
#pragma once

#include <array>
#include <cstdint>
#include <filesystem>
#include <list>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/engine.h"
#include "engine/placement.h"
#include "ir/cel.h"
#include "ir/pipeline_spec.h"
#include "ir/placeholders.h"

namespace kfpbench::engine::detail {

using ArtifactMap = std::map<std::string, std::vector<ir::ArtifactValue>>;

struct Run;

// Per-run index over one DagSpec: task positions, edges, parsed CEL.
struct DagPlan {
  std::vector<const ir::TaskSpec*> tasks;  // topological order
  std::vector<const ir::ComponentSpec*> components;
  std::vector<const ir::ExecutorSpec*> executors;  // null for DAG tasks and unknown labels
  // ExecutorSpec::runs_in_driver, which compares strings, once per plan.
  std::vector<bool> runs_in_driver;
  std::vector<std::vector<int>> upstream, downstream;
  std::unordered_map<std::string, int> index;
  std::vector<ir::CelExpr> conditions;
  std::vector<std::map<std::string, ir::CelExpr>> selectors;
};

enum class Phase : uint8_t { kWaiting, kActive, kDone };

// TaskExec's and DagExec's parameter maps start null, not as empty objects:
// an empty nlohmann object is a heap allocation, and most tasks of a
// simulated run never hold a parameter. Whatever reads one as a map (and
// what observers see) goes through ObjectOr: the map, or an empty object.
const nlohmann::json& ObjectOr(const nlohmann::json& map);

struct DagExec;

// What a ParallelFor task holds while its iterations run.
struct LoopState {
  nlohmann::json items;
  nlohmann::json iteration_inputs;  // what every iteration gets, besides its item
  size_t next_item = 0;
  int running_iterations = 0;
  int busy = 0;  // >0 while FillLoop is starting iterations
  std::vector<DagExec*> iterations;
};

// What few tasks of a simulated run hold, apart from the rest: an error,
// artifacts, a cache fingerprint, a retry's launch and attempts, a loop.
struct TaskRare {
  std::string error;
  ArtifactMap out_artifacts;
  ArtifactMap in_artifacts;
  std::string fingerprint;                   // set when caching is enabled for the task
  std::unique_ptr<TaskLaunch> retry_launch;  // kept only when a retry may need it
  int attempts = 0;                          // ended, for a task with a retry policy
  LoopState loop;
};

// A task's parameters, apart: tasks of many pipelines (the simulator's
// benchmark's among them) have none.
struct TaskValues {
  nlohmann::json params;   // resolved input parameters (null: none; see ObjectOr)
  nlohmann::json outputs;  // output parameters (null: none)
};

// A task's state in 32 bytes: thousands of runs are alive at once, so a
// task's state is cold whenever it changes. A DAG's tasks sit side by side,
// two to a cache line, and a task's end reads its own, its downstream tasks'
// and, when the DAG ends, all of them. What most tasks never hold waits
// behind `rare` and `values`.
struct TaskExec {
  Phase phase = Phase::kWaiting;
  bool cached = false;  // SKIPPED because its outputs were reused: they count as produced
  RuntimeState state = RuntimeState::kPending;  // final once kDone
  int record = -1;                              // index in Run::records once created
  int unfinished_upstream = 0;
  std::unique_ptr<TaskRare> rare;      // null until the task needs any of it
  std::unique_ptr<TaskValues> values;  // null until it holds a parameter

  // Made on first use.
  TaskRare& Rare();
  nlohmann::json& Params();
  nlohmann::json& Outputs();
  // Null when `values` is.
  const nlohmann::json& params() const;
  const nlohmann::json& outputs() const;
  // Empty when `rare` is null.
  const std::string& error() const;
  const ArtifactMap& out_artifacts() const;
  const ArtifactMap& in_artifacts() const;
  const std::string& fingerprint() const;
  const TaskLaunch* retry_launch() const { return rare ? rare->retry_launch.get() : nullptr; }
  int attempts() const { return rare ? rare->attempts : 0; }
};
static_assert(sizeof(TaskExec) <= 32, "a task's state is meant to fit half a cache line");

// What a task's change reads of its DAG first and together, in 64 bytes
// (see TaskExec).
struct DagExec {
  std::vector<TaskExec> tasks;  // sized once: pointers to tasks stay valid
  const DagPlan* plan = nullptr;
  Run* run = nullptr;
  int active = 0;  // tasks in Phase::kActive
  int busy = 0;    // >0 while a loop over tasks is starting them
  bool finished = false;
  RuntimeState state = RuntimeState::kPending;
  int record = -1;
  int parent_task = -1;  // index in parent->tasks
  DagExec* parent = nullptr;
  int iteration = -1;  // >= 0 for a ParallelFor iteration
  const ir::ComponentSpec* component = nullptr;
  // Its input parameters, read-only: runs of one spec without parameters
  // share their defaults. Null: none (Inputs() is then an empty object).
  std::shared_ptr<const nlohmann::json> inputs;
  ArtifactMap in_artifacts;
  std::filesystem::path dir;  // relative work dir of its tasks
  std::string error;
  nlohmann::json outputs;  // null: none
  ArtifactMap out_artifacts;

  const nlohmann::json& Inputs() const;
};

// Launches so far per executor (TaskLaunch::label_launches_before). A run
// has a handful of executors: the first two are counted inline, beside the
// run's id, which a launch reads anyway; any more in a vector.
class LaunchCounts {
 public:
  // The launches of `exec` counted before this one, which it counts.
  uint32_t Count(const ir::ExecutorSpec* exec);

 private:
  static constexpr size_t kInline = 2;
  std::array<const ir::ExecutorSpec*, kInline> exec_{};
  std::array<uint32_t, kInline> launches_{};
  std::unique_ptr<std::vector<std::pair<const ir::ExecutorSpec*, uint32_t>>> more_;
};

struct Run {
  // What each event reads or writes, first and together in 64 bytes (see
  // TaskExec): the run's state and where its records are.
  RuntimeState state = RuntimeState::kPending;
  RuntimeState snapshot_state = RuntimeState::kPending;  // in the last snapshot
  bool stopping = false;  // a task failed: start nothing new but exit handlers
  bool canceled = false;
  bool finished = false;
  bool dirty = false;
  bool snapshot_sent = false;
  bool retry = false;  // `keep` holds tasks: each task looks itself up there
  std::vector<TaskState> records;
  // What a launch reads besides, next.
  LaunchCounts launches;
  std::string id;
  // With EngineOptions::task_details, the rest of each record by the same
  // index (ids, key, inputs, outputs, history, error, pod, node, ...); its
  // state, times and delay are in `records` until a snapshot copies them.
  // Empty without details.
  std::vector<TaskRecord> details;
  WallTime finished_at{};
  // Record names the spec does not hold (ParallelFor iterations'): a list,
  // so that TaskState's pointers stay valid as it grows, and nothing is
  // allocated for a run without loops (a deque allocates when made).
  std::list<std::string> names;
  std::vector<StateChange> history;
  std::string error;
  // A list: DAGs are referred to by address, and the root's node is the
  // run's only allocation for DAGs (a vector of pointers would add one).
  std::list<DagExec> dags;
  std::shared_ptr<const ir::PipelineSpec> spec;
  // Plans depend only on the spec, so runs of one spec share them (the
  // engine hands the same set to consecutive runs of the same spec object).
  std::shared_ptr<std::unordered_map<const ir::DagSpec*, DagPlan>> plans;
  std::string pipeline_root;
  std::string display_name;
  WallTime created_at{};
  WallTime scheduled_at{};
  // Stands for the Argo workflow's name ("<pipeline>-<5 random>"): pods are
  // named after it, and it is {{$.pipeline_job_resource_name}}.
  std::string resource_name;
  // {{$.workspace_path}}: KFP mounts the run's workspace PVC at
  // /kfp-workspace; local steps get a folder of the run's own.
  std::string workspace_path;
  bool workspace_is_local = false;         // a folder made on first use
  std::map<std::string, TaskRecord> keep;  // RunRequest::keep
  // Snapshot throttling of large runs (EngineOptions::large_run_records),
  // with snapshot_state.
  WallTime snapshot_time{};
  Duration snapshot_cost{};  // real time the last snapshot and its observer took
  bool snapshot_scheduled = false;
};

// One attempt of a container task, from queueing to its result.
// Aligned to a cache line, with what a completion reads in the first one:
// a running attempt's slot is cold by the time its task ends.
struct alignas(64) Container {
  enum class Where : uint8_t { kQueued, kRunning, kBackoff };
  uint32_t generation = 0;  // of its slot in the engine's pool
  bool live = false;
  Where where = Where::kQueued;
  int task = 0;    // index in dag->tasks
  int record = 0;  // the task's, index in run->records
  Run* run = nullptr;
  DagExec* dag = nullptr;
  // &dag->tasks[task]: a completion loads the task's line alongside the
  // DAG's, not after it.
  TaskExec* task_exec = nullptr;
  size_t node = 0;
  // Its CPU and memory end the first cache line; its rules (`scheduling`),
  // read only when it is queued, begin the second.
  Demand demand;
  // What placement reads (Launch), to the end of the second line.
  WallTime ready_at{};
  const ir::ExecutorSpec* exec = nullptr;
  const ir::ComponentSpec* component = nullptr;
  Resources resources;  // what the launch asks for
  uint64_t serial = 0;  // creation order (Terminate cancels in it)
  TimerId timer = 0;
  // The launch itself, with EngineOptions::resolve_command_lines, is kept
  // beside the slot (Engine's container_launches), not in it: 384 bytes
  // that would spread the attempts a simulation keeps over six times the
  // cache.
};

// The plan for `comp`'s DAG, built on first use and kept for the run.
const DagPlan& PlanFor(Run& run, const ir::ComponentSpec& comp);

// A record's task id.
std::string TaskId(const Run& run, int record);

// The run's records as observers see them; with details, moved out of the run
// when `take` (the run is ending), else copied.
std::vector<TaskRecord> TaskRecords(Run& run, bool take);

}  // namespace kfpbench::engine::detail
