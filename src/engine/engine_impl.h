// Engine::Impl: the engine's state and its handlers, declared once and
// defined by seam, one file each:
//
//   engine.cc           the public Engine, and Impl's construction
//   runs.cc             a run's start, end and cancellation
//   run_records.cc      task records, state changes, snapshots to the observer
//   dag_progress.cc     DAG instances: which task starts when, and when a DAG ends
//   driver_tasks.cc     what KFP's driver does without a pod: importers, PVCs
//   parallel_for.cc     ParallelFor loops and their iterations
//   container_launch.cc what a container task is launched with
//   launch_queue.cc     attempts: queued for a node, launched, done, retried
//   task_reuse.cc       tasks an earlier execution stands for: cache hits, a
//                       retry's kept tasks
//
// Everything below Submit/Terminate runs inside EventLoop callbacks, one at
// a time, so the state needs no locks; time comes only from loop.Now() and
// delays only from loop.After, so the same code runs on the simulator's
// virtual clock.
//
// A run is a tree of DAG instances (root, sub-pipelines, conditions, one per
// ParallelFor iteration). Each DAG instance starts a task once all its
// upstream tasks are done; container tasks queue for a node with room
// (Placement) and are handed to the Executor; DAG tasks start a child DAG
// instance. A DAG instance is done when none of its tasks is in flight.
//
// Internal to src/engine.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <unordered_map>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/engine.h"
#include "engine/placement.h"
#include "engine/run_state.h"
#include "engine/stable_vector.h"
#include "ir/artifact_uri.h"

namespace kfpbench::engine {

namespace detail {

// The label of records that have none (DAGs); TaskState points at it.
inline const std::string kNoLabel;
// The default error of state changes: a "" default argument would build a
// string on every call.
inline const std::string kNoError;

// An artifact as task records and the cache hold it.
nlohmann::json ArtifactJson(const ir::ArtifactValue& a);

}  // namespace detail

struct Engine::Impl {
  Impl(EventLoop& l, Executor& e, RunObserver& o, EngineOptions opts);

  EventLoop& loop;
  Executor& executor;
  RunObserver& observer;
  EngineOptions options;
  ir::ArtifactRoots artifact_roots;  // what importers' URIs may name
  Placement placement;
  std::mt19937_64 rng;
  // Runs in the map's nodes themselves (which never move): one allocation
  // a run, not two.
  std::unordered_map<std::string, detail::Run> runs;
  // Container attempts live in slots reused through a free list: a warm
  // engine allocates nothing per attempt and reuses the slot freed last,
  // still in cache. An id is the slot and its generation, so an id whose
  // attempt is gone (a late completion, a stale timer) finds nothing.
  // Slots never move as more are made: attempts are referred to by address.
  StableVector<detail::Container> container_slots;
  // By slot, with EngineOptions::resolve_command_lines: built when the task
  // starts (what can fail is found then, not once placed). Without, the
  // launch is built at placement from the attempt's fields (TimingLaunch).
  StableVector<TaskLaunch> container_launches;
  std::vector<uint32_t> free_container_slots;
  uint64_t next_container = 1;  // Container::serial
  uint64_t next_short_id = 1;   // without task details
  int depth = 0;                // nesting of engine handlers; notifications go out at 0
  // The last spec started and its DAG plans, for the next run of the same
  // spec object (a simulation submits one spec many times). Holding the spec
  // keeps the plans' pointers into it valid.
  std::shared_ptr<const ir::PipelineSpec> last_spec;
  decltype(detail::Run::plans) last_plans;
  std::string last_resource_prefix;  // SanitizeName(last_spec->name) + "-"
  std::vector<detail::Run*> dirty_runs;
  std::vector<detail::Run*> spare_dirty_runs;    // Flush's
  std::vector<Placement::Placed> placed_buffer;  // SchedulePending's
  // RunParameters' defaults of the last spec submitted without parameters;
  // Submit runs on any thread.
  std::mutex defaults_mu;
  std::shared_ptr<const ir::PipelineSpec> defaults_spec;
  std::shared_ptr<const nlohmann::json> defaults;

  // Every entry point from the loop holds one; the outermost flushes.
  struct Scope {
    explicit Scope(Impl& i) : impl(i) { ++impl.depth; }
    ~Scope() {
      if (--impl.depth == 0) impl.Flush();
    }
    Impl& impl;
  };

  // ---- Container slots (here: every event reads them) ----

  uint64_t NewContainer() {
    uint32_t slot;
    if (!free_container_slots.empty()) {
      slot = free_container_slots.back();
      free_container_slots.pop_back();
    } else {
      slot = static_cast<uint32_t>(container_slots.size());
      container_slots.emplace_back();
      if (options.resolve_command_lines) container_launches.emplace_back();
    }
    detail::Container& c = container_slots[slot];
    ++c.generation;
    c.live = true;
    c.serial = next_container++;
    return ContainerId(slot, c);
  }

  static uint64_t ContainerId(uint32_t slot, const detail::Container& c) {
    return (static_cast<uint64_t>(c.generation) << 32) | slot;
  }
  static uint32_t SlotOf(uint64_t id) { return static_cast<uint32_t>(id & 0xffffffffu); }

