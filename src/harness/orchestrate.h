// The orchestrator pattern of the KFP scalability guide: one run per row of a
// scenario table, the row's columns as the run's parameters, runs started at
// a fixed concurrency or at a rate, followed to the end and recorded like any
// other benchmark (results.json, report). Works against the embedded backend
// and a real cluster alike, through kfp::Client.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/orchestrate_csv.h"
#include "harness/runner.h"
#include "ir/pipeline_spec.h"
#include "kfp/client.h"
#include "metrics/recorder.h"
#include "results/results.h"
#include "util/result.h"

namespace kfpbench::harness {

struct OrchestrateRow {
  size_t line = 0;  // in the CSV, for messages
  // From an `offset` column the pipeline does not declare as an input: when
  // the run starts, after the first ("30s", "1m", or bare seconds). The same
  // CSV drives the simulator's `arrivals: csv`.
  std::optional<Duration> offset;
  nlohmann::json parameters = nlohmann::json::object();  // typed
};

// Types every cell by the pipeline's root inputs (an `offset` column, unless
// the pipeline declares one, schedules the row instead). Errors name the file, the
// row's line and the column: "runs.csv: line 4, column 'epochs': expected an
// integer (NUMBER_INTEGER), got 'three'".
Result<std::vector<OrchestrateRow>> TypeRows(const CsvTable& table, const ir::PipelineSpec& spec,
                                             const std::string& csv_name);

// "30" (runs per minute), "30/m", "0.5/s", "120/h" -> runs per minute.
Result<double> ParseRate(const std::string& text);

// An ORCHESTRATE scenario: {"mode": "ORCHESTRATE", "csv": "runs.csv",
// "pipelineFileName": "p.yaml" (or "pipeline": a name on the server),
// "experiment": "...", "concurrency": 4 or "rate": 30}. `kfpbench
// orchestrate` writes one for its flags.
struct OrchestratePlan : ModeData {
  std::filesystem::path csv_path;
  CsvTable table;
  std::vector<OrchestrateRow> rows;  // typed once the pipeline's inputs are known
  // Either a file to upload (removed afterwards unless --keep) or the id of
  // a pipeline already on the server.
  std::filesystem::path pipeline_file;
  std::string pipeline_id;
  std::string pipeline_version_id;
  std::string pipeline_label;             // as the user named it, for the report
  std::string experiment_name;            // found by name, or created (and then removed)
  int concurrency = 4;                    // closed loop: runs in flight
  std::optional<double> rate_per_minute;  // open loop instead
  // Rows carry offsets: each starts at its own (open loop).
  bool Scheduled() const { return !rows.empty() && rows.front().offset.has_value(); }
};

// The pipeline named by `--pipeline`: a file when one exists at `name` (parsed
// here, uploaded by the ORCHESTRATE runner), else a pipeline on the server found by
// name (its latest version's spec). Fills the plan's pipeline fields.
Result<ir::PipelineSpec> ResolvePipeline(kfp::Client& client, const std::string& name,
                                         OrchestratePlan& plan);

}  // namespace kfpbench::harness
