// RANDOM_GETS: read calls in closed or open loop, either perf-tests' chain of
// gets or a weighted `mix` of them, drawn one call at a time.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "harness/scenario.h"

namespace kfpbench::harness {

// The calls a `mix` may weight, by the names results use.
inline constexpr std::string_view kRandomGetsOperations[] = {
    "ListPipelines", "ListPipelineVersions", "ListExperiments",
    "ListRuns",      "GetPipeline",          "GetRun"};

// A RANDOM_GETS scenario's `mix` (Scenario::mode_data): operation name ->
// weight, as written. No mix, no data: the runner sends the chain.
struct RandomGetsMix : ModeData {
  std::vector<std::pair<std::string, double>> weights;
};

}  // namespace kfpbench::harness
