#include "plan/pipeline_fit.h"

#include <algorithm>
#include <cmath>
#include <map>

namespace kfpbench::plan {

std::map<std::string, int> TaskLevels(const ir::DagSpec& dag) {
  std::map<std::string, int> level;
  for (const auto& name : dag.topo_order) {
    int l = 0;
    for (const auto& dep : dag.tasks.at(name).dependent_tasks) l = std::max(l, level[dep] + 1);
    level[name] = l;
  }
  return level;
}

std::optional<PipelineFit> PipelinesPerNode(const ir::PipelineSpec& spec,
                                            const ProfileReport& report) {
  if (!report.options.node || !spec.root.dag) return std::nullopt;
  const NodeSize& node = *report.options.node;
  const ir::DagSpec& dag = *spec.root.dag;
  std::map<std::string, const StepProfile*> by_step;
  for (const auto& s : report.steps) by_step.emplace(s.step, &s);
  std::map<std::string, int> depth = TaskLevels(dag);
  std::map<int, PipelineFit> levels;
  for (const auto& name : dag.topo_order) {
    auto it = by_step.find(name);
    if (it == by_step.end()) continue;  // a sub-DAG or a step that never ran
    PipelineFit& level = levels[depth[name]];
    level.tasks.push_back(name);
    level.cpu_request += it->second->recommended.cpu_request;
    level.memory_request += it->second->recommended.memory_request;
  }
  std::optional<PipelineFit> tightest;
  for (auto& [d, level] : levels) {
    auto by_cpu = static_cast<int64_t>(std::floor(node.cpu / level.cpu_request + 1e-9));
    int64_t by_memory = node.memory / level.memory_request;
    level.pipelines = std::min(by_cpu, by_memory);
    level.limited_by = by_cpu <= by_memory ? "cpu" : "memory";
    if (!tightest || level.pipelines < tightest->pipelines) tightest = level;
  }
  return tightest;
}

void AddPipelineFit(const ir::PipelineSpec& spec, ProfileReport& report) {
  report.pipeline_fit = PipelinesPerNode(spec, report);
}

void AddRequestedAccelerators(const ir::PipelineSpec& spec, ProfileReport& report) {
  for (auto& step : report.steps) {
    const ir::ExecutorSpec* exec = spec.FindExecutor(step.executor_label);
    if (exec == nullptr) continue;
    const ir::ResourceSpec& r = exec->container.resources;
    if (r.accelerator_type.empty() || r.accelerator_count <= 0) continue;
    step.accelerator = r.accelerator_type;
    step.accelerator_count = r.accelerator_count;
  }
}

}  // namespace kfpbench::plan
