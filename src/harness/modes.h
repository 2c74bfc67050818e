// Scenario modes as data, as MLPerf LoadGen keeps its scenarios: each mode is
// a ModeSpec (its name, the scenario fields only it reads, the checks it
// makes when the file is read, and its runner) defined beside its runner, and
// registered on one line of the table in modes.cc. Adding a mode is one file
// plus that line; the reader, `validate`, the preflight and the harness find
// it there.
#pragma once

#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/runner.h"
#include "harness/scenario.h"
#include "kfp/client.h"
#include "util/json_reader.h"
#include "util/result.h"

namespace kfpbench::harness {

struct ModeSpec {
  std::string_view name;
  std::vector<std::string_view> aliases = {};  // other names files use for it
  bool needs_pipeline = false;                 // pipelineFileName is required and must be found
  // Starts runs of its pipeline with the scenario's params: the preflight
  // checks them against the pipeline's inputs.
  bool starts_runs = false;
  // Shapes its runner drives beyond those every mode takes (harness/shapes.h):
  // "stress" (open-loop steps of rising rate), "growth" (levels of runs stored).
  std::vector<std::string_view> shapes = {};
  bool needs_run_time = true;  // false: the mode knows how much load it sends
  // Scenario keys only this mode reads, each with what it does there, for
  // the message when another mode is given it: "[0].mix: only RANDOM_GETS
  // draws a mix".
  struct Field {
    std::string_view name;
    std::string_view does;
  };
  std::vector<Field> fields = {};
  // Reads this mode's own fields of the scenario (`entry`, whose common
  // fields are read into `scenario`) and checks what only this mode
  // requires; problems go to `entry`, named by field ("[2].mix: ...").
  // `file` is the scenario file, for the files it names.
  void (*read)(JsonReader& entry, const std::filesystem::path& file, Scenario& scenario) = nullptr;
  // Once the session is open and before any load: resolves what only the
  // target knows (a pipeline named on the server). An Error is bad input.
  Status (*prepare)(Scenario& scenario, kfp::Client& client) = nullptr;
  std::unique_ptr<ModeRunner> (*make_runner)() = nullptr;
};

// Every registered mode, in the order `kfpbench validate` lists them.
std::span<const ModeSpec* const> Modes();
// The mode of that name or alias; null when none.
const ModeSpec* FindMode(std::string_view name);
// "PIPELINE_RUN, EXPERIMENT, ..." for messages.
std::string ModeList();
// Runs every mode's prepare step on the scenarios of `file`.
Status PrepareScenarios(ScenarioFile& file, kfp::Client& client);

// The modes, one declaration each (defined beside their runners).
const ModeSpec& PipelineRunMode();
const ModeSpec& ExperimentMode();
const ModeSpec& LargeDatasetMode();
const ModeSpec& RandomGetsMode();
const ModeSpec& PipelineUploadMode();
const ModeSpec& ScheduledRunsMode();
const ModeSpec& OrchestrateMode();

}  // namespace kfpbench::harness
