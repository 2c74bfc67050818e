#include "engine/task_inputs.h"

#include <filesystem>
#include <string>
#include <unordered_set>

#include <fmt/format.h>

#include "ir/cel.h"
#include "ir/placeholders.h"
#include "ir/values.h"
#include "util/time.h"

namespace kfpbench::engine::detail {

using nlohmann::json;

json FinalStatus(const DagExec& dag, int producer) {
  const TaskExec& p = dag.tasks[producer];
  json status = {{"state", std::string(RuntimeStateName(p.state))},
                 {"pipelineJobResourceName", dag.run->resource_name},
                 {"pipelineTaskName", dag.plan->tasks[producer]->name}};
  if (!p.error().empty()) status["error"] = {{"code", 2}, {"message", p.error()}};
  return status;
}

namespace {

// The driver's substitutions in constant inputs (resolve.go,
// resolveInputParameter): a constant that is exactly one of the run's
// placeholders becomes its value, and {{$.workspace_path}} is replaced
// anywhere in one. Anything else stays as written.
json RuntimeConstant(const DagExec& dag, int i, const json& constant) {
  if (!constant.is_string()) return constant;
  const std::string& text = constant.get_ref<const std::string&>();
  const Run& run = *dag.run;
  constexpr std::string_view kWorkspace = "{{$.workspace_path}}";
  if (text.find(kWorkspace) != std::string::npos) {
    std::string out = text;
    for (size_t at = out.find(kWorkspace); at != std::string::npos;
         at = out.find(kWorkspace, at + run.workspace_path.size())) {
      out.replace(at, kWorkspace.size(), run.workspace_path);
    }
    if (run.workspace_is_local) {
      std::error_code ec;  // a step that cannot use it fails and says so
      std::filesystem::create_directories(run.workspace_path, ec);
    }
    return out;
  }
  const ir::TaskSpec& spec = *dag.plan->tasks[i];
  if (text == "{{$.pipeline_job_name}}") return run.display_name;
  if (text == "{{$.pipeline_job_resource_name}}") return run.resource_name;
  if (text == "{{$.pipeline_job_uuid}}") return run.id;
  if (text == "{{$.pipeline_task_name}}") {
    return spec.display_name.empty() ? spec.name : spec.display_name;
  }
  // KFP gives the enclosing DAG's execution id; the DAG's task id stands for it.
  if (text == "{{$.pipeline_task_uuid}}") return TaskId(run, dag.record);
  if (text == "{{$.pipeline_job_create_time_utc}}") return FormatRfc3339(run.created_at);
  if (text == "{{$.pipeline_job_schedule_time_utc}}") {
    return run.scheduled_at == WallTime{} ? std::string() : FormatRfc3339(run.scheduled_at);
  }
  return constant;
}

}  // namespace

// One function of 130 lines, on purpose: it runs for every task a simulation
// starts, and cut into its four steps (parameters bound, defaults, templated
// constants, artifacts) it took 40 more instructions a task, 0.8% of a
// simulated run (cachegrind, BM_Simulate/10000, docs/PERFORMANCE.md).
Status ResolveTaskInputs(DagExec& dag, int i, bool& skipped) {
  const DagPlan& plan = *dag.plan;
  const ir::TaskSpec& spec = *plan.tasks[i];
  const ir::ComponentSpec& comp = *plan.components[i];
  TaskExec& task = dag.tasks[i];
  std::unordered_set<std::string> missing_upstream;
  bool has_templated_constants = false;
  for (const auto& [name, b] : spec.parameters) {
    json value;
    bool have = false;
    switch (b.kind) {
      case ir::ParameterBinding::Kind::kComponentInput: {
        const nlohmann::json& inputs = dag.Inputs();
        if (auto it = inputs.find(b.component_input); it != inputs.end() && !it->is_null()) {
          value = *it;
          have = true;
        }
        break;
      }
      case ir::ParameterBinding::Kind::kConstant:
        value = RuntimeConstant(dag, i, b.constant);
        have = true;
        has_templated_constants = has_templated_constants ||
                                  (value.is_string() && value.get_ref<const std::string&>().find(
                                                            "{{$") != std::string::npos);
        break;
      case ir::ParameterBinding::Kind::kTaskOutput: {
        const TaskExec& p = dag.tasks[plan.index.at(b.producer_task)];
        if (auto it = p.outputs().find(b.output_key); it != p.outputs().end()) {
          value = *it;
          have = true;
        } else if (p.state != RuntimeState::kSucceeded && !p.cached) {
          missing_upstream.insert(name);
        }
        break;
      }
      case ir::ParameterBinding::Kind::kTaskFinalStatus:
        value = FinalStatus(dag, plan.index.at(b.producer_task));
        have = true;
        break;
    }
    if (!have) continue;
    if (!b.expression_selector.empty()) {
      auto selected = ir::EvalSelector(plan.selectors[i].at(name), value);
      if (!selected.ok()) {
        return Error{fmt::format("input parameter '{}': {}", name, selected.error().message)};
      }
      value = std::move(*selected);
    }
    if (auto def = comp.inputs.parameters.find(name); def != comp.inputs.parameters.end()) {
      auto coerced = ir::CoerceParameterValue(value, def->second.type);
      if (!coerced.ok()) {
        return Error{fmt::format("input parameter '{}': {}", name, coerced.error().message)};
      }
      value = std::move(*coerced);
    }
    task.Params()[name] = std::move(value);
  }
  for (const auto& [name, def] : comp.inputs.parameters) {
    if (task.params().contains(name)) continue;
    if (spec.iterator && spec.iterator->item_input == name) continue;
    if (def.default_value && !def.default_value->is_null()) {
      auto v = ir::CoerceParameterValue(*def.default_value, def.type);
      if (!v.ok()) return Error{fmt::format("default of '{}': {}", name, v.error().message)};
      task.Params()[name] = std::move(*v);
      continue;
    }
    if (def.is_optional) continue;
    if (missing_upstream.contains(name)) {
      skipped = true;
      return Ok();
    }
    return Error{fmt::format("input parameter '{}' has no value", name)};
  }
  // Constants may embed other inputs (f-strings): "heads and {{$.inputs.parameters['n']}}".
  if (has_templated_constants) {
    json snapshot = task.params();
    ir::PlaceholderContext ctx;
    ctx.parameters = &snapshot;
    ctx.pipeline_job_name = dag.run->display_name;
    ctx.pipeline_job_uuid = dag.run->id;
    ctx.pipeline_task_name = spec.name;
    for (const auto& [name, b] : spec.parameters) {
      if (b.kind != ir::ParameterBinding::Kind::kConstant || !task.Params()[name].is_string()) {
        continue;
      }
      auto resolved = ir::ResolvePlaceholders(task.Params()[name].get<std::string>(), ctx);
      if (!resolved.ok()) {
        return Error{fmt::format("input parameter '{}': {}", name, resolved.error().message)};
      }
      task.Params()[name] = std::move(*resolved);
    }
  }
  for (const auto& [name, b] : spec.artifacts) {
    if (b.kind == ir::ArtifactBinding::Kind::kComponentInput) {
      auto it = dag.in_artifacts.find(b.component_input);
      if (it == dag.in_artifacts.end()) {
        // As KFP's driver (resolve.go, resolveInputArtifact): a pipeline's
        // own input artifacts have no value, since a run's runtime_config
        // cannot give any.
        return Error{
            fmt::format("failed to resolve input artifact {}: parent DAG does not have "
                        "input artifact {}",
                        name, b.component_input)};
      }
      task.Rare().in_artifacts[name] = it->second;
    } else {
      const TaskExec& p = dag.tasks[plan.index.at(b.producer_task)];
      if (auto it = p.out_artifacts().find(b.output_key); it != p.out_artifacts().end()) {
        task.Rare().in_artifacts[name] = it->second;
      } else if (p.state != RuntimeState::kSucceeded && !p.cached) {
        missing_upstream.insert(name);
      }
    }
  }
  for (const auto& [name, def] : comp.inputs.artifacts) {
    if (task.in_artifacts().contains(name) || def.is_optional) continue;
    if (spec.iterator && spec.iterator->item_input == name) continue;
    if (missing_upstream.contains(name)) {
      skipped = true;
      return Ok();
    }
    return Error{fmt::format("input artifact '{}' has no value", name)};
  }
  return Ok();
}

}  // namespace kfpbench::engine::detail
