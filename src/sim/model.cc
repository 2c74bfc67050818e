#include "sim/model.h"

#include <set>

namespace kfpbench::sim {

std::vector<std::string> ConditionalTasks(const ir::PipelineSpec& spec) {
  std::set<std::string> names;
  auto scan = [&](const ir::ComponentSpec& comp) {
    if (!comp.dag) return;
    for (const auto& [name, task] : comp.dag->tasks) {
      if (!task.condition.empty()) names.insert(name);
    }
  };
  scan(spec.root);
  for (const auto& [name, comp] : spec.components) scan(comp);
  return {names.begin(), names.end()};
}

}  // namespace kfpbench::sim
