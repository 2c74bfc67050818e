#include "sim/workload_plan.h"

#include <charconv>
#include <map>
#include <memory>
#include <string>

#include <fmt/format.h>

#include "engine/placement.h"
#include "sim/arrivals.h"
#include "sim/budget.h"
#include "util/json_reader.h"

namespace kfpbench::sim {

namespace {

// Each run's pipeline, by run index, as Simulation::Submit picks it: the
// arrival's row names one, else the mix's next, else the workload's.
std::vector<std::shared_ptr<const ir::PipelineSpec>> PipelinesByRun(
    const WorkloadSpec& workload, const ArrivalSchedule& schedule) {
  std::vector<std::shared_ptr<const ir::PipelineSpec>> out;
  MixPicker mix(workload.mix);
  for (int64_t i = 0; i < schedule.total(); ++i) {
    const Arrival* row = schedule.Row(i);
    if (row != nullptr && row->pipeline != nullptr) {
      out.push_back(row->pipeline);
    } else if (!workload.mix.empty()) {
      out.push_back(mix.Next().pipeline);
    } else {
      out.push_back(workload.pipeline);
    }
  }
  return out;
}

// "run-12" -> 12.
std::optional<int64_t> RunIndex(std::string_view run_id) {
  constexpr std::string_view kPrefix = "run-";
  if (!run_id.starts_with(kPrefix)) return std::nullopt;
  int64_t i = -1;
  auto digits = run_id.substr(kPrefix.size());
  auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), i);
  if (ec != std::errc{} || end != digits.data() + digits.size() || i < 0) return std::nullopt;
  return i;
}

// One run's tasks from the engine's states at its end (see PlannedTask).
Result<PlannedRun> PlanRun(const engine::RunSnapshot& s, const ir::PipelineSpec& spec,
                           const engine::Resources& default_task) {
  PlannedRun run;
  run.name = s.run_id;
  const auto& states = s.task_states;
  const size_t n = states.size();
  // Per record: the component it runs and, for a task of a DAG, its spec.
  std::vector<const ir::ComponentSpec*> component(n, nullptr);
  std::vector<const ir::TaskSpec*> task_spec(n, nullptr);
  std::vector<bool> kept(n, false);
  std::map<std::pair<int32_t, std::string>, bool> ran;  // (parent, name) -> kept
  for (size_t i = 0; i < n; ++i) {
    const engine::TaskState& t = states[i];
    const std::string where = fmt::format("{}: task {}", s.run_id, *t.name);
    if (t.parent < 0) {
      component[i] = &spec.root;
      continue;
    }
    const auto p = static_cast<size_t>(t.parent);
    if (p >= i || component[p] == nullptr) return Error{where + ": its DAG is not before it"};
    if (task_spec[p] != nullptr && task_spec[p]->iterator) {
      component[i] = component[p];  // an iteration of a loop runs the loop's component
    } else {
      const ir::ComponentSpec* dag = component[p];
      if (!dag->is_dag()) return Error{where + ": its parent is not a DAG"};
      auto it = dag->dag->tasks.find(*t.name);
      if (it == dag->dag->tasks.end()) return Error{where + ": not in its DAG's spec"};
      task_spec[i] = &it->second;
      component[i] = spec.FindComponent(it->second.component_ref);
      if (component[i] == nullptr) return Error{where + ": unknown component"};
    }
    // Only what ran; a skipped DAG's tasks never start.
    kept[i] = t.state == RuntimeState::kSucceeded && (states[p].parent < 0 || kept[p]);
    ran[{t.parent, *t.name}] = kept[i];
  }
  // Ids are the records' indexes; the root's children name -1 as parent.
  for (size_t i = 0; i < n; ++i) {
    const engine::TaskState& t = states[i];
    if (t.parent < 0 || !kept[i]) continue;
    PlannedTask task;
    task.id = static_cast<int>(i);
    task.parent = states[static_cast<size_t>(t.parent)].parent < 0 ? -1 : t.parent;
    task.name = *t.name;
    task.container = !t.executor_label->empty();
    if (task_spec[i] != nullptr) {
      for (const auto& dep : task_spec[i]->upstream) {
        if (auto r = ran.find({t.parent, dep}); r != ran.end() && r->second) {
          task.dependencies.push_back(dep);
        }
      }
    }
    if (task.container) {
      const std::string where = fmt::format("{}: step {}", s.run_id, task.name);
      task.label = *t.executor_label;
      const ir::ExecutorSpec* exec = spec.FindExecutor(task.label);
      if (exec == nullptr) return Error{where + ": unknown executor " + task.label};
      if (exec->runs_in_driver()) {
        return Error{where + ": is run by KFP's driver, not as a pod (an importer or PVC step)"};
      }
      const ir::ResourceSpec& res = exec->container.resources;
      if (!res.templated.empty()) {
        return Error{where +
                     ": its requests come from placeholders, which a plan does not resolve"};
      }
      if (!res.accelerator_type.empty() || !exec->scheduling.empty()) {
        return Error{where +
                     ": asks for an accelerator or for particular nodes, which a plan "
                     "does not carry"};
      }
      const engine::Demand d = engine::DemandOf(engine::ResourcesOf(res), default_task);
      task.cpu_millis = d.cpu_millis();
      task.memory_bytes = d.memory();
      task.seconds = ToSeconds(t.end_time - t.start_time);
    }
    run.tasks.push_back(std::move(task));
  }
  return run;
}

}  // namespace

