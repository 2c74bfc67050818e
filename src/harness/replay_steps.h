// A replay's stub steps: the object form's "replay" key, which `kfpbench
// capture` writes into replay.json so that a captured day replays on the
// embedded backend with the step times and failure rates it recorded.
//
//   "replay": {"stubDurations": ["exec-train=lognormal:118034us:0.2010"],
//              "stubFailures": ["exec-flaky=0.27"]}
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/runner.h"
#include "harness/scenario.h"
#include "server/backend.h"
#include "util/json_reader.h"
#include "util/result.h"

namespace kfpbench::harness {

// Types the "replay" object into `file`, each duration multiplied by
// `time_scale` (--time-scale shortens the steps with the offsets). Errors name
// the JSON path.
void ReadReplaySteps(JsonReader& replay, double time_scale, ScenarioFile& file);
Status ReadReplaySteps(const nlohmann::json& replay, double time_scale, ScenarioFile& file);

// A duration distribution ("[LABEL=]lognormal:100ms:0.2", "constant:1s", ...)
// with its times multiplied by `scale`; the shape (sigma) is kept.
Result<std::string> ScaleStubDuration(const std::string& spec, double scale);

// A replay's observer budget sized for its rate: --observer-qps raised to
// twice what following runs at the capture's peak (replay.peakRunsPerSecond,
// over --time-scale) costs, when it is lower. Returns the new budget, or 0
// when it was left as it was.
double SizeObserverBudget(const ScenarioFile& file, HarnessOptions& options);

// The file's replay steps become the embedded backend's where the command
// line named none: --stub-duration and --stub-failure given win whole.
void ApplyReplaySteps(const ScenarioFile& file, server::BackendOptions& backend);

}  // namespace kfpbench::harness
