// Executes compiled KFP v2 pipelines: resolves each task's inputs, waits for
// its dependencies, places it on a node with room, launches it through an
// Executor, and reports every change to a RunObserver.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/event_loop.h"
#include "engine/executor.h"
#include "engine/placement.h"
#include "engine/resources.h"
#include "engine/task_cache.h"
#include "ir/pipeline_spec.h"
#include "kfp/runtime_state.h"
#include "util/result.h"
#include "util/time.h"

namespace kfpbench::engine {

struct StateChange {
  WallTime time{};
  RuntimeState state = RuntimeState::kUnspecified;
  std::string error;
};

struct TaskRecord {
  // What every state change and the simulator's tally read, first and
  // together: records of thousands of runs are alive at once, and a task's
  // record is cold by the time it changes again.
  RuntimeState state = RuntimeState::kPending;
  WallTime start_time{}, end_time{};  // epoch (zero) until they happen
  Duration scheduling_delay{};        // ready -> placed
  std::string executor_label;         // empty for DAG tasks
  WallTime create_time{};
  double cpu_seconds = 0;
  int64_t peak_rss_bytes = 0;
  std::string task_id;  // unique across runs
  // The task's path within its run ("for-loop-2/iteration-0/train"): the same
  // task in a retry of the run has the same key. Empty for the root DAG and
  // ParallelFor iterations.
  std::string key;
  std::string name;  // task name in its DAG; the root DAG is named after the pipeline
  std::string display_name;
  std::string parent_task_id;  // empty for the root DAG
  std::vector<std::string> child_task_ids;
  std::string pod_name;
  std::vector<StateChange> history;
  // {"parameters": {...}} (outputs also {"artifacts": {...}}) when the engine
  // keeps task details (EngineOptions::task_details); null without them, as
  // an empty object would cost an allocation per record.
  nlohmann::json inputs;
  nlohmann::json outputs;
  std::string error;
  std::string node;  // the node it was placed on
  std::string log_path;
  std::string cache_fingerprint;  // when caching was enabled for the task
};

// A task record while its run executes: what a change of its state reads
// and writes, in 72 bytes, where a TaskRecord is 488 and its strings.
// Records of thousands of runs are alive at once, each cold by the time it
// changes again. The TaskRecords observers see are built from these only when
// a snapshot carries them.
struct TaskState {
  RuntimeState state = RuntimeState::kPending;
  int32_t parent = -1;  // index of its DAG's record; -1 for the root
  WallTime create_time{}, start_time{}, end_time{};
  Duration scheduling_delay{};  // ready -> placed
  // Owned by the run's spec, or by the run (ParallelFor iterations' names).
  const std::string* name = nullptr;
  const std::string* display_name = nullptr;
  const std::string* executor_label = nullptr;  // empty for DAG tasks
  uint64_t short_id = 0;                        // the id is "t<short_id>" without task details
};

struct RunSnapshot {
  std::string run_id;
  RuntimeState state = RuntimeState::kPending;
  std::vector<StateChange> history;
  WallTime created_at{};  // RunRequest::created_at
  WallTime finished_at{};
  std::string error;
  std::vector<TaskRecord> tasks;
  // Only in light snapshots (EngineOptions::light_snapshots), and only in
  // the last, when the run ends: the engine's own task states, in place of
  // `tasks`, valid during OnRunChanged alone.
  std::span<const TaskState> task_states;
};

class RunObserver {
 public:
  virtual ~RunObserver() = default;
  // Called on the loop whenever a run or any of its tasks changes.
  virtual void OnRunChanged(const RunSnapshot& snapshot) = 0;
  // Called on the loop when Terminate names a run this engine is not
  // executing (never submitted here, or already finished): whoever keeps
  // runs may hold one in flight that nothing will ever end.
  virtual void OnTerminateNotExecuting(const std::string& run_id) { (void)run_id; }
};

struct RunRequest {
  std::string run_id;
  std::shared_ptr<const ir::PipelineSpec> spec;
  nlohmann::json parameters;  // runtime_config.parameters: an object, or null for none
  std::string pipeline_root;
  // A retry (Argo's retry, which KFP's :retry is): tasks of the failed
  // attempt, by key, that ended SUCCEEDED (or SKIPPED on a cache hit). They are
  // kept as they were, outputs included, instead of running again; everything
  // else runs.
  std::map<std::string, TaskRecord> keep;
  // What KFP's driver substitutes for {{$.pipeline_job_name}},
  // {{$.pipeline_job_create_time_utc}} and {{$.pipeline_job_schedule_time_utc}}
  // (the run's display name, creation and scheduled time; the last is unset
  // for runs no schedule started).
  std::string display_name;
  WallTime created_at{};
  WallTime scheduled_at{};
};

struct EngineOptions {
  std::filesystem::path work_root;  // per-task directories are made below it
  // Besides the work root, the folders whose files an importer's plain-path
  // URI may name (the server's --package-root). Object-store URIs map to
  // work_root/objects/<scheme>/… (ir/artifact_uri.h).
  std::vector<std::filesystem::path> import_roots;
  std::vector<NodeSpec> nodes;  // empty: one node the size of this machine
  Resources default_task_resources{0.1, 0, 64 << 20, 0, {}};  // when the IR asks for none
  // Seeds task ids and pod names; 0 draws a seed from std::random_device. A
  // fixed seed makes simulated runs reproducible.
  uint64_t random_seed = 0;
  // Shapes of nodes that AddNode may bring later (an autoscaled pool). A task
  // that fits one waits for it instead of failing at once; with any shape
  // set, an empty `nodes` means "no nodes yet", not this machine.
  std::vector<NodeSpec> node_shapes;
  // Snapshots carry no task records: the last, when the run ends, carries
  // its history and its task states (RunSnapshot::task_states); earlier ones
  // carry the run's id and state, and go out only when that state changes
  // (a task's change alone is not reported). Copying every record on every
  // change, or building them at the end, is what a simulation of many runs
  // would otherwise spend its time on.
  bool light_snapshots = false;
  // A run with at least this many task records (a wide ParallelFor) is
  // snapshotted at most once per `large_run_snapshot_interval` while only its
  // tasks change; a change of the run's own state, and its end, go out at
  // once. Each snapshot copies every record, and its observer rewrites the
  // whole status, so snapshotting every change would make a 1,000-item loop
  // quadratic (80 s where 1 s will do). The interval grows to four times
  // what the last snapshot cost, so snapshots never take more than a fifth
  // of the loop. Observers still see every run state, and never a task list
  // older than one they saw.
  size_t large_run_records = 256;
  Duration large_run_snapshot_interval = std::chrono::milliseconds(250);
  // Decides a task's triggerPolicy.condition instead of evaluating it, by the
  // task's name in its DAG (e.g. "condition-2"): the simulator takes branches
  // with given probabilities. nullopt (or no function) evaluates it as usual.
  std::function<std::optional<bool>(const std::string& task_name)> decide_condition;
  // Records in full (what GetRun shows): UUID task ids, keys, inputs,
  // outputs, state histories, errors, pods, nodes, measured CPU and memory.
  // Without details a record has its names, label, state, times, scheduling
  // delay and links to its parent and children, and its id is "t" and a
  // counter unique within the engine: what the simulator reads. A run's
  // records are then 72 bytes each instead of ~500 and their strings, which
  // is what lets thousands of simulated runs stay in cache. A retry's kept
  // tasks (RunRequest::keep) keep their ids only with details.
  bool task_details = true;
  // Resolve each container's command line, environment, image, work
  // directory and pod name for the executor. An executor that only keeps time (the
  // simulator's) needs none of it; output parameter types are always given.
  bool resolve_command_lines = true;
  // Make each container task's work directory (its outputs and artifacts
  // folders) before launching it. An executor whose steps never write there
  // (the stub) does without: that is several file system calls per task.
  bool create_work_dirs = true;
  // Where cachingOptions.enableCache looks up and records executions; null:
  // no caching, every task runs. Must outlive the engine.
  TaskCache* cache = nullptr;
  // A workflow controller that notices a finished pod only when it looks at
  // the workflow again (Argo: DEFAULT_REQUEUE_TIME after a pod's change). A
  // container that succeeds frees its node at once, but its task (and what
  // follows from it: dependants, its DAG's end, the run's end) completes
  // only at that next look: `requeue_time` after its end, or `requeue_time`
  // after it started when it ends sooner (the look its own start caused).
  // Zero: at once. For the simulator, which never cancels runs.
  Duration requeue_time{0};
};

// Destroy the Engine only after its EventLoop has stopped running callbacks:
// posted work and executor completions refer to it.
class Engine {
 public:
  Engine(EventLoop& loop, Executor& executor, RunObserver& observer, EngineOptions options);
  ~Engine();

  // Checks the request (required parameters present and of the right type,
  // every componentRef and executor known, the DAG acyclic) on the caller's
  // thread, then queues the run on the loop. Thread-safe.
  Status Submit(RunRequest request);
  // Cancels a run's pending and running tasks; the run ends CANCELED. A run
  // it is not executing goes to RunObserver::OnTerminateNotExecuting. Thread-safe.
  void Terminate(const std::string& run_id);

  // Runtime nodes, for the simulator's autoscaler. Call these on the loop
  // only (they are not thread-safe, unlike Submit).
  // Adds a node and places queued tasks that now fit; returns its index.
  size_t AddNode(const NodeSpec& node);
  // Removes an idle node; false if a task is placed on it or it is gone.
  bool RemoveNode(size_t index);
  // Nodes, what is placed on them, and the queue of tasks waiting for room.
  const Placement& placement() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace kfpbench::engine
