// The pipeline engine. Everything below Submit/Terminate runs inside EventLoop
// callbacks, one at a time, so the state needs no locks; time comes only from
// loop.Now() and delays only from loop.After, so the same code runs on the
// simulator's virtual clock.
//
// A run is a tree of DAG instances (root, sub-pipelines, conditions, one per
// ParallelFor iteration). Each DAG instance starts a task once all its
// upstream tasks are done; container tasks queue for a node with room
// (Placement) and are handed to the Executor; DAG tasks start a child DAG
// instance. A DAG instance is done when none of its tasks is in flight.
#include "engine/engine.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <mutex>
#include <random>
#include <system_error>
#include <unordered_map>
#include <unordered_set>

#include <fmt/format.h>

#include "engine/placement.h"
#include "engine/run_parameters.h"
#include "engine/run_state.h"
#include "engine/stable_vector.h"
#include "engine/task_inputs.h"
#include "ir/artifact_uri.h"
#include "ir/cel.h"
#include "ir/placeholders.h"
#include "ir/values.h"

namespace kfpbench::engine {

using namespace detail;  // NOLINT: the run state types are this file's vocabulary

namespace {

using nlohmann::json;

std::string SanitizeName(std::string_view name, size_t max_len) {
  std::string out;
  for (char c : name) {
    if (out.size() >= max_len) break;
    char l = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    out += (std::isalnum(static_cast<unsigned char>(l)) != 0) ? l : '-';
  }
  while (!out.empty() && out.back() == '-') out.pop_back();
  return out.empty() ? "pipeline" : out;
}

// The label of records that have none (DAGs); TaskState points at it.
const std::string kNoLabel;
// The default error of state changes: a "" default argument would build a
// string on every call.
const std::string kNoError;

bool IsFailure(RuntimeState s) {
  return s == RuntimeState::kFailed || s == RuntimeState::kCanceled;
}

json ArtifactJson(const ir::ArtifactValue& a) {
  return {{"name", a.name},
          {"uri", a.uri},
          {"path", a.path},
          {"schema_title", a.schema_title},
          {"schema_version", a.schema_version},
          {"metadata", a.metadata}};
}

ArtifactMap ArtifactsFromJson(const json& artifacts) {
  ArtifactMap out;
  if (!artifacts.is_object()) return out;
  for (const auto& [name, list] : artifacts.items()) {
    auto& values = out[name];
    if (!list.is_array()) continue;
    for (const auto& a : list) {
      if (!a.is_object()) continue;
      values.push_back({a.value("name", name), a.value("uri", ""), a.value("path", ""),
                        a.value("schema_title", ""), a.value("schema_version", ""),
                        a.value("metadata", json::object())});
    }
  }
  return out;
}

Resources ToResources(const ir::ResourceSpec& r) {
  return Resources{r.cpu_request, r.cpu_limit, r.memory_request, r.memory_limit};
}

}  // namespace

struct Engine::Impl {
  Impl(EventLoop& l, Executor& e, RunObserver& o, EngineOptions opts)
      : loop(l),
        executor(e),
        observer(o),
        options(std::move(opts)),
        placement(options.nodes.empty() && options.node_shapes.empty() ? DefaultNodes()
                                                                       : options.nodes),
        rng(options.random_seed != 0 ? options.random_seed : std::random_device{}()) {
    for (const auto& shape : options.node_shapes) placement.AllowShape(shape);
    if (!options.work_root.empty()) {
      artifact_roots.object_store = options.work_root / "objects";
      artifact_roots.local.push_back(options.work_root);
    }
    for (const auto& root : options.import_roots) artifact_roots.local.push_back(root);
  }

  EventLoop& loop;
  Executor& executor;
  RunObserver& observer;
  EngineOptions options;
  ir::ArtifactRoots artifact_roots;  // what importers' URIs may name
  Placement placement;
  std::mt19937_64 rng;
  // Runs in the map's nodes themselves (which never move): one allocation
  // a run, not two.
  std::unordered_map<std::string, Run> runs;
  // Container attempts live in slots reused through a free list: a warm
  // engine allocates nothing per attempt and reuses the slot freed last,
  // still in cache. An id is the slot and its generation, so an id whose
  // attempt is gone (a late completion, a stale timer) finds nothing.
  // Slots never move as more are made: attempts are referred to by address.
  StableVector<Container> container_slots;
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
  decltype(Run::plans) last_plans;
  std::string last_resource_prefix;  // SanitizeName(last_spec->name) + "-"
  std::vector<Run*> dirty_runs;
  std::vector<Run*> spare_dirty_runs;            // Flush's
  std::vector<Placement::Placed> placed_buffer;  // SchedulePending's
  // RunParameters' defaults of the last spec submitted without parameters;
  // Submit runs on any thread.
  std::mutex defaults_mu;
  std::shared_ptr<const ir::PipelineSpec> defaults_spec;
  std::shared_ptr<const json> defaults;

  // Every entry point from the loop holds one; the outermost flushes.
  struct Scope {
    explicit Scope(Impl& i) : impl(i) { ++impl.depth; }
    ~Scope() {
      if (--impl.depth == 0) impl.Flush();
    }
    Impl& impl;
  };

  // ---- Container slots ----

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
    Container& c = container_slots[slot];
    ++c.generation;
    c.live = true;
    c.serial = next_container++;
    return ContainerId(slot, c);
  }

  static uint64_t ContainerId(uint32_t slot, const Container& c) {
    return (static_cast<uint64_t>(c.generation) << 32) | slot;
  }
  static uint32_t SlotOf(uint64_t id) { return static_cast<uint32_t>(id & 0xffffffffu); }

  TaskLaunch& LaunchOf(uint64_t id) { return container_launches[SlotOf(id)]; }

  Container* FindContainer(uint64_t id) {
    const uint32_t slot = SlotOf(id);
    if (slot >= container_slots.size()) return nullptr;
    Container& c = container_slots[slot];
    return c.live && c.generation == static_cast<uint32_t>(id >> 32) ? &c : nullptr;
  }

  // `c` must be the live container `id` names. Its fields stay until the
  // slot is reused (each use sets what it reads; the launch was moved to
  // the executor): resetting them would touch every cache line of the slot.
  void FreeContainer(uint64_t id, Container& c) {
    c.live = false;
    free_container_slots.push_back(SlotOf(id));
  }

  // ---- Records and states ----

  std::string NewId() {
    uint64_t a = rng(), b = rng();
    a = (a & 0xffffffffffff0fffULL) | 0x0000000000004000ULL;  // version 4
    b = (b & 0x3fffffffffffffffULL) | 0x8000000000000000ULL;  // RFC 4122 variant
    // 8-4-4-4-12 lower-case hex digits of a then b (fmt would cost more than
    // the rest of a simulated task).
    static constexpr char kHex[] = "0123456789abcdef";
    std::string id(36, '-');
    size_t pos = 0;
    for (int shift = 60; shift >= 0; shift -= 4) {
      if (pos == 8 || pos == 13) ++pos;
      id[pos++] = kHex[(a >> shift) & 0xf];
    }
    for (int shift = 60; shift >= 0; shift -= 4) {
      if (pos == 18 || pos == 23) ++pos;
      id[pos++] = kHex[(b >> shift) & 0xf];
    }
    return id;
  }

  std::string PodName(const Run& run) {
    return fmt::format("{}-system-container-impl-{}", run.resource_name,
                       1000000000 + rng() % 9000000000ULL);
  }

  void MarkDirty(Run& run) {
    if (run.dirty) return;
    run.dirty = true;
    dirty_runs.push_back(&run);
  }

