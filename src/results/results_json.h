// results.json (docs/RESULTS.md): its one writer and its one reader. Every
// part that keeps or reads results (run, merge, compare, history, calibrate,
// profile --from-results) goes through these, so the file has one schema.
#pragma once

#include <filesystem>

#include <nlohmann/json.hpp>

#include <vector>

#include "results/results.h"
#include "util/result.h"

namespace kfpbench::results {

// results.json, schema version BenchmarkResults::kSchemaVersion.
nlohmann::json ResultsToJson(const BenchmarkResults& results);
// A histogram's summary as results.json writes it: count, min, mean, p50,
// p90, p95, p99, p999, max.
nlohmann::json SummaryJson(const metrics::Histogram& h);
// Written to a temporary file and renamed, so a full disk or a crash never
// leaves a truncated results.json behind.
Status WriteResults(const std::filesystem::path& path, const BenchmarkResults& results);

// The inverse of ResultsToJson. Derived fields (summaries, throughput, run
// duration histograms) are recomputed from the stored histograms and records,
// so they are not read. Errors name the JSON path: "operations.GetRun.histogram: ...".
Result<BenchmarkResults> ResultsFromJson(const nlohmann::json& j);

// `path` is a results folder (its results.json is read) or a results.json file.
Result<BenchmarkResults> LoadResults(const std::filesystem::path& path);
// Each of `paths` by LoadResults, in order; the first that cannot be read is
// the error.
Result<std::vector<BenchmarkResults>> LoadAll(const std::vector<std::string>& paths);

// The run records alone, from a results.json or from a file that holds only
// {"runs": [...]} (figures assembled by hand from a cluster): what
// `calibrate` and `profile --from-results` read. Errors name the JSON path.
Result<std::vector<RunRecord>> RunRecordsFromJson(const nlohmann::json& j);
Result<std::vector<RunRecord>> LoadRunRecords(const std::filesystem::path& path);

// The "repetitions" array of results.json, and back.
nlohmann::json RepetitionsToJson(const std::vector<RepetitionSummary>& repetitions);
Result<std::vector<RepetitionSummary>> RepetitionsFromJson(const nlohmann::json& j);

}  // namespace kfpbench::results
