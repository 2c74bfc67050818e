// Tasks that do not run because an earlier execution stands for them: a hit
// in KFP's execution cache, and a retry's kept tasks.
#include "engine/engine_impl.h"

#include <string>
#include <utility>

namespace kfpbench::engine {

using namespace detail;  // NOLINT: the run state types are the engine's vocabulary

namespace {

using nlohmann::json;

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

}  // namespace

// Looks task `i` up in the cache by KFP's fingerprint of its component and
// inputs. A hit: the earlier execution's outputs stand for this one's, and
// the task ends SKIPPED (KFP's state for a cached task) without running.
bool Engine::Impl::ReuseCachedExecution(DagExec& dag, int i, const ir::ExecutorSpec& exec) {
  Run& run = *dag.run;
  TaskExec& task = dag.tasks[i];
  const ir::ComponentSpec& comp = *dag.plan->components[i];
  json input_artifacts = json::object();
  for (const auto& [name, list] : task.in_artifacts()) {
    json uris = json::array();
    for (const auto& a : list) uris.push_back(a.uri);
    input_artifacts[name] = std::move(uris);
  }
  std::string& fingerprint = task.Rare().fingerprint;
  fingerprint = CacheFingerprint(comp, exec, ObjectOr(task.params()), input_artifacts);
  if (options.task_details) run.details[task.record].cache_fingerprint = fingerprint;
  auto hit = options.cache->Lookup(CacheScope(*run.spec), fingerprint);
  if (!hit) return false;
  task.cached = true;
  task.Outputs() = hit->output_parameters.is_object() ? hit->output_parameters : json::object();
  task.Rare().out_artifacts = ArtifactsFromJson(hit->output_artifacts);
  FinishTask(dag, i, RuntimeState::kSkipped);
  return true;
}

void Engine::Impl::RecordInCache(const Run& run, const TaskExec& task) {
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

// A task kept from the failed attempt a retry started from: it ends as it
// ended then, with the same id, pod, times and outputs, and does not run.
void Engine::Impl::Keep(DagExec& dag, int i, const TaskRecord& kept) {
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

}  // namespace kfpbench::engine
