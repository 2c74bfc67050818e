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

MixPicker::MixPicker(const std::vector<MixEntry>& mix) : mix_(mix), credit_(mix.size(), 0.0) {
  for (const auto& e : mix) total_ += e.share;
}

const MixEntry& MixPicker::Next() {
  size_t best = 0;
  for (size_t i = 0; i < mix_.size(); ++i) {
    credit_[i] += mix_[i].share;
    if (credit_[i] > credit_[best]) best = i;
  }
  credit_[best] -= total_;
  return mix_[best];
}

}  // namespace kfpbench::sim
