#include "engine/run_state.h"

namespace kfpbench::engine::detail {

const nlohmann::json& ObjectOr(const nlohmann::json& map) {
  static const nlohmann::json kEmpty = nlohmann::json::object();
  return map.is_null() ? kEmpty : map;
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
    plan.executors.push_back(comp != nullptr && !comp->is_dag()
                                 ? run.spec->FindExecutor(comp->executor_label)
                                 : nullptr);
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

}  // namespace kfpbench::engine::detail
