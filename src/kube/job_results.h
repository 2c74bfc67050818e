// Results of a job sweep: one row per run, as a Kubebench-style CSV and as
// job_results.json (a name of its own: results.json is the benchmark's file,
// of another shape, and `kfpbench report` must not mistake one for the other).
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "kube/job_config.h"
#include "util/result.h"

namespace kfpbench::kube {

struct JobRunResult {
  std::string job_name;
  int index = 0;
  Params params;  // the user's parameters (no built-ins)
  bool succeeded = false;
  std::string error;  // why it failed, with the failing replica's log tail
  double duration_seconds = 0;
  std::map<std::string, std::optional<double>> metrics;
};

struct JobSweepResult {
  std::string config_name;
  std::string kind;
  std::string driver;
  std::vector<JobRunResult> runs;
  // The parameters the sweep sets (sorted): the report charts each metric
  // against each of them.
  std::vector<std::string> swept = {};
};

// Parameters as they appear in a result: defaults and sweep values, without
// the built-ins (job_name, namespace, config_dir).
Params UserParams(const Params& params);

// Header: config,run,job_name,status,duration_s,<params...>,<metrics...>;
// a metric no replica logged is an empty cell.
std::string ToCsv(const JobSweepResult& result);
nlohmann::json ToJson(const JobSweepResult& result);

// The files WriteJobResults puts in a sweep's --out folder.
inline constexpr std::string_view kJobResultsCsv = "results.csv";
inline constexpr std::string_view kJobResultsJson = "job_results.json";

// Writes ToCsv to `dir`/results.csv and {"jobs": ToJson} to
// `dir`/job_results.json, creating `dir`. Each goes through a temporary file,
// so a full disk or Ctrl-C never leaves half a file; an error names the file.
Status WriteJobResults(const JobSweepResult& result, const std::filesystem::path& dir);

}  // namespace kfpbench::kube
