// What a container task is launched with: its command line, environment,
// work directory and output files, or, for an executor that only keeps time,
// the little it reads.
#include "engine/engine_impl.h"

#include <filesystem>
#include <map>
#include <system_error>

#include <fmt/format.h>

#include "ir/placeholders.h"

namespace kfpbench::engine {

using namespace detail;  // NOLINT: the run state types are the engine's vocabulary

namespace {

using nlohmann::json;

}  // namespace

Status Engine::Impl::StartContainer(DagExec& dag, int i) {
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
      std::filesystem::path dir =
          (options.work_root.empty() ? std::filesystem::path(run.id) : options.work_root / run.id) /
          dag.dir / spec.name;
      for (const auto& [name, def] : comp.outputs.artifacts) {
        std::string path = (dir / "artifacts" / name).string();
        task.Rare().out_artifacts[name] = {
            {name, path, path, def.schema_title, def.schema_version, json::object()}};
      }
    }
    return Place(dag, i, *exec, std::move(launch));
  }
  if (Status s = ResolveLaunch(dag, i, *exec, launch); !s.ok()) return s;
  return Place(dag, i, *exec, std::move(launch));
}

// With resolve_command_lines (the embedded backend): everything the
// executor runs the step with, and its work directory made.
Status Engine::Impl::ResolveLaunch(DagExec& dag, int i, const ir::ExecutorSpec& exec,
                                   TaskLaunch& launch) {
  Run& run = *dag.run;
  TaskExec& task = dag.tasks[i];
  const ir::TaskSpec& spec = *dag.plan->tasks[i];
  const ir::ComponentSpec& comp = *dag.plan->components[i];
  launch.run_id = run.id;
  launch.task_id = TaskId(run, task.record);
  launch.executor_label = exec.label;
  launch.image = exec.container.image;
  launch.env = exec.container.env;
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
  auto command = ir::ResolveCommandLine(exec.container.command, ctx);
  if (!command.ok()) return command.error();
  auto args = ir::ResolveCommandLine(exec.container.args, ctx);
  if (!args.ok()) return args.error();
  launch.argv = std::move(*command);
  launch.argv.insert(launch.argv.end(), std::make_move_iterator(args->begin()),
                     std::make_move_iterator(args->end()));
  return Ok();
}

// Without resolve_command_lines: only what an executor that keeps time
// reads.
TaskLaunch Engine::Impl::TimingLaunch(const Container& c, uint32_t launches_before) {
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

}  // namespace kfpbench::engine