  // The strings must outlive the run: the spec's, or in run.names.
  int NewRecord(Run& run, const std::string& name, const std::string& display, int parent,
                const std::string& executor_label) {
    TaskState& rec = run.records.emplace_back();
    rec.name = &name;
    rec.display_name = &display;
    rec.executor_label = &executor_label;
    rec.create_time = loop.Now();
    rec.parent = parent;
    if (options.task_details) {
      // Built where it stays: a TaskRecord is ~500 bytes of strings to move.
      TaskRecord& d = run.details.emplace_back();
      d.task_id = NewId();
      d.name = name;
      d.display_name = display;
      d.executor_label = executor_label;
      d.history.push_back({rec.create_time, RuntimeState::kPending, {}});
      d.inputs = json::object();
      d.outputs = json::object();
      if (parent >= 0) {
        TaskRecord& parent_details = run.details[parent];
        d.parent_task_id = parent_details.task_id;
        parent_details.child_task_ids.push_back(d.task_id);
      }
    } else {
      rec.short_id = next_short_id++;
    }
    MarkDirty(run);
    return static_cast<int>(run.records.size()) - 1;
  }

  void SetState(Run& run, int record, RuntimeState state, const std::string& error = kNoError) {
    TaskState& rec = run.records[record];
    WallTime now = loop.Now();
    rec.state = state;
    if (state == RuntimeState::kRunning && rec.start_time == WallTime{}) rec.start_time = now;
    if (IsTerminal(state)) rec.end_time = now;
    if (options.task_details) {
      TaskRecord& d = run.details[record];
      d.history.push_back({now, state, error});
      if (IsTerminal(state) && !error.empty()) d.error = error;
    }
    MarkDirty(run);
  }

  void SetRunState(Run& run, RuntimeState state, const std::string& error = kNoError) {
    if (run.state == state) return;
    WallTime now = loop.Now();
    run.state = state;
    run.history.push_back({now, state, error});
    if (IsTerminal(state)) run.finished_at = now;
    MarkDirty(run);
  }

  void Flush() {
    // Observers may call Submit/Terminate; those only Post, so this loop is safe.
    // The two vectors trade places, keeping their capacity: a moved-from
    // vector would allocate again on the next change, once per event.
    std::vector<Run*> pending = std::move(dirty_runs);
    dirty_runs = std::move(spare_dirty_runs);
    dirty_runs.clear();
    for (Run* run : pending) {
      run->dirty = false;
      // Light snapshots carry nothing of tasks, so one whose run state is
      // unchanged would tell the observer nothing new.
      if (options.light_snapshots && run->snapshot_sent && !run->finished &&
          run->state == run->snapshot_state) {
        continue;
      }
      if (DeferSnapshot(*run)) continue;
      run->snapshot_sent = true;
      run->snapshot_state = run->state;
      run->snapshot_time = loop.Now();
      // What a snapshot costs matters only to DeferSnapshot, which light
      // snapshots skip: reading the clock twice per change is not free.
      const bool timed = !options.light_snapshots;
      auto cost_from =
          timed ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point{};
      RunSnapshot snap;
      snap.run_id = run->id;
      snap.state = run->state;
      snap.finished_at = run->finished_at;
      snap.error = run->error;
      snap.created_at = run->created_at;
      if (run->finished && options.light_snapshots) {
        snap.history = std::move(run->history);
        snap.task_states = run->records;  // the run is erased only below
      } else if (run->finished) {
        // The run is erased just below, so its records can move, not copy.
        snap.history = std::move(run->history);
        snap.tasks = TaskRecords(*run, /*take=*/true);
      } else if (!options.light_snapshots) {
        snap.history = run->history;
        snap.tasks = TaskRecords(*run, /*take=*/false);
      }
      observer.OnRunChanged(snap);
      if (timed) run->snapshot_cost = std::chrono::steady_clock::now() - cost_from;
    }
    for (Run* run : pending) {
      // Found, then erased by position: erasing by run->id would compare
      // against a key that dies with the run.
      if (run->finished) runs.erase(runs.find(run->id));
    }
    pending.clear();
    spare_dirty_runs = std::move(pending);
  }

  // A large run whose own state is unchanged waits for its next snapshot
  // slot; one timer per run brings it then (see large_run_records).
  bool DeferSnapshot(Run& run) {
    if (run.finished || options.light_snapshots || run.records.size() < options.large_run_records ||
        run.state != run.snapshot_state) {
      return false;
    }
    WallTime due = run.snapshot_time +
                   std::max<Duration>(options.large_run_snapshot_interval, 4 * run.snapshot_cost);
    WallTime now = loop.Now();
    if (now >= due) return false;
    if (!run.snapshot_scheduled) {
      run.snapshot_scheduled = true;
      loop.After(due - now, [this, id = run.id] {
        auto it = runs.find(id);
        if (it == runs.end()) return;  // finished meanwhile, and snapshotted then
        Scope scope(*this);
        it->second.snapshot_scheduled = false;
        MarkDirty(it->second);
      });
    }
    return true;
  }

  // ---- Runs ----

  // ResolveRunParameters, on the caller's thread. Runs of one spec that give
  // no parameters all get its defaults: resolved once and shared, read-only,
  // by every such run's root DAG (a simulation submits one spec many times).
  Result<std::shared_ptr<const json>> RunParameters(const RunRequest& req) {
    const bool none_given = req.parameters.is_null() || req.parameters.empty();
    if (none_given) {
      std::lock_guard lock(defaults_mu);
      if (defaults_spec == req.spec) return defaults;
    }
    auto params = ResolveRunParameters(*req.spec, req.parameters);
    if (!params.ok()) return params.error();
    auto shared = std::make_shared<const json>(std::move(*params));
    if (none_given) {
      std::lock_guard lock(defaults_mu);
      defaults_spec = req.spec;
      defaults = shared;
    }
    return shared;
  }

  void StartRun(RunRequest req, std::shared_ptr<const json> params) {
    Scope scope(*this);
    auto [slot, inserted] = runs.try_emplace(req.run_id);
    if (!inserted) return;  // a duplicate id; the first run wins
    Run& run = slot->second;
    run.id = std::move(req.run_id);
    run.spec = std::move(req.spec);
    if (run.spec != last_spec || !last_plans) {
      last_spec = run.spec;
      last_plans = std::make_shared<decltype(last_plans)::element_type>();
      last_resource_prefix = SanitizeName(run.spec->name, 40) + "-";
    }
    run.plans = last_plans;
    run.pipeline_root = std::move(req.pipeline_root);
    run.keep = std::move(req.keep);
    run.retry = !run.keep.empty();
    run.display_name = std::move(req.display_name);
    run.workspace_is_local = !options.work_root.empty();
    run.workspace_path = run.workspace_is_local
                             ? (options.work_root / run.id / "workspace").string()
                             : std::string("/kfp-workspace");
    run.created_at = req.created_at;
    run.scheduled_at = req.scheduled_at;
    static constexpr char kAlnum[] = "abcdefghijklmnopqrstuvwxyz0123456789";
    run.resource_name = last_resource_prefix;
    for (int i = 0; i < 5; ++i) run.resource_name += kAlnum[rng() % 36];
    // Pending, running, and its end (or canceling, canceled): growing the
    // vector would allocate three times per run.
    run.history.reserve(4);
    run.history.push_back({loop.Now(), RuntimeState::kPending, {}});
    // One record per root task and the root: growing the vector would move
    // every record several times per run.
    if (run.spec->root.dag) {
      run.records.reserve(1 + run.spec->root.dag->tasks.size());
      if (options.task_details) run.details.reserve(run.records.capacity());
    }
    MarkDirty(run);
    const std::string& display =
        run.spec->display_name.empty() ? run.spec->name : run.spec->display_name;
    int root_record = NewRecord(run, run.spec->name, display, -1, kNoLabel);
    if (options.task_details) run.details[root_record].inputs = {{"parameters", *params}};
    DagExec& root =
        NewDag(run, nullptr, -1, -1, run.spec->root, std::move(params), {}, root_record, {});
    StartDag(root);
  }

