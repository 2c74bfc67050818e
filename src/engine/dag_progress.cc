// DAG instances: a task starts once its upstream tasks are done (or is kept,
// skipped, or run by the driver), and a DAG ends when none of its tasks is in
// flight, passing its outputs up.
#include "engine/engine_impl.h"

#include <fmt/format.h>

#include "engine/task_inputs.h"
#include "ir/cel.h"

namespace kfpbench::engine {

using namespace detail;  // NOLINT: the run state types are the engine's vocabulary

namespace {

using nlohmann::json;

bool IsFailure(RuntimeState s) {
  return s == RuntimeState::kFailed || s == RuntimeState::kCanceled;
}

}  // namespace

json detail::ArtifactJson(const ir::ArtifactValue& a) {
  return {{"name", a.name},
          {"uri", a.uri},
          {"path", a.path},
          {"schema_title", a.schema_title},
          {"schema_version", a.schema_version},
          {"metadata", a.metadata}};
}

DagExec& Engine::Impl::NewDag(Run& run, DagExec* parent, int parent_task, int iteration,
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

void Engine::Impl::StartDag(DagExec& dag) {
  ++dag.busy;
  for (size_t i = 0; i < dag.tasks.size(); ++i) {
    if (dag.tasks[i].unfinished_upstream == 0) TryStart(dag, static_cast<int>(i));
  }
  --dag.busy;
  CheckDagDone(dag);
}

void Engine::Impl::CheckDagDone(DagExec& dag) {
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

void Engine::Impl::TryStart(DagExec& dag, int i) {
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

void Engine::Impl::FinishTask(DagExec& dag, int i, RuntimeState state, const std::string& error) {
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

}  // namespace kfpbench::engine