  TaskLaunch& LaunchOf(uint64_t id) { return container_launches[SlotOf(id)]; }

  detail::Container* FindContainer(uint64_t id) {
    const uint32_t slot = SlotOf(id);
    if (slot >= container_slots.size()) return nullptr;
    detail::Container& c = container_slots[slot];
    return c.live && c.generation == static_cast<uint32_t>(id >> 32) ? &c : nullptr;
  }

  // `c` must be the live container `id` names. Its fields stay until the
  // slot is reused (each use sets what it reads; the launch was moved to
  // the executor): resetting them would touch every cache line of the slot.
  void FreeContainer(uint64_t id, detail::Container& c) {
    c.live = false;
    free_container_slots.push_back(SlotOf(id));
  }

  // ---- Records and states (run_records.cc) ----

  std::string NewId();
  std::string PodName(const detail::Run& run);
  void MarkDirty(detail::Run& run) {
    if (run.dirty) return;
    run.dirty = true;
    dirty_runs.push_back(&run);
  }
  // The strings must outlive the run: the spec's, or in run.names.
  int NewRecord(detail::Run& run, const std::string& name, const std::string& display, int parent,
                const std::string& executor_label);
  void SetState(detail::Run& run, int record, RuntimeState state,
                const std::string& error = detail::kNoError);
  void SetRunState(detail::Run& run, RuntimeState state,
                   const std::string& error = detail::kNoError);
  void Flush();
  bool DeferSnapshot(detail::Run& run);

  // ---- Runs (runs.cc) ----

  Result<std::shared_ptr<const nlohmann::json>> RunParameters(const RunRequest& req);
  void StartRun(RunRequest req, std::shared_ptr<const nlohmann::json> params);
  void MarkRunning(detail::Run& run);
  void FinishRun(detail::Run& run, RuntimeState state, const std::string& dag_error);
  void Terminate(const std::string& run_id);

  // ---- DAG instances and their tasks (dag_progress.cc) ----

  detail::DagExec& NewDag(detail::Run& run, detail::DagExec* parent, int parent_task, int iteration,
                          const ir::ComponentSpec& comp,
                          std::shared_ptr<const nlohmann::json> inputs,
                          detail::ArtifactMap artifacts, int record, std::filesystem::path dir);
  void StartDag(detail::DagExec& dag);
  void CheckDagDone(detail::DagExec& dag);
  void TryStart(detail::DagExec& dag, int i);
  void FinishTask(detail::DagExec& dag, int i, RuntimeState state,
                  const std::string& error = detail::kNoError);

  // ---- What KFP's driver does itself (driver_tasks.cc) ----

  void RunInDriver(detail::DagExec& dag, int i, const ir::ExecutorSpec& exec);
  Status Import(detail::DagExec& dag, int i, const ir::ImporterSpec& importer);
  Status CreatePvc(detail::DagExec& dag, int i);
  Status DeletePvc(detail::DagExec& dag, int i);
  std::filesystem::path PvcDir(const std::string& name) const;

  // ---- ParallelFor (parallel_for.cc) ----

  void StartLoop(detail::DagExec& dag, int i);
  void FillLoop(detail::DagExec& dag, int i);
  void OnIterationDone(detail::DagExec& dag, int i);
  void MaybeFinishLoop(detail::DagExec& dag, int i);

  // ---- What a container is launched with (container_launch.cc) ----

  Status StartContainer(detail::DagExec& dag, int i);
  Status ResolveLaunch(detail::DagExec& dag, int i, const ir::ExecutorSpec& exec,
                       TaskLaunch& launch);
  static TaskLaunch TimingLaunch(const detail::Container& c, uint32_t launches_before);

  // ---- Attempts: placement queue, launch, result, retry (launch_queue.cc) ----

  Status Place(detail::DagExec& dag, int i, const ir::ExecutorSpec& executor_spec,
               TaskLaunch&& launch);
  uint64_t NewAttempt(detail::DagExec& dag, int i, detail::Container::Where where,
                      const Demand& demand, const Resources& resources);
  void Enqueue(detail::DagExec& dag, int i, TaskLaunch&& launch, const Demand& demand);
  void SchedulePending();
  void Launch(uint64_t id, detail::Container& c, size_t node);
  void OnDone(uint64_t id, const TaskResult& result);
  void ScheduleRetry(detail::DagExec& dag, int i, const Demand& demand, const std::string& error);
  // Completes a succeeded container task at the controller's next look
  // (EngineOptions::requeue_time).
  void NoticeLater(detail::DagExec& dag, int i, WallTime started);
  // Set while NoticeLater completes a task: the containers that completion
  // queues became ready when the step ended, not when it was noticed.
  WallTime ready_since{};
  void OnRetryTimer(uint64_t id);

  // ---- Tasks that do not run (task_reuse.cc) ----

  bool ReuseCachedExecution(detail::DagExec& dag, int i, const ir::ExecutorSpec& exec);
  void RecordInCache(const detail::Run& run, const detail::TaskExec& task);
  void Keep(detail::DagExec& dag, int i, const TaskRecord& kept);
};

}  // namespace kfpbench::engine