  void MarkRunning(Run& run) {
    if (run.state != RuntimeState::kPending) return;
    SetRunState(run, RuntimeState::kRunning);
    SetState(run, 0, RuntimeState::kRunning);
  }

  void FinishRun(Run& run, RuntimeState state, const std::string& dag_error) {
    if (run.finished) return;
    run.finished = true;
    if (state == RuntimeState::kFailed && run.error.empty()) run.error = dag_error;
    if (state != RuntimeState::kFailed && state != RuntimeState::kCanceled) run.error.clear();
    if (state == RuntimeState::kCanceled && run.error.empty()) run.error = "run canceled";
    DagExec& root = run.dags.front();
    if (options.task_details) run.details[0].outputs = {{"parameters", ObjectOr(root.outputs)}};
    SetState(run, 0, state, run.error);
    SetRunState(run, state, run.error);
  }

  void Terminate(const std::string& run_id) {
    Scope scope(*this);
    auto it = runs.find(run_id);
    if (it == runs.end() || it->second.finished) {
      observer.OnTerminateNotExecuting(run_id);
      return;
    }
    Run& run = it->second;
    if (run.canceled) return;
    run.canceled = true;
    run.stopping = true;
    SetRunState(run, RuntimeState::kCanceling);
    // The run's attempts, found by a scan of every slot: cancelling is rare,
    // where a list per run would cost every attempt a write and an erase in
    // the run's (cold) state. In creation order, so that cancellations happen
    // in a deterministic order.
    std::vector<std::pair<uint64_t, uint64_t>> order;  // serial, id
    for (uint32_t slot = 0; slot < container_slots.size(); ++slot) {
      const Container& c = container_slots[slot];
      if (c.live && c.run == &run) order.emplace_back(c.serial, ContainerId(slot, c));
    }
    std::sort(order.begin(), order.end());
    for (const auto& [serial, id] : order) {
      Container* c = FindContainer(id);
      if (c == nullptr) continue;
      if (c->where == Container::Where::kRunning) {
        executor.Cancel(TaskId(run, c->record));
        continue;  // its result arrives later and ends it CANCELED
      }
      if (c->where == Container::Where::kQueued) placement.Remove(id);
      if (c->where == Container::Where::kBackoff) loop.Cancel(c->timer);
      DagExec& dag = *c->dag;
      int task = c->task;
      FreeContainer(id, *c);
      FinishTask(dag, task, RuntimeState::kCanceled, "canceled");
    }
  }

  // ---- DAG instances ----

  DagExec& NewDag(Run& run, DagExec* parent, int parent_task, int iteration,
                  const ir::ComponentSpec& comp, std::shared_ptr<const json> inputs,
                  ArtifactMap artifacts, int record, std::filesystem::path dir) {
    DagExec* dag = &run.dags.emplace_back();
    dag->run = &run;
    dag->parent = parent;
    dag->parent_task = parent_task;
    dag->iteration = iteration;
    dag->component = &comp;
    dag->plan = &detail::PlanFor(run, comp);
    dag->inputs = std::move(inputs);
    dag->in_artifacts = std::move(artifacts);
    dag->record = record;
    dag->dir = std::move(dir);
    dag->tasks.resize(dag->plan->tasks.size());
    // Each task that starts becomes a child of the DAG's record.
    if (record >= 0 && options.task_details) {
      run.details[record].child_task_ids.reserve(dag->tasks.size());
    }
    for (size_t i = 0; i < dag->tasks.size(); ++i) {
      dag->tasks[i].unfinished_upstream = static_cast<int>(dag->plan->upstream[i].size());
    }
    return *dag;
  }

  void StartDag(DagExec& dag) {
    ++dag.busy;
    for (size_t i = 0; i < dag.tasks.size(); ++i) {
      if (dag.tasks[i].unfinished_upstream == 0) TryStart(dag, static_cast<int>(i));
    }
    --dag.busy;
    CheckDagDone(dag);
  }

  void CheckDagDone(DagExec& dag) {
    if (dag.finished || dag.busy > 0 || dag.active > 0) return;
    dag.finished = true;
    Run& run = *dag.run;
    std::string failed_error, not_run;
    bool any_canceled = false;
    for (size_t i = 0; i < dag.tasks.size(); ++i) {
      const TaskExec& t = dag.tasks[i];
      if (t.phase != Phase::kDone) {
        if (not_run.empty()) not_run = dag.plan->tasks[i]->name;
      } else if (t.state == RuntimeState::kFailed && failed_error.empty()) {
        failed_error = fmt::format("task '{}' failed: {}", dag.plan->tasks[i]->name, t.error());
      } else if (t.state == RuntimeState::kCanceled) {
        any_canceled = true;
      }
    }
    if (!failed_error.empty()) {
      dag.state = RuntimeState::kFailed;
      dag.error = failed_error;
    } else if (run.canceled && (any_canceled || !not_run.empty())) {
      dag.state = RuntimeState::kCanceled;
      dag.error = "canceled";
    } else if (!not_run.empty()) {
      dag.state = RuntimeState::kFailed;
      dag.error = fmt::format("task '{}' did not run because the run failed", not_run);
    } else {
      dag.state = RuntimeState::kSucceeded;
    }
    for (const auto& [name, sources] : dag.component->dag->output_parameters) {
      for (const auto& src : sources) {
        const TaskExec& p = dag.tasks[dag.plan->index.at(src.producer_task)];
        if (auto it = p.outputs().find(src.output_key); it != p.outputs().end()) {
          dag.outputs[name] = *it;
          break;
        }
      }
    }
    for (const auto& [name, sources] : dag.component->dag->output_artifacts) {
      for (const auto& src : sources) {
        const TaskExec& p = dag.tasks[dag.plan->index.at(src.producer_task)];
        if (auto it = p.out_artifacts().find(src.output_key); it != p.out_artifacts().end()) {
          dag.out_artifacts[name] = it->second;
          break;
        }
      }
    }
    if (dag.parent == nullptr) {
      FinishRun(run, dag.state, dag.error);
    } else if (dag.iteration >= 0) {
      if (options.task_details)
        run.details[dag.record].outputs = {{"parameters", ObjectOr(dag.outputs)}};
      SetState(run, dag.record, dag.state, dag.error);
      OnIterationDone(*dag.parent, dag.parent_task);
    } else {
      TaskExec& owner = dag.parent->tasks[dag.parent_task];
      if (!dag.outputs.is_null()) owner.Outputs() = dag.outputs;  // else it holds none
      if (!dag.out_artifacts.empty()) owner.Rare().out_artifacts = dag.out_artifacts;
      FinishTask(*dag.parent, dag.parent_task, dag.state, dag.error);
    }
  }

  // ---- Tasks ----