Result<WorkloadPlan> PlanWorkload(const ClusterSpec& cluster, const WorkloadSpec& workload,
                                  SimResult* result) {
  if (workload.pipeline == nullptr) return Refused("workload has no pipeline");
  const std::unique_ptr<ArrivalSchedule> schedule = ScheduleOf(workload);
  if (Status st = schedule->Check(); !st.ok()) return st.error();
  if (schedule->closed()) {
    return Refused(
        "a closed loop's arrivals follow the cluster, so no plan can fix them: give the "
        "workload arrivals of its own (all at once, a rate, a CSV)");
  }
  const auto pipelines = PipelinesByRun(workload, *schedule);
  const engine::Resources default_task{
      cluster.default_task_cpu, 0, cluster.default_task_memory, 0, {}};
  WorkloadPlan plan;
  plan.runs.resize(pipelines.size());
  Status error = Ok();
  SimOptions options;
  options.on_run_end = [&](const engine::RunSnapshot& s, WallTime) {
    if (!error.ok()) return;
    auto index = RunIndex(s.run_id);
    if (!index || *index >= static_cast<int64_t>(pipelines.size())) {
      error = Error{"the simulation ran a run the plan cannot place: " + s.run_id};
      return;
    }
    if (s.state != RuntimeState::kSucceeded) {
      error = Error{fmt::format("{} failed in the simulation ({}): a plan holds runs that succeed",
                                s.run_id, s.error)};
      return;
    }
    auto run = PlanRun(s, *pipelines[static_cast<size_t>(*index)], default_task);
    if (!run.ok()) {
      error = run.error();
      return;
    }
    run->arrival_seconds = ToSeconds(schedule->Due(*index));
    plan.runs[static_cast<size_t>(*index)] = std::move(*run);
  };
  // The steps' own times come from a simulation whose controller acts at
  // once (a requeue time would stretch a task's end); they are the same
  // draws in both, keyed by run and task, not by when tasks ran.
  ClusterSpec at_once = cluster;
  at_once.requeue_time = Duration::zero();
  auto simulated = Simulate(at_once, workload, options);
  if (!simulated.ok()) return simulated.error();
  if (!error.ok()) return error.error();
  if (result != nullptr) {
    if (cluster.requeue_time > Duration::zero()) {
      auto with_requeue = Simulate(cluster, workload);
      if (!with_requeue.ok()) return with_requeue.error();
      simulated = std::move(with_requeue);
    }
    *result = std::move(*simulated);
  }
  return plan;
}

