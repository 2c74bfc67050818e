// Step profiles from a results.json of a real cluster run, whose tasks carry
// per-step resource figures (from Prometheus: container CPU and working-set
// memory of each task's pod). Accepted per task (any one form per resource;
// see docs/CAPACITY.md):
//   "resources": {"cpu_cores": {"peak": 1.2, "p95": 0.9},
//                 "memory_bytes": {"peak": 5.1e8, "p95": 4.8e8}}
//   "cpu_cores_samples": [..], "memory_bytes_samples": [..]
//   "cpu_cores_peak", "cpu_cores_p95", "memory_bytes_peak", "memory_bytes_p95"
//   "cpu_seconds" (averaged over the task's duration: peak = p95 = average)
//   "peak_rss_bytes" or "memory_peak_bytes" (peak; p95 taken equal)
#pragma once

#include <filesystem>

#include <nlohmann/json.hpp>

#include "ir/pipeline_spec.h"
#include "plan/profile.h"
#include "results/results.h"
#include "util/result.h"

namespace kfpbench::plan {

// Executions of every succeeded non-DAG task of the succeeded runs that
// carries resource figures; `labels` (task name -> executor label) may be
// empty. An Error when no task carries any, naming the fields looked for.
Result<std::vector<StepExecution>> ExecutionsFromResults(
    const std::vector<results::RunRecord>& runs, const std::map<std::string, std::string>& labels);

// Puts each execution's figures on its task (matched by run id and task
// name), so that `--from-results` reads back what the embedded profile measured.
void AnnotateResults(std::vector<results::RunRecord>& runs,
                     const std::vector<StepExecution>& executions);

// RESULTS_DIR/results.json or a results.json path; errors name the file.
Result<ProfileReport> ProfileFromResultsFile(const std::filesystem::path& path,
                                             const ir::PipelineSpec* pipeline,
                                             const ProfileOptions& options);

}  // namespace kfpbench::plan