  void TryStart(DagExec& dag, int i) {
    TaskExec& task = dag.tasks[i];
    Run& run = *dag.run;
    if (task.phase != Phase::kWaiting || run.canceled) return;
    const ir::TaskSpec& spec = *dag.plan->tasks[i];
    const ir::ComponentSpec& comp = *dag.plan->components[i];
    bool upstream_failed = false;
    for (int u : dag.plan->upstream[i]) {
      upstream_failed = upstream_failed || IsFailure(dag.tasks[u].state);
    }
    // Exit handlers run whatever happened upstream; everything else stops
    // once anything failed (Argo's failFast).
    if (!spec.run_when_upstream_done && (upstream_failed || run.stopping)) return;

    task.phase = Phase::kActive;
    ++dag.active;
    task.record = NewRecord(run, spec.name, spec.display_name, dag.record, comp.executor_label);
    // The key, where it is shown (details) or looked up (a retry's kept
    // tasks): the same text as (dag.dir / spec.name).generic_string(),
    // without building and splitting a path per task.
    if (options.task_details || run.retry) {
      std::string key = dag.dir.empty() ? spec.name : dag.dir.generic_string() + '/' + spec.name;
      // Exit handlers run again: they report on the attempt that is running.
      auto kept =
          !comp.is_dag() && !spec.run_when_upstream_done ? run.keep.find(key) : run.keep.end();
      if (options.task_details) run.details[task.record].key = std::move(key);
      if (kept != run.keep.end()) return Keep(dag, i, kept->second);
    }
    bool skipped = false;
    if (auto s = detail::ResolveTaskInputs(dag, i, skipped); !s) {
      return FinishTask(dag, i, RuntimeState::kFailed, s.error().message);
    }
    if (options.task_details)
      run.details[task.record].inputs = {{"parameters", ObjectOr(task.params())}};
    if (skipped) {
      return FinishTask(dag, i, RuntimeState::kSkipped, "an input's producer did not run");
    }
    if (!spec.condition.empty()) {
      std::optional<bool> go;
      if (options.decide_condition) go = options.decide_condition(spec.name);
      if (!go) {
        auto eval = ir::EvalCondition(dag.plan->conditions[i], ObjectOr(task.params()));
        if (!eval.ok()) {
          return FinishTask(dag, i, RuntimeState::kFailed,
                            "triggerPolicy.condition: " + eval.error().message);
        }
        go = *eval;
      }
      if (!*go) return FinishTask(dag, i, RuntimeState::kSkipped);
    }
    if (comp.is_dag()) {
      if (spec.iterator) return StartLoop(dag, i);
      SetState(run, task.record, RuntimeState::kRunning);
      DagExec& child =
          NewDag(run, &dag, i, -1, comp, std::make_shared<const json>(ObjectOr(task.params())),
                 task.in_artifacts(), task.record, dag.dir / spec.name);
      return StartDag(child);
    }
    if (dag.plan->runs_in_driver[i]) return RunInDriver(dag, i, *dag.plan->executors[i]);
    if (auto s = StartContainer(dag, i); !s) {
      FinishTask(dag, i, RuntimeState::kFailed, s.error().message);
    }
  }

  // ---- Tasks KFP's driver or launcher does itself, without a pod of
  // their own: importers, and kfp-kubernetes' CreatePVC/DeletePVC. They take
  // no node and no time. ----

  void RunInDriver(DagExec& dag, int i, const ir::ExecutorSpec& exec) {
    SetState(*dag.run, dag.tasks[i].record, RuntimeState::kRunning);
    Status s = exec.importer          ? Import(dag, i, *exec.importer)
               : exec.is_create_pvc() ? CreatePvc(dag, i)
                                      : DeletePvc(dag, i);
    if (!s.ok()) return FinishTask(dag, i, RuntimeState::kFailed, s.error().message);
    FinishTask(dag, i, RuntimeState::kSucceeded);
  }

  // importer_launcher.go: the URI is a constant or the parent DAG's value of
  // the input the runtimeParameter names; the metadata is kept as written.
  Status Import(DagExec& dag, int i, const ir::ImporterSpec& importer) {
    TaskExec& task = dag.tasks[i];
    const ir::TaskSpec& spec = *dag.plan->tasks[i];
    const ir::ComponentSpec& comp = *dag.plan->components[i];
    auto failed = [](const std::string& why) {
      return Error{
          "failed to execute importer component: failed to create MLMD artifact from "
          "ImporterSpec: " +
          why};
    };
    std::string uri = importer.uri_constant;
    if (const std::string& param = importer.uri_runtime_parameter; !param.empty()) {
      auto binding = spec.parameters.find(param);
      if (binding == spec.parameters.end()) {
        return failed(
            fmt::format("cannot find parameter {} in task input to fetch artifact uri", param));
      }
      const std::string& input = binding->second.component_input;
      const json& inputs = dag.Inputs();
      auto value = inputs.find(input);
      if (binding->second.kind != ir::ParameterBinding::Kind::kComponentInput ||
          value == inputs.end()) {
        return failed(fmt::format(
            "error resolving artifact URI: parent DAG does not have input parameter {}", input));
      }
      uri = value->is_string() ? value->get<std::string>() : std::string();
      if (uri.empty()) {
        return failed(fmt::format("empty artifact URI runtime value for parameter {}", param));
      }
    } else if (uri.empty()) {
      return failed("empty Artifact URI constant value");
    }
    if (comp.outputs.artifacts.size() != 1) {
      return Error{
          "failed to execute importer component: failed to extract output artifact name "
          "from componentOutputSpec"};
    }
    const auto& [name, def] = *comp.outputs.artifacts.begin();
    ArtifactMap& out = task.Rare().out_artifacts;
    out.clear();
    auto path = ir::LocalPathForUri(uri, artifact_roots);
    if (!path.ok()) return failed(path.error().message);
    out[name] = {{name, uri, std::move(*path),
                  importer.schema_title.empty() ? def.schema_title : importer.schema_title,
                  importer.schema_title.empty() ? def.schema_version : importer.schema_version,
                  importer.metadata}};
    return Ok();
  }

  // k8s.go createPVC: the name is pvc_name, a UUID + pvc_name_suffix, or a
  // UUID; access_modes and size are required. Locally a PVC is a folder.
  Status CreatePvc(DagExec& dag, int i) {
    TaskExec& task = dag.tasks[i];
    auto text = [&task](const char* key) {
      auto it = task.params().find(key);
      return it != task.params().end() && it->is_string() ? it->get<std::string>() : std::string();
    };
    if (!task.params().contains("access_modes") || task.params()["access_modes"].is_null()) {
      return Error{"failed to create pvc: parameter access_modes not provided"};
    }
    if (!task.params().contains("size") || task.params()["size"].is_null()) {
      return Error{"failed to create pvc: parameter volumeSize not provided"};
    }
    std::string name = text("pvc_name");
    std::string suffix = text("pvc_name_suffix");
    if (!name.empty() && !suffix.empty()) {
      return Error{
          "failed to create pvc: at most one of pvc_name and pvc_name_suffix can be "
          "non-empty"};
    }
    if (name.empty()) name = NewId() + suffix;
    if (Status s = CheckPvcName(name); !s.ok()) return s;
    if (!options.work_root.empty()) {
      std::error_code ec;
      std::filesystem::create_directories(PvcDir(name), ec);
      if (ec) return Error{fmt::format("failed to create pvc {}: {}", name, ec.message())};
    }
    task.Outputs() = {{"name", name}};
    return Ok();
  }

