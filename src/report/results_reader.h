// Reads results.json (docs/RESULTS.md) back into BenchmarkResults, so results
// can be merged, compared and re-reported without re-running anything.
#pragma once

#include <filesystem>

#include <nlohmann/json.hpp>

#include "harness/results.h"
#include "util/result.h"

namespace kfpbench::report {

// The inverse of ResultsToJson. Derived fields (summaries, throughput, run
// duration histograms) are recomputed from the stored histograms and records,
// so they are not read. Errors name the JSON path: "operations.GetRun.histogram: ...".
Result<harness::BenchmarkResults> ResultsFromJson(const nlohmann::json& j);

// `path` is a results folder (its results.json is read) or a results.json file.
Result<harness::BenchmarkResults> LoadResults(const std::filesystem::path& path);

}  // namespace kfpbench::report
