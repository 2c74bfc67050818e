#include "harness/modes.h"

namespace kfpbench::harness {

std::span<const ModeSpec* const> Modes() {
  static const ModeSpec* const kModes[] = {
      &PipelineRunMode(),   &ExperimentMode(),   &RandomGetsMode(),  &PipelineUploadMode(),
      &ScheduledRunsMode(), &LargeDatasetMode(), &OrchestrateMode(),
  };
  return kModes;
}

const ModeSpec* FindMode(std::string_view name) {
  for (const ModeSpec* mode : Modes()) {
    if (mode->name == name) return mode;
    for (auto alias : mode->aliases) {
      if (alias == name) return mode;
    }
  }
  return nullptr;
}

std::string ModeList() {
  std::string out;
  for (const ModeSpec* mode : Modes()) {
    out += (out.empty() ? "" : ", ") + std::string(mode->name);
    for (auto alias : mode->aliases) out += ", " + std::string(alias);
  }
  return out;
}

Status PrepareScenarios(ScenarioFile& file, kfp::Client& client) {
  for (auto& scenario : file.scenarios) {
    if (scenario.mode->prepare == nullptr) continue;
    if (Status s = scenario.mode->prepare(scenario, client); !s.ok()) return s;
  }
  return Ok();
}

}  // namespace kfpbench::harness