  // k8s.go deletePVC: deletes the claim pvc_name names.
  Status DeletePvc(DagExec& dag, int i) {
    TaskExec& task = dag.tasks[i];
    auto it = task.params().find("pvc_name");
    if (it == task.params().end() || !it->is_string() || it->get<std::string>().empty()) {
      return Error{"failed to delete pvc: parameter pvc_name not provided"};
    }
    const std::string name = it->get<std::string>();
    if (Status s = CheckPvcName(name); !s.ok()) return s;
    if (!options.work_root.empty()) {
      std::error_code ec;
      if (std::filesystem::remove_all(PvcDir(name), ec) == 0 || ec) {
        return Error{
            fmt::format("failed to delete pvc: persistentvolumeclaims \"{}\" not found", name)};
      }
    }
    return Ok();
  }

  // A claim's name is a Kubernetes object name (a DNS-1123 subdomain), as
  // the API server would insist; it is also a folder name here, so nothing
  // else (a '/', "..") may reach the filesystem.
  static Status CheckPvcName(const std::string& name) {
    auto alnum = [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); };
    bool ok = !name.empty() && name.size() <= 253 && alnum(name.front()) && alnum(name.back());
    for (char c : name) ok = ok && (alnum(c) || c == '-' || c == '.');
    if (ok) return Ok();
    return Error{fmt::format(
        "PersistentVolumeClaim \"{}\" is invalid: metadata.name: a lowercase RFC 1123 "
        "subdomain must consist of lower case alphanumeric characters, '-' or '.', and must "
        "start and end with an alphanumeric character",
        name)};
  }

  std::filesystem::path PvcDir(const std::string& name) const {
    return options.work_root / "pvcs" / name;
  }

  void FinishTask(DagExec& dag, int i, RuntimeState state, const std::string& error = kNoError) {
    TaskExec& task = dag.tasks[i];
    if (task.phase == Phase::kDone) return;
    Run& run = *dag.run;
    if (task.phase == Phase::kActive) --dag.active;
    task.phase = Phase::kDone;
    task.state = state;
    if (!error.empty()) {
      task.Rare().error = error;
    } else if (task.rare) {
      task.rare->error.clear();
    }
    if (task.rare) task.rare->retry_launch.reset();
    if (task.record >= 0 && options.task_details) {
      TaskRecord& rec = run.details[task.record];
      json outputs = {{"parameters", ObjectOr(task.outputs())}};
      if (!task.out_artifacts().empty()) {
        json arts = json::object();
        for (const auto& [name, list] : task.out_artifacts()) {
          for (const auto& a : list) arts[name].push_back(ArtifactJson(a));
        }
        outputs["artifacts"] = std::move(arts);
      }
      rec.outputs = std::move(outputs);
    }
    if (task.record >= 0) SetState(run, task.record, state, error);
    if (state == RuntimeState::kFailed && !run.stopping) {
      run.stopping = true;
      if (run.error.empty()) {
        run.error = fmt::format("task '{}' failed: {}", dag.plan->tasks[i]->name, error);
      }
    }
    ++dag.busy;
    for (int d : dag.plan->downstream[i]) {
      if (--dag.tasks[d].unfinished_upstream == 0) TryStart(dag, d);
    }
    --dag.busy;
    CheckDagDone(dag);
  }

  // A task kept from the failed attempt a retry started from: it ends as it
  // ended then, with the same id, pod, times and outputs, and does not run.
  void Keep(DagExec& dag, int i, const TaskRecord& kept) {
    TaskExec& task = dag.tasks[i];
    Run& run = *dag.run;
    const int index = task.record;
    task.Outputs() = ObjectOr(kept.outputs).value("parameters", json::object());
    ArtifactMap artifacts =
        ArtifactsFromJson(ObjectOr(kept.outputs).value("artifacts", json::object()));
    if (!artifacts.empty() || task.rare) task.Rare().out_artifacts = std::move(artifacts);
    task.cached = kept.state == RuntimeState::kSkipped;
    if (task.rare) task.rare->fingerprint.clear();
    FinishTask(dag, i, kept.state, kept.error);
    TaskState& rec = run.records[index];
    rec.state = kept.state;
    rec.create_time = kept.create_time;
    rec.start_time = kept.start_time;
    rec.end_time = kept.end_time;
    rec.scheduling_delay = kept.scheduling_delay;
    if (options.task_details) {
      TaskRecord& d = run.details[index];
      const std::string fresh_id = d.task_id;
      const std::string parent_id = d.parent_task_id;
      const std::string key = d.key;
      d = kept;
      d.parent_task_id = parent_id;
      d.key = key;
      d.child_task_ids.clear();
      for (auto& r : run.details) {
        if (r.task_id != parent_id) continue;
        for (auto& child : r.child_task_ids) {
          if (child == fresh_id) child = kept.task_id;
        }
      }
    }
    MarkDirty(run);
  }

  // ---- ParallelFor ----

  void StartLoop(DagExec& dag, int i) {
    TaskExec& task = dag.tasks[i];
    LoopState& loop = task.Rare().loop;
    Run& run = *dag.run;
    const ir::IteratorSpec& it = *dag.plan->tasks[i]->iterator;
    if (it.over_artifacts()) {
      // The items are the list's indices; FillLoop hands each iteration its
      // artifact.
      loop.items = json::array();
      auto list = task.in_artifacts().find(it.input_artifact);
      size_t n = list == task.in_artifacts().end() ? 0 : list->second.size();
      for (size_t k = 0; k < n; ++k) loop.items.push_back(k);
    } else if (it.raw) {
      loop.items = it.raw_items;
    } else {
      json items = ObjectOr(task.params()).value(it.input_parameter, json());
      if (items.is_string()) {
        json parsed = json::parse(items.get<std::string>(), nullptr, false);
        if (!parsed.is_discarded()) items = std::move(parsed);
      }
      loop.items = std::move(items);
    }
    if (!loop.items.is_array()) {
      return FinishTask(dag, i, RuntimeState::kFailed,
                        "ParallelFor items must be a list, got " + ir::DescribeValue(loop.items));
    }
    if (loop.items.size() > ir::kMaxLoopItems) {
      return FinishTask(dag, i, RuntimeState::kFailed,
                        fmt::format("ParallelFor over {} items: at most {} are allowed",
                                    loop.items.size(), ir::kMaxLoopItems));
    }
    // Each iteration adds its own record and its body's tasks.
    const ir::ComponentSpec& body = *dag.plan->components[i];
    size_t adds = loop.items.size() * (1 + (body.is_dag() ? body.dag->tasks.size() : 0));
    if (run.records.size() + adds > ir::kMaxRunTasks) {
      return FinishTask(dag, i, RuntimeState::kFailed,
                        fmt::format("ParallelFor over {} items would take the run past {} tasks",
                                    loop.items.size(), ir::kMaxRunTasks));
    }
    loop.iterations.assign(loop.items.size(), nullptr);
    // Each iteration's inputs are the loop's, less the list being iterated
    // when no task of the body reads it: copying a 10,000-item list into
    // every iteration would make a wide loop quadratic in time and memory.
    loop.iteration_inputs = ObjectOr(task.params());
    if (!it.raw && !it.over_artifacts() && !BodyReadsInput(body, it.input_parameter)) {
      loop.iteration_inputs.erase(it.input_parameter);
    }
    SetState(run, task.record, RuntimeState::kRunning);
    FillLoop(dag, i);
  }

  void FillLoop(DagExec& dag, int i) {
    TaskExec& task = dag.tasks[i];
    LoopState& loop = task.rare->loop;
    Run& run = *dag.run;
    const ir::TaskSpec& spec = *dag.plan->tasks[i];
    const ir::ComponentSpec& comp = *dag.plan->components[i];
    const ir::IteratorSpec& it = *spec.iterator;
    ++loop.busy;
    while (loop.next_item < loop.items.size() && !run.stopping &&
           (it.parallelism_limit == 0 || loop.running_iterations < it.parallelism_limit)) {
      size_t index = loop.next_item++;
      ++loop.running_iterations;
      json inputs = loop.iteration_inputs;
      ArtifactMap artifacts = task.in_artifacts();
      if (it.over_artifacts()) {
        artifacts[it.item_input] = {task.in_artifacts().at(it.input_artifact)[index]};
      } else {
        json item = loop.items[index];
        if (auto def = comp.inputs.parameters.find(it.item_input);
            def != comp.inputs.parameters.end()) {
          auto coerced = ir::CoerceParameterValue(item, def->second.type);
          if (coerced.ok()) item = std::move(*coerced);
        }
        inputs[it.item_input] = std::move(item);
      }
      const std::string& name =
          run.names.emplace_back(fmt::format("{}-iteration-{}", spec.name, index));
      int record = NewRecord(run, name, name, task.record, kNoLabel);
      if (options.task_details) run.details[record].inputs = {{"parameters", inputs}};
      SetState(run, record, RuntimeState::kRunning);
      DagExec& child = NewDag(run, &dag, i, static_cast<int>(index), comp,
                              std::make_shared<const json>(std::move(inputs)), std::move(artifacts),
                              record, dag.dir / spec.name / fmt::format("iteration-{}", index));
      loop.iterations[index] = &child;
      StartDag(child);
    }
    --loop.busy;
    MaybeFinishLoop(dag, i);
  }

  static bool BodyReadsInput(const ir::ComponentSpec& body, const std::string& name) {
    if (!body.is_dag()) return true;
    for (const auto& [tname, t] : body.dag->tasks) {
      if (t.condition.find(name) != std::string::npos) return true;
      if (t.iterator && t.iterator->input_parameter == name) return true;
      for (const auto& [pname, binding] : t.parameters) {
        if (binding.kind == ir::ParameterBinding::Kind::kComponentInput &&
            binding.component_input == name) {
          return true;
        }
      }
    }
    return false;
  }

  void OnIterationDone(DagExec& dag, int i) {
    --dag.tasks[i].rare->loop.running_iterations;
    FillLoop(dag, i);
  }

  void MaybeFinishLoop(DagExec& dag, int i) {
    TaskExec& task = dag.tasks[i];
    const LoopState& loop = task.rare->loop;
    if (task.phase != Phase::kActive || loop.busy > 0 || loop.running_iterations > 0) return;
    Run& run = *dag.run;
    std::string failed;
    bool canceled = false;
    for (const DagExec* child : loop.iterations) {
      if (child == nullptr) continue;
      if (child->state == RuntimeState::kFailed && failed.empty()) {
        failed = fmt::format("iteration {}: {}", child->iteration, child->error);
      }
      canceled = canceled || child->state == RuntimeState::kCanceled;
    }
    bool all_launched = loop.next_item >= loop.items.size();
    const auto& dag_outputs = dag.plan->components[i]->dag->output_parameters;
    for (const auto& [name, sources] : dag_outputs) {
      json values = json::array();
      for (const DagExec* child : loop.iterations) {
        if (child == nullptr) continue;
        if (auto v = child->outputs.find(name); v != child->outputs.end()) values.push_back(*v);
      }
      task.Outputs()[name] = std::move(values);
    }
    for (const auto& [name, sources] : dag.plan->components[i]->dag->output_artifacts) {
      auto& list = task.Rare().out_artifacts[name];
      for (const DagExec* child : loop.iterations) {
        if (child == nullptr) continue;
        if (auto a = child->out_artifacts.find(name); a != child->out_artifacts.end()) {
          list.insert(list.end(), a->second.begin(), a->second.end());
        }
      }
    }
    if (!failed.empty()) return FinishTask(dag, i, RuntimeState::kFailed, failed);
    if (run.canceled && (canceled || !all_launched)) {
      return FinishTask(dag, i, RuntimeState::kCanceled, "canceled");
    }
    if (!all_launched) {
      return FinishTask(dag, i, RuntimeState::kFailed,
                        "not all iterations ran because the run failed");
    }
    FinishTask(dag, i, RuntimeState::kSucceeded);
  }

  // ---- Containers ----

  Status StartContainer(DagExec& dag, int i) {
    Run& run = *dag.run;
    TaskExec& task = dag.tasks[i];
    const ir::TaskSpec& spec = *dag.plan->tasks[i];
    const ir::ComponentSpec& comp = *dag.plan->components[i];
    const ir::ExecutorSpec* exec = dag.plan->executors[i];
    if (exec == nullptr) return Error{"unknown executor '" + comp.executor_label + "'"};

    TaskLaunch launch;
    if (!options.resolve_command_lines) {
      // The launch is built once placed (TimingLaunch); artifact URIs still
      // flow downstream as they would.
      if (task.rare) task.rare->out_artifacts.clear();
      if (!comp.outputs.artifacts.empty()) {
        std::filesystem::path dir = (options.work_root.empty() ? std::filesystem::path(run.id)
                                                               : options.work_root / run.id) /
                                    dag.dir / spec.name;
        for (const auto& [name, def] : comp.outputs.artifacts) {
          std::string path = (dir / "artifacts" / name).string();
          task.Rare().out_artifacts[name] = {
              {name, path, path, def.schema_title, def.schema_version, json::object()}};
        }
      }
      return Place(dag, i, *exec, std::move(launch));
    }
    launch.run_id = run.id;
    launch.task_id = TaskId(run, task.record);
    launch.executor_label = exec->label;
    launch.image = exec->container.image;
    launch.env = exec->container.env;
    std::filesystem::path base =
        options.work_root.empty() ? std::filesystem::path(run.id) : options.work_root / run.id;
    launch.work_dir = base / dag.dir / spec.name;
    std::map<std::string, std::string> output_files;
    for (const auto& [name, def] : comp.outputs.parameters) {
      std::filesystem::path file = launch.work_dir / "outputs" / name;
      output_files[name] = file.string();
      launch.output_parameter_files[name] = std::move(file);
      launch.output_parameter_types[name] = std::string(ir::ParameterTypeName(def.type));
    }
    if (task.rare) task.rare->out_artifacts.clear();
    std::map<std::string, ir::ArtifactValue> out_artifacts;
    for (const auto& [name, def] : comp.outputs.artifacts) {
      // Local execution: the URI is the path, as KFP's local runner does.
      std::string path = (launch.work_dir / "artifacts" / name).string();
      ir::ArtifactValue a{name, path, path, def.schema_title, def.schema_version, json::object()};
      out_artifacts[name] = a;
      task.Rare().out_artifacts[name] = {std::move(a)};
    }
    if (options.create_work_dirs && !options.work_root.empty()) {
      std::error_code ec;
      std::filesystem::create_directories(launch.work_dir / "outputs", ec);
      if (!ec && !out_artifacts.empty()) {
        std::filesystem::create_directories(launch.work_dir / "artifacts", ec);
      }
      if (ec) {
        return Error{
            fmt::format("cannot create work dir {}: {}", launch.work_dir.string(), ec.message())};
      }
    }
    ir::PlaceholderContext ctx;
    ctx.parameters = &ObjectOr(task.params());
    ctx.output_parameter_files = &output_files;
    ctx.input_artifacts = &task.in_artifacts();
    ctx.output_artifacts = &out_artifacts;
    ctx.executor_output_file = (launch.work_dir / "executor_output.json").string();
    ctx.pipeline_job_name = run.display_name;
    ctx.pipeline_job_uuid = run.id;
    ctx.pipeline_task_name = spec.name;
    ctx.pipeline_task_uuid = launch.task_id;
    auto command = ir::ResolveCommandLine(exec->container.command, ctx);
    if (!command.ok()) return command.error();
    auto args = ir::ResolveCommandLine(exec->container.args, ctx);
    if (!args.ok()) return args.error();
    launch.argv = std::move(*command);
    launch.argv.insert(launch.argv.end(), std::make_move_iterator(args->begin()),
                       std::make_move_iterator(args->end()));
    return Place(dag, i, *exec, std::move(launch));
  }

  // Resource fields set from a pipeline input or an upstream output, resolved
  // from the task's inputs as KFP's driver does when it builds the pod.
  // `spec` itself when nothing is templated (a copy per task would cost
  // its string and map); else the resolved copy in `resolved`.
  static Result<const ir::ResourceSpec*> ResolveResources(const TaskExec& task,
                                                          const ir::ResourceSpec& spec,
                                                          ir::ResourceSpec& resolved) {
    if (spec.templated.empty()) return &spec;
    ir::ResourceSpec& out = resolved = spec;
    ir::PlaceholderContext ctx;
    ctx.parameters = &ObjectOr(task.params());
    for (const auto& [key, text] : spec.templated) {
      auto value = ir::ResolvePlaceholders(text, ctx);
      if (!value.ok()) return Error{fmt::format("resources.{}: {}", key, value.error().message)};
      if (Status s = ir::SetResourceField(out, key, *value); !s.ok()) {
        return Error{fmt::format("resources.{} = '{}': {}", key, *value, s.error().message)};
      }
    }
    return &out;
  }

  // Queues a launch for a node with room, unless no node could ever hold it.
  Status Place(DagExec& dag, int i, const ir::ExecutorSpec& executor_spec, TaskLaunch&& launch) {
    Run& run = *dag.run;
    TaskExec& task = dag.tasks[i];
    const ir::TaskSpec& spec = *dag.plan->tasks[i];
    const ir::ComponentSpec& comp = *dag.plan->components[i];
    const ir::ExecutorSpec* exec = &executor_spec;
    ir::ResourceSpec resolved;
    auto resources = ResolveResources(task, exec->container.resources, resolved);
    if (!resources.ok()) return resources.error();
    Resources ir_res = ToResources(**resources);
    bool any = ir_res.cpu_request > 0 || ir_res.cpu_limit > 0 || ir_res.memory_request > 0 ||
               ir_res.memory_limit > 0;
    launch.resources = any ? ir_res : options.default_task_resources;
    Demand demand = DemandOf(ir_res, options.default_task_resources);
    if (!exec->scheduling.empty()) demand.scheduling = &exec->scheduling;
    if (!placement.FitsSomeNode(demand)) {
      if (demand.scheduling == nullptr && !placement.any_taints()) {  // size alone
        return Error{fmt::format("task requests {}, more than any node offers (largest: {})",
                                 DescribeDemand(demand), DescribeDemand(placement.LargestNode()))};
      }
      // A pod Kubernetes could never schedule would stay Pending for ever;
      // here the task fails at once with the scheduler's reason.
      return Error{fmt::format("task cannot be scheduled: {}", placement.WhyUnschedulable(demand))};
    }
    if (spec.enable_cache && options.cache != nullptr) {
      json input_artifacts = json::object();
      for (const auto& [name, list] : task.in_artifacts()) {
        json uris = json::array();
        for (const auto& a : list) uris.push_back(a.uri);
        input_artifacts[name] = std::move(uris);
      }
      std::string& fingerprint = task.Rare().fingerprint;
      fingerprint = CacheFingerprint(comp, *exec, ObjectOr(task.params()), input_artifacts);
      if (options.task_details) run.details[task.record].cache_fingerprint = fingerprint;
      if (auto hit = options.cache->Lookup(CacheScope(*run.spec), fingerprint)) {
        ReuseCached(dag, i, *hit);
        return Ok();
      }
    }
    if (spec.retry && spec.retry->max_retry_count > 0) {
      task.Rare().retry_launch = std::make_unique<TaskLaunch>(launch);
    }
    Enqueue(dag, i, std::move(launch), demand);
    SchedulePending();
    return Ok();
  }

  // A cache hit: the earlier execution's outputs stand for this one's, and
  // the task ends SKIPPED (KFP's state for a cached task) without running.
  void ReuseCached(DagExec& dag, int i, const CachedExecution& hit) {
    TaskExec& task = dag.tasks[i];
    task.cached = true;
    task.Outputs() = hit.output_parameters.is_object() ? hit.output_parameters : json::object();
    task.Rare().out_artifacts = ArtifactsFromJson(hit.output_artifacts);
    FinishTask(dag, i, RuntimeState::kSkipped);
  }

  void RecordInCache(const Run& run, const TaskExec& task) {
    CachedExecution execution;
    execution.run_id = run.id;
    execution.task_id = TaskId(run, task.record);
    execution.output_parameters = ObjectOr(task.outputs());
    for (const auto& [name, list] : task.out_artifacts()) {
      json values = json::array();
      for (const auto& a : list) values.push_back(ArtifactJson(a));
      execution.output_artifacts[name] = std::move(values);
    }
    options.cache->Record(CacheScope(*run.spec), task.fingerprint(), execution);
  }

  // A new attempt of task `i`, in a slot; returns its id.
  uint64_t NewAttempt(DagExec& dag, int i, Container::Where where, const Demand& demand,
                      const Resources& resources) {
    uint64_t id = NewContainer();
    Container& c = *FindContainer(id);
    c.run = dag.run;
    c.dag = &dag;
    c.task = i;
    c.task_exec = &dag.tasks[i];
    c.record = dag.tasks[i].record;
    c.where = where;
    c.demand = demand;
    c.exec = dag.plan->executors[i];
    c.component = dag.plan->components[i];
    c.resources = resources;
    return id;
  }

  void Enqueue(DagExec& dag, int i, TaskLaunch&& launch, const Demand& demand) {
    uint64_t id = NewAttempt(dag, i, Container::Where::kQueued, demand, launch.resources);
    Container& c = *FindContainer(id);
    c.ready_at = loop.Now();
    if (options.resolve_command_lines) {
      TaskLaunch& kept = LaunchOf(id);
      kept = std::move(launch);
      kept.pod_name = PodName(*dag.run);
    }
    placement.Enqueue(id, demand);
  }

  void SchedulePending() {
    // The buffer is reused from call to call; a nested call (none is
    // expected) would find it moved out and use a fresh one.
    std::vector<Placement::Placed> placed = std::move(placed_buffer);
    placed.clear();
    placement.Schedule(placed);
    for (const auto& p : placed) {
      Container* c = FindContainer(p.ticket);
      if (c == nullptr) continue;
      Launch(p.ticket, *c, p.node);
    }
    placed_buffer = std::move(placed);
    // On a full cluster the head of the queue is placed when the next task
    // ends; its slot, queued long ago, is cold. Fetching its two lines now
    // overlaps the wait with the work in between.
    if (Placement::Ticket next = placement.first_queued(); next != 0) {
      const Container& c = container_slots[SlotOf(next)];
      __builtin_prefetch(&c);
      __builtin_prefetch(reinterpret_cast<const char*>(&c) + 64);
    }
  }

  void Launch(uint64_t id, Container& c, size_t node) {
    Run& run = *c.run;
    // Only the attempt's, the run's and the record's lines, not the DAG's
    // or the task's: each is cold by the time a queued task is placed.
    TaskState& rec = run.records[c.record];
    c.where = Container::Where::kRunning;
    c.node = node;
    if (options.task_details) {
      TaskRecord& d = run.details[c.record];
      d.node = placement.node(node).name;
      d.pod_name = LaunchOf(id).pod_name;
    }
    rec.scheduling_delay = loop.Now() - c.ready_at;
    MarkRunning(run);
    SetState(run, c.record, RuntimeState::kRunning);
    auto done = [this, id](TaskResult&& result) {
      if (depth > 0) {
        // Called from inside Launch: finish it after this handler.
        loop.Post([this, id, r = std::move(result)] { OnDone(id, r); });
        return;
      }
      OnDone(id, result);
    };
    const uint32_t launches_before = run.launches.Count(c.exec);
    if (!options.resolve_command_lines) {
      return executor.Launch(TimingLaunch(c, launches_before), std::move(done));
    }
    // Retries rebuild from task.retry_launch, so the executor can have ours.
    TaskLaunch& launch = LaunchOf(id);
    launch.label_launches_before = launches_before;
    executor.Launch(std::move(launch), std::move(done));
  }

  // Without resolve_command_lines: only what an executor that keeps time
  // reads.
  static TaskLaunch TimingLaunch(const Container& c, uint32_t launches_before) {
    TaskLaunch launch;
    launch.label_launches_before = launches_before;
    launch.run_id = c.run->id;
    launch.task_id = TaskId(*c.run, c.record);
    launch.executor_label = c.exec->label;
    for (const auto& [name, def] : c.component->outputs.parameters) {
      launch.output_parameter_types[name] = std::string(ir::ParameterTypeName(def.type));
    }
    launch.resources = c.resources;
    return launch;
  }

  void OnDone(uint64_t id, const TaskResult& result) {
    Scope scope(*this);
    Container* held = FindContainer(id);
    if (held == nullptr) return;
    // The few fields needed below (the launch went to the executor). The
    // record is found from the attempt, not the task, so that the run's, the
    // task's and the record's cache lines load at once, not one after another.
    Run& run = *held->run;
    DagExec& dag = *held->dag;
    const int i = held->task;
    TaskExec& task = *held->task_exec;
    if (options.task_details) {
      TaskRecord& d = run.details[held->record];
      d.cpu_seconds += result.cpu_seconds;
      d.peak_rss_bytes = std::max(d.peak_rss_bytes, result.peak_rss_bytes);
      if (!result.log_path.empty()) d.log_path = result.log_path;
    }
    placement.Release(held->node, held->demand);
    const ir::TaskSpec& spec = *dag.plan->tasks[i];
    const ir::ComponentSpec& comp = *dag.plan->components[i];
    // Only a retry needs the demand whole: its rules are on the slot's
    // second line.
    const Demand retry_demand = spec.retry ? held->demand : Demand{};
    FreeContainer(id, *held);
    // Attempts are counted as they end, and only where a retry policy reads them.
    if (spec.retry) ++task.Rare().attempts;

    if (run.canceled) {
      FinishTask(dag, i, RuntimeState::kCanceled, "canceled");
    } else {
      std::string error;
      if (result.succeeded) {
        for (const auto& [name, def] : comp.outputs.parameters) {
          auto raw = result.output_parameters.find(name);
          if (raw == result.output_parameters.end()) {
            error = fmt::format("output parameter '{}' was not written", name);
            break;
          }
          auto value = ir::ParseOutputParameter(raw->second, def.type);
          if (!value.ok()) {
            error = fmt::format("output parameter '{}': {}", name, value.error().message);
            break;
          }
          task.Outputs()[name] = std::move(*value);
        }
      } else {
        error = result.error.empty() ? fmt::format("exit code {}", result.exit_code) : result.error;
      }
      if (error.empty()) {
        if (!task.fingerprint().empty()) RecordInCache(run, task);
        FinishTask(dag, i, RuntimeState::kSucceeded);
      } else if (spec.retry && task.attempts() <= spec.retry->max_retry_count &&
                 task.retry_launch()) {
        ScheduleRetry(dag, i, retry_demand, error);
      } else {
        task.Outputs() = json::object();
        FinishTask(dag, i, RuntimeState::kFailed, error);
      }
    }
    SchedulePending();
  }

  void ScheduleRetry(DagExec& dag, int i, const Demand& demand, const std::string& error) {
    TaskExec& task = dag.tasks[i];
    Run& run = *dag.run;
    const ir::RetryPolicy& policy = *dag.plan->tasks[i]->retry;
    task.Outputs() = json::object();
    double seconds =
        ToSeconds(policy.backoff) * std::pow(policy.backoff_factor, task.attempts() - 1);
    if (policy.backoff_max > Duration::zero()) {
      seconds = std::min(seconds, ToSeconds(policy.backoff_max));
    }
    Duration delay = FromSeconds(seconds);
    SetState(run, task.record, RuntimeState::kRunning,
             fmt::format("attempt {} failed: {}; retry {} of {} in {}", task.attempts(), error,
                         task.attempts(), policy.max_retry_count, FormatDuration(delay)));
    uint64_t id =
        NewAttempt(dag, i, Container::Where::kBackoff, demand, task.retry_launch()->resources);
    Container& c = *FindContainer(id);
    c.timer = loop.After(delay, [this, id] { OnRetryTimer(id); });
  }

  void OnRetryTimer(uint64_t id) {
    Scope scope(*this);
    Container* found = FindContainer(id);
    if (found == nullptr || found->where != Container::Where::kBackoff) return;
    Container& c = *found;
    TaskExec& task = c.dag->tasks[c.task];
    c.where = Container::Where::kQueued;
    c.ready_at = loop.Now();
    if (options.resolve_command_lines) {
      TaskLaunch& launch = LaunchOf(id);
      launch = *task.retry_launch();
      launch.pod_name = PodName(*c.run);
    }
    placement.Enqueue(id, c.demand);
    SchedulePending();
  }
};