nlohmann::json ToJson(const WorkloadPlan& plan) {
  nlohmann::json runs = nlohmann::json::array();
  for (const auto& r : plan.runs) {
    nlohmann::json tasks = nlohmann::json::array();
    for (const auto& t : r.tasks) {
      nlohmann::json j{{"id", t.id},
                       {"parent", t.parent},
                       {"name", t.name},
                       {"kind", t.container ? "container" : "dag"},
                       {"dependencies", t.dependencies}};
      if (t.container) {
        j["seconds"] = t.seconds;
        j["cpu_millis"] = t.cpu_millis;
        j["memory_bytes"] = t.memory_bytes;
        j["label"] = t.label;
      }
      tasks.push_back(std::move(j));
    }
    runs.push_back({{"name", r.name}, {"arrival_seconds", r.arrival_seconds}, {"tasks", tasks}});
  }
  return {{"format", kWorkloadPlanFormat}, {"runs", runs}};
}

Result<WorkloadPlan> ParseWorkloadPlan(std::string_view text) {
  auto doc = ParseJsonText(text);
  if (!doc.ok()) return Error{"workload plan: " + doc.error().message};
  if (!doc->is_object()) return Error{"workload plan: not a JSON object"};
  WorkloadPlan plan;
  JsonReader r = JsonReader::Plain(*doc, "plan");
  std::string format;
  r.Require("format");
  r.String("format", format);
  if (r.ok() && format != kWorkloadPlanFormat) {
    r.Fail("format", fmt::format("'{}', expected '{}'", format, kWorkloadPlanFormat));
  }
  r.Require("runs");
  r.Array("runs", [&](JsonReader& rr) {
    PlannedRun& run = plan.runs.emplace_back();
    rr.Require("name");
    rr.String("name", run.name);
    rr.Number("arrival_seconds", run.arrival_seconds);
    if (rr.ok() && !(run.arrival_seconds >= 0 && run.arrival_seconds <= 1e9)) {
      rr.Fail("arrival_seconds", "must be from 0 to 1e9");
    }
    std::map<int, bool> dags;  // id -> is a DAG, of the tasks read so far
    rr.Array("tasks", [&](JsonReader& tr) {
      PlannedTask& t = run.tasks.emplace_back();
      std::string kind;
      for (const char* f : {"id", "name", "kind"}) tr.Require(f);
      tr.Number("id", t.id);
      tr.Number("parent", t.parent);
      tr.String("name", t.name);
      tr.String("kind", kind);
      tr.StringList("dependencies", t.dependencies);
      tr.Number("seconds", t.seconds);
      tr.Number("cpu_millis", t.cpu_millis);
      tr.Number("memory_bytes", t.memory_bytes);
      tr.String("label", t.label);
      if (!tr.ok()) return;
      if (kind != "container" && kind != "dag") return tr.Fail("kind", "must be container or dag");
      t.container = kind == "container";
      if (t.id < 0 || dags.contains(t.id)) return tr.Fail("id", "must be unique and at least 0");
      if (t.parent != -1 && !(dags.contains(t.parent) && dags[t.parent])) {
        return tr.Fail("parent", "must be -1 or a DAG task listed before it");
      }
      if (t.name.empty()) return tr.Fail("name", "must not be empty");
      if (t.container &&
          (!(t.seconds >= 0 && t.seconds <= 1e9) || t.cpu_millis <= 0 || t.memory_bytes <= 0)) {
        return tr.Refuse("a container needs seconds >= 0 and positive cpu_millis, memory_bytes");
      }
      dags[t.id] = !t.container;
    });
  });
  if (Status st = r.Finish(); !st.ok()) return Error{"workload plan: " + st.error().message};
  if (plan.runs.empty()) return Error{"workload plan: no runs"};
  return plan;
}

}  // namespace kfpbench::sim
