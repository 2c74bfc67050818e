// Every report a run or `kfpbench report` asks for, in one call.
#pragma once

#include <filesystem>

#include <nlohmann/json.hpp>

#include "results/results.h"
#include "util/result.h"

namespace kfpbench::report {

struct ReportOptions {
  std::filesystem::path html;      // report.html; empty: none
  std::filesystem::path csv_dir;   // operations.csv, runs.csv, tasks.csv; empty: none
  std::filesystem::path junit;     // JUnit XML; empty: none
  std::filesystem::path markdown;  // Markdown summary; empty: none
  nlohmann::json thresholds;       // null: the scenario file's (scenario.source.thresholds)
};

// What `run` writes beside results.json by default: DIR/report.html.
ReportOptions DefaultReportOptions(const std::filesystem::path& results_dir);

// Writes every report asked for; one failing does not stop the others. The
// error lists every report that could not be written.
Status WriteReports(const results::BenchmarkResults& results, const ReportOptions& options);

}  // namespace kfpbench::report
