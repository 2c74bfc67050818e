#include "engine/run_state.h"

#include <charconv>

namespace kfpbench::engine::detail {

const nlohmann::json& ObjectOr(const nlohmann::json& map) {
  static const nlohmann::json kEmpty = nlohmann::json::object();
  return map.is_null() ? kEmpty : map;
}

namespace {
const std::string kEmptyText;
const ArtifactMap kNoArtifacts;
const nlohmann::json kNull;
}  // namespace

TaskRare& TaskExec::Rare() {
  if (!rare) rare = std::make_unique<TaskRare>();
  return *rare;
}
nlohmann::json& TaskExec::Params() {
  if (!values) values = std::make_unique<TaskValues>();
  return values->params;
}
nlohmann::json& TaskExec::Outputs() {
  if (!values) values = std::make_unique<TaskValues>();
  return values->outputs;
}
const nlohmann::json& TaskExec::params() const { return values ? values->params : kNull; }
const nlohmann::json& TaskExec::outputs() const { return values ? values->outputs : kNull; }
const std::string& TaskExec::error() const { return rare ? rare->error : kEmptyText; }
const ArtifactMap& TaskExec::out_artifacts() const {
  return rare ? rare->out_artifacts : kNoArtifacts;
}
const ArtifactMap& TaskExec::in_artifacts() const {
  return rare ? rare->in_artifacts : kNoArtifacts;
}
const std::string& TaskExec::fingerprint() const { return rare ? rare->fingerprint : kEmptyText; }

const nlohmann::json& DagExec::Inputs() const {
  static const nlohmann::json kNone;
  return ObjectOr(inputs ? *inputs : kNone);
}

const DagPlan& PlanFor(Run& run, const ir::ComponentSpec& comp) {
  if (!run.plans) run.plans = std::make_shared<std::unordered_map<const ir::DagSpec*, DagPlan>>();
  auto [it, inserted] = run.plans->try_emplace(comp.dag.get());
  DagPlan& plan = it->second;
  if (!inserted) return plan;
  const ir::DagSpec& dag = *comp.dag;
  for (const auto& name : dag.topo_order) {
    plan.index[name] = static_cast<int>(plan.tasks.size());
    const ir::TaskSpec& t = dag.tasks.at(name);
    plan.tasks.push_back(&t);
    const ir::ComponentSpec* comp = run.spec->FindComponent(t.component_ref);
    plan.components.push_back(comp);
    const ir::ExecutorSpec* exec =
        comp != nullptr && !comp->is_dag() ? run.spec->FindExecutor(comp->executor_label) : nullptr;
    plan.executors.push_back(exec);
    plan.runs_in_driver.push_back(exec != nullptr && exec->runs_in_driver());
  }
  size_t n = plan.tasks.size();
  plan.upstream.resize(n);
  plan.downstream.resize(n);
  plan.conditions.resize(n);
  plan.selectors.resize(n);
  for (size_t i = 0; i < n; ++i) {
    const ir::TaskSpec& t = *plan.tasks[i];
    for (const auto& up : t.upstream) {
      int u = plan.index.at(up);
      plan.upstream[i].push_back(u);
      plan.downstream[u].push_back(static_cast<int>(i));
    }
    // The parser already checked that these parse.
    if (!t.condition.empty()) {
      if (auto c = ir::ParseCel(t.condition); c.ok()) plan.conditions[i] = *c;
    }
    for (const auto& [pname, b] : t.parameters) {
      if (b.expression_selector.empty()) continue;
      if (auto c = ir::ParseCel(b.expression_selector); c.ok()) plan.selectors[i][pname] = *c;
    }
  }
  return plan;
}

namespace {

std::string ShortId(uint64_t n) {
  // "t" and up to 14 digits fit std::string's inline buffer: no allocation.
  char text[24] = {'t'};
  char* end = std::to_chars(text + 1, text + sizeof text, n).ptr;
  return std::string(text, end);
}

}  // namespace

uint32_t LaunchCounts::Count(const ir::ExecutorSpec* exec) {
  for (size_t i = 0; i < kInline; ++i) {
    if (exec_[i] == exec) return launches_[i]++;
    if (exec_[i] == nullptr) {
      exec_[i] = exec;
      launches_[i] = 1;
      return 0;
    }
  }
  if (!more_) more_ = std::make_unique<std::vector<std::pair<const ir::ExecutorSpec*, uint32_t>>>();
  for (auto& [counted, launches] : *more_) {
    if (counted == exec) return launches++;
  }
  more_->emplace_back(exec, 1);
  return 0;
}

std::string TaskId(const Run& run, int record) {
  const auto i = static_cast<size_t>(record);
  return i < run.details.size() ? run.details[i].task_id : ShortId(run.records[i].short_id);
}

std::vector<TaskRecord> TaskRecords(Run& run, bool take) {
  const size_t n = run.records.size();
  std::vector<TaskRecord> out;
  if (run.details.size() == n) {
    if (take) {
      out = std::move(run.details);
    } else {
      out = run.details;
    }
  } else {
    out.resize(n);
    for (size_t i = 0; i < n; ++i) {
      const TaskState& rec = run.records[i];
      TaskRecord& r = out[i];
      r.task_id = ShortId(rec.short_id);
      r.name = *rec.name;
      r.display_name = *rec.display_name;
      r.executor_label = *rec.executor_label;
      if (rec.parent >= 0) {
        TaskRecord& parent = out[static_cast<size_t>(rec.parent)];
        r.parent_task_id = parent.task_id;
        parent.child_task_ids.push_back(r.task_id);
      }
    }
  }
  for (size_t i = 0; i < n; ++i) {
    const TaskState& rec = run.records[i];
    TaskRecord& r = out[i];
    r.state = rec.state;
    r.create_time = rec.create_time;
    r.start_time = rec.start_time;
    r.end_time = rec.end_time;
    r.scheduling_delay = rec.scheduling_delay;
  }
  return out;
}

}  // namespace kfpbench::engine::detail
