// ParallelFor: a loop task starts one DAG instance per item, at most
// parallelism_limit at once, and gathers their outputs into lists.
#include "engine/engine_impl.h"

#include <fmt/format.h>

#include "ir/values.h"
#include "util/json_reader.h"

namespace kfpbench::engine {

using namespace detail;  // NOLINT: the run state types are the engine's vocabulary

namespace {

using nlohmann::json;

bool BodyReadsInput(const ir::ComponentSpec& body, const std::string& name) {
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

}  // namespace

void Engine::Impl::StartLoop(DagExec& dag, int i) {
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
      json parsed = ParseJson(items.get<std::string>());
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

void Engine::Impl::FillLoop(DagExec& dag, int i) {
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

void Engine::Impl::OnIterationDone(DagExec& dag, int i) {
  --dag.tasks[i].rare->loop.running_iterations;
  FillLoop(dag, i);
}

void Engine::Impl::MaybeFinishLoop(DagExec& dag, int i) {
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

}  // namespace kfpbench::engine