Engine::Engine(EventLoop& loop, Executor& executor, RunObserver& observer, EngineOptions options)
    : impl_(std::make_unique<Impl>(loop, executor, observer, std::move(options))) {}

Engine::~Engine() = default;

Status Engine::Submit(RunRequest request) {
  if (request.run_id.empty()) return Error{"run id is empty", kHttpBadRequest};
  if (request.spec == nullptr) return Error{"run has no pipeline spec", kHttpBadRequest};
  if (Status s = impl_->executor.CanRun(*request.spec); !s.ok()) return s;
  auto params = impl_->RunParameters(request);
  if (!params.ok()) return params.error();
  if (Status s = ir::CheckImporterUris(*request.spec, **params, impl_->artifact_roots); !s.ok()) {
    return s;
  }
  Impl* impl = impl_.get();
  impl->loop.Post([impl, req = std::move(request), p = std::move(*params)]() mutable {
    impl->StartRun(std::move(req), std::move(p));
  });
  return Ok();
}

void Engine::Terminate(const std::string& run_id) {
  Impl* impl = impl_.get();
  impl->loop.Post([impl, run_id] { impl->Terminate(run_id); });
}

size_t Engine::AddNode(const NodeSpec& node) {
  Impl::Scope scope(*impl_);
  size_t index = impl_->placement.AddNode(node);
  impl_->SchedulePending();
  return index;
}

bool Engine::RemoveNode(size_t index) { return impl_->placement.RemoveNode(index); }

const Placement& Engine::placement() const { return impl_->placement; }

}  // namespace kfpbench::engine
